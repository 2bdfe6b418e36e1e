/**
 * The restore drill of docs/operations.md ("Backing up and restoring"), on a devnet (its own unless given): the merchant
 * ledger, the facilitator's ledger and the analytics store are backed up with the guide's commands, lost,
 * restored with the guide's commands, and the payments made before the loss are sent again.
 *
 *   npx tsx scripts/restore-drill.ts                        # state on PGlite, in a temporary data directory
 *   npx tsx scripts/restore-drill.ts --postgres ADMIN_URL   # state on that server, in a scratch database
 *
 * It runs, in one process, what the systemd units run (the composition root: a facilitator, the utility API
 * and the report service), and:
 *
 * 1. buys `/api/calc` (settled: payment A) and `/api/search` against a search backend that fails (not
 *    charged, the authorization kept as `failed`: payment F), keeping each PAYMENT-SIGNATURE header;
 * 2. backs up (PostgreSQL: `pg_dump` while the services run), stops them, backs up the data directory;
 * 3. starts again and buys `/api/calc` once more (payment B, settled after the backup), then stops;
 * 4. loses everything (the data directory deleted; the scratch database dropped) and restores it;
 * 5. runs `x402-merchants check` on the restored analytics store and reads the restored ledgers;
 * 6. starts again and sends A, B and F again: none is delivered, the payee's balance does not move and
 *    the failing backend is not called again; then a fresh payment is served.
 *
 * It never touches anything but its own temporary directory, its devnet and, with `--postgres`, the
 * database it creates (`x402m_drill_<random>`, dropped at the end). The user of ADMIN_URL needs CREATEDB.
 * Exit 0 when every expectation held, 1 (naming each that did not) otherwise.
 */
import { execFile } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { decodePaymentRequiredHeader, decodePaymentSignatureHeader } from "@x402/core/http";
import { wrapFetchWithPayment } from "@x402/fetch";
import { type Devnet, devnetChain, startDevnet } from "../src/chain/devnet/index.ts";
import { openDatabase } from "../src/common/db/index.ts";
import { Lifecycle } from "../src/common/lifecycle.ts";
import { dataLayout } from "../src/config/layout.ts";
import { loadConfig } from "../src/services/config.ts";
import { startServices } from "../src/services/start.ts";
import { startMiner } from "../test/helpers/chain.ts";
import { isolatedDatabaseOptions } from "../test/helpers/db.ts";
import { newMerchant, recordingFetch, usdcReader, x402ClientFor } from "../test/helpers/x402.ts";

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/**
 * The guide's commands, run by `sh` with BACKUP (the backup's directory), X402M_DATA and DATABASE_URL set.
 * docs/operations.md gives each of them word for word (test/operations/restore-drill.test.ts holds it to that).
 */
export const GUIDE_COMMANDS = {
  /** The data directory while nothing runs on it: the analytics store, and the PGlite directories. */
  backupData: `tar --create --gzip --file="$BACKUP/data.tar.gz" --directory="$X402M_DATA" --exclude=./tmp --exclude=./report-service.json --exclude=./postgres.lock --exclude=./facilitator-postgres.lock .`,
  /** Into an empty data directory. */
  restoreData: `tar --extract --gzip --file="$BACKUP/data.tar.gz" --directory="$X402M_DATA"`,
  /** The PostgreSQL state, while the services run: one consistent snapshot. */
  backupDatabase: `pg_dump --format=custom --file="$BACKUP/state.dump" "$DATABASE_URL"`,
  /** Into an empty database. */
  restoreDatabase: `pg_restore --exit-on-error --no-owner --dbname="$DATABASE_URL" "$BACKUP/state.dump"`,
} as const;

/** How the merchant host answered a request: its status and the error it named (body or PAYMENT-REQUIRED). */
export interface Answer {
  status: number;
  error: string | null;
}

/** A ledger row's state for each payment (null: no row). */
export type Rows = Record<"A" | "B" | "F", string | null>;

export interface DrillResult {
  kind: "pglite" | "postgres";
  /** Before the backup: A bought, F refused by its backend, and each sent again. */
  before: { paid: Answer; failed: Answer; replayPaid: Answer; replayFailed: Answer };
  /** After the backup, before the loss: B bought. */
  afterBackup: { paid: Answer };
  /** The restored state, read before the services start again. */
  restored: { check: { code: number; verdict: string }; merchantRows: Rows; facilitatorRows: Rows };
  /** After the restore: A, B and F sent again, then a fresh payment. */
  replays: Record<"A" | "B" | "F", Answer>;
  fresh: Answer;
  /** What the payee holds (atomic USDC) before and after the replays, and after the fresh payment. */
  payee: { beforeReplays: bigint; afterReplays: bigint; afterFresh: bigint };
  /** Calls the failing search backend received: before the loss, and at the end. */
  backendCalls: { beforeLoss: number; atEnd: number };
  /** Seconds each part took. */
  seconds: { total: number; backup: number; restore: number };
}

export interface DrillOptions {
  /** A PostgreSQL server's URL whose user may create databases: the state goes to a scratch one there. */
  postgres?: string;
  /** Progress, a line per step. */
  log?: (line: string) => void;
  /** The services' log level (X402M_LOG_LEVEL); unset: the configuration's default. */
  logLevel?: string;
  /**
   * A devnet to run on, left running, instead of one of its own: a caller that runs the drill on each kind
   * of state starts anvil and installs the contracts once. Its first buyer pays, a new merchant each drill.
   */
  devnet?: Devnet;
  /**
   * Runs an `x402-merchants` command line (here `check`) to its end. Default: `bin/x402-merchants` as a
   * child process, as the operator runs it; a test passes the CLI's `main` run in its own process, which
   * has DuckDB and the modules loaded already (a child loads both again: 2-3 CPU-s).
   */
  runCli?: (argv: readonly string[]) => Promise<CliOutcome>;
}

/** How a command line ended: its exit code and what it wrote. */
export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** The price of /api/calc, in atomic USDC. */
const CALC_PRICE = 1000n;

export async function restoreDrill(options: DrillOptions = {}): Promise<DrillResult> {
  const log = options.log ?? (() => undefined);
  const kind = options.postgres ? "postgres" : "pglite";
  const started = Date.now();
  const cleanups: (() => Promise<void> | void)[] = [];
  try {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-restore-drill-"));
    cleanups.push(() => fs.rmSync(work, { recursive: true, force: true }));
    const backupDir = path.join(work, "backup");
    fs.mkdirSync(backupDir);
    // A data directory of its own; on PGlite, with both clusters made already (an initdb takes seconds).
    const dataDir =
      kind === "pglite" ? (await isolatedDatabaseOptions("pglite")).dataDir : path.join(work, "data");
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));

    const devnet = options.devnet ?? (await startDevnet({ port: 0, buyers: 1, blockTime: 0 }));
    if (!options.devnet) cleanups.push(() => devnet.stop());
    const miner = startMiner(devnet);
    cleanups.push(() => miner.stop());
    const backend = await failingBackend();
    cleanups.push(() => backend.close());

    const database = options.postgres ? await scratchDatabase(options.postgres) : null;
    if (database) cleanups.push(() => database.drop());
    log(`state on ${kind}: ${database ? database.name : dataDir}`);

    const payTo = newMerchant();
    const buyer = devnet.buyers[0] as Devnet["buyers"][0];
    const env = {
      X402M_DATA: dataDir,
      DATABASE_URL: database?.url ?? "",
      PORT: "0",
      X402M_FACILITATOR_PORT: "0",
      X402M_METRICS_PORT: "off",
      X402M_UTILITY_PAY_TO: payTo,
      X402M_UTILITY_PORT: "0",
      X402M_RPC_URL: devnet.rpc,
      X402M_SEARCH_BACKEND: "searxng",
      X402M_SEARCH_URL: backend.url,
      ...(options.logLevel ? { X402M_LOG_LEVEL: options.logLevel } : {}),
    };
    const shell = (command: string) =>
      run("sh", ["-c", command], {
        env: {
          PATH: process.env.PATH,
          BACKUP: backupDir,
          X402M_DATA: dataDir,
          DATABASE_URL: database?.url ?? "",
        },
      });
    const start = () => startDrillServices(env, devnet);
    const recorder = recordingFetch();
    const pay = wrapFetchWithPayment(recorder.fetch, x402ClientFor(buyer, "exact"));
    const lastSignature = () => recorder.signatures.at(-1) as string;
    const usdc = usdcReader(devnet.rpc);

    // 1. Payments before the backup.
    let services = await start();
    const calc = (tag: string) => `${services.url}/api/calc?expr=${encodeURIComponent(`${tag}+1`)}`;
    const search = () => `${services.url}/api/search`;
    const searchInit = () => ({
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "restore drill" }),
    });
    const paid = await answerOf(await pay(calc("1")));
    const headerA = lastSignature();
    const failed = await answerOf(await pay(search(), searchInit()));
    const headerF = lastSignature();
    const replayPaid = await answerOf(await fetch(calc("1"), { headers: { "PAYMENT-SIGNATURE": headerA } }));
    const replayFailed = await answerOf(await fetch(search(), withPayment(searchInit(), headerF)));
    log(
      `before the backup: A ${paid.status}, F ${failed.status}; sent again: A ${replayPaid.status}, F ${replayFailed.status}`,
    );

    // 2. Back up: PostgreSQL while running, then the data directory once stopped.
    const backupStarted = Date.now();
    if (database) await shell(GUIDE_COMMANDS.backupDatabase);
    await services.stop();
    refuseLocks(dataDir);
    await shell(GUIDE_COMMANDS.backupData);
    const backupSeconds = (Date.now() - backupStarted) / 1000;
    log(`backed up in ${backupSeconds} s: ${fs.readdirSync(backupDir).join(", ")}`);

    // 3. A payment after the backup.
    services = await start();
    const afterBackup = await answerOf(await pay(calc("2")));
    const headerB = lastSignature();
    await services.stop();
    const backendCallsBeforeLoss = backend.calls();
    log(`after the backup: B ${afterBackup.status}`);

    // 4. Lose everything, and restore it.
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (database) await database.drop();
    const restoreStarted = Date.now();
    fs.mkdirSync(dataDir);
    await shell(GUIDE_COMMANDS.restoreData);
    if (database) {
      await database.create();
      await shell(GUIDE_COMMANDS.restoreDatabase);
    }
    const restoreSeconds = (Date.now() - restoreStarted) / 1000;
    log(`lost and restored in ${restoreSeconds} s`);

    // 5. The restored state, as the services will find it.
    const check = await checkStore(dataDir, options.runCli ?? childCli);
    const keys = { A: keyOf(headerA), B: keyOf(headerB), F: keyOf(headerF) };
    const merchantRows = await rowsOf(env, "merchants", keys);
    const facilitatorRows = await rowsOf(env, "facilitator", keys);
    log(
      `check: ${check.verdict}; merchant ledger ${JSON.stringify(merchantRows)}; facilitator ledger ${JSON.stringify(facilitatorRows)}`,
    );

    // 6. Every payment sent again, then a fresh one.
    services = await start();
    const payeeBefore = await usdc.balanceOf(payTo);
    const replays = {
      A: await answerOf(await fetch(calc("1"), { headers: { "PAYMENT-SIGNATURE": headerA } })),
      B: await answerOf(await fetch(calc("2"), { headers: { "PAYMENT-SIGNATURE": headerB } })),
      F: await answerOf(await fetch(search(), withPayment(searchInit(), headerF))),
    };
    // A settlement is mined before its request is answered; nothing may wait in the pool either.
    while ((await miner.pending()) > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    const payeeAfter = await usdc.balanceOf(payTo);
    const fresh = await answerOf(await pay(calc("3")));
    const payeeAfterFresh = await usdc.balanceOf(payTo);
    await services.stop();
    log(
      `after the restore, sent again: A ${replays.A.status}, B ${replays.B.status}, F ${replays.F.status}; fresh ${fresh.status}`,
    );

    return {
      kind,
      before: { paid, failed, replayPaid, replayFailed },
      afterBackup: { paid: afterBackup },
      restored: { check, merchantRows, facilitatorRows },
      replays,
      fresh,
      payee: { beforeReplays: payeeBefore, afterReplays: payeeAfter, afterFresh: payeeAfterFresh },
      backendCalls: { beforeLoss: backendCallsBeforeLoss, atEnd: backend.calls() },
      seconds: { total: (Date.now() - started) / 1000, backup: backupSeconds, restore: restoreSeconds },
    };
  } finally {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        log(`cleaning up: ${(error as Error).message}`);
      }
    }
  }
}

/** What the drill must find; each problem as a sentence. Empty: the restore kept every payment from a second delivery. */
export function problems(result: DrillResult): string[] {
  const found: string[] = [];
  const expect = (ok: boolean, what: string) => {
    if (!ok) found.push(what);
  };
  const is = (a: Answer, status: number, error: string | null) => a.status === status && a.error === error;
  const USED = "invalid_exact_evm_nonce_already_used";
  expect(
    is(result.before.paid, 200, null),
    `payment A was not served: ${JSON.stringify(result.before.paid)}`,
  );
  expect(
    result.before.failed.status === 502,
    `payment F was not refused by its failing backend: ${JSON.stringify(result.before.failed)}`,
  );
  expect(
    is(result.afterBackup.paid, 200, null),
    `payment B was not served: ${JSON.stringify(result.afterBackup.paid)}`,
  );
  expect(
    result.restored.check.code === 0,
    `check found the restored analytics store not whole: ${result.restored.check.verdict}`,
  );
  expect(
    result.restored.merchantRows.A === "settled" &&
      result.restored.merchantRows.F === "failed" &&
      result.restored.merchantRows.B === null,
    `the merchant ledger was not restored as backed up (A settled, F failed, no B): ${JSON.stringify(result.restored.merchantRows)}`,
  );
  expect(
    result.restored.facilitatorRows.A === "settled" && result.restored.facilitatorRows.B === null,
    `the facilitator ledger was not restored as backed up (A settled, no B): ${JSON.stringify(result.restored.facilitatorRows)}`,
  );
  for (const [name, answer] of Object.entries({ A: result.replays.A, B: result.replays.B })) {
    expect(
      is(answer, 402, USED),
      `payment ${name}, settled, was not refused as used when sent again: ${JSON.stringify(answer)}`,
    );
  }
  expect(
    is(result.replays.F, 409, "payment_in_use"),
    `payment F, kept as failed, was not refused as in use: ${JSON.stringify(result.replays.F)}`,
  );
  expect(
    result.payee.beforeReplays === 2n * CALC_PRICE &&
      result.payee.afterReplays === result.payee.beforeReplays,
    `the payee's balance moved: ${result.payee.beforeReplays} before the replays, ${result.payee.afterReplays} after`,
  );
  expect(
    result.backendCalls.atEnd === result.backendCalls.beforeLoss,
    "the failing backend was called again for payment F",
  );
  expect(
    is(result.fresh, 200, null) && result.payee.afterFresh === 3n * CALC_PRICE,
    "a fresh payment was not served after the restore",
  );
  return found;
}

/** The services the systemd units run, in this process: a facilitator, the utility API, the reports. */
async function startDrillServices(env: Record<string, string>, devnet: Devnet) {
  const lifecycle = new Lifecycle();
  try {
    const services = await startServices({
      config: loadConfig({ env }),
      lifecycle,
      facilitator: {
        rpc: devnet.rpc,
        chain: devnetChain(devnet.rpc),
        privateKey: devnet.facilitatorAccount.privateKey,
        pollingIntervalMs: 20,
      },
      merchants: ["utility"],
      reports: {},
    });
    return { url: services.urls.utility as string, stop: () => lifecycle.close() };
  } catch (error) {
    await lifecycle.close();
    throw error;
  }
}

/** The status, and the error named by the body (`error.code`) or, for a 402 or 409, by PAYMENT-REQUIRED. */
async function answerOf(response: Response): Promise<Answer> {
  const text = await response.text();
  const required = response.headers.get("PAYMENT-REQUIRED");
  let error: string | null = null;
  if (required) error = decodePaymentRequiredHeader(required).error ?? null;
  if (error === null && response.status >= 400) {
    try {
      error = (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? null;
    } catch {}
  }
  return { status: response.status, error };
}

function withPayment(init: RequestInit, header: string): RequestInit {
  return { ...init, headers: { ...(init.headers as Record<string, string>), "PAYMENT-SIGNATURE": header } };
}

/** The payer and nonce of a PAYMENT-SIGNATURE header's EIP-3009 authorization, lower-case. */
function keyOf(header: string): { payer: string; nonce: string } {
  const { authorization } = decodePaymentSignatureHeader(header).payload as {
    authorization: { from: string; nonce: string };
  };
  return { payer: authorization.from.toLowerCase(), nonce: authorization.nonce.toLowerCase() };
}

/** Each payment's row state in the merchant ledger or the facilitator's, read from the restored state. */
async function rowsOf(
  env: Record<string, string>,
  which: "merchants" | "facilitator",
  keys: Record<keyof Rows, { payer: string; nonce: string }>,
): Promise<Rows> {
  const db = await openDatabase({
    pgliteDir: dataLayout(env.X402M_DATA as string).pglite[which],
    databaseUrl: env.DATABASE_URL || null,
  });
  try {
    const table = which === "merchants" ? "merchant_payments" : "facilitator_authorizations";
    const rows: Partial<Rows> = {};
    for (const [name, key] of Object.entries(keys) as [keyof Rows, { payer: string; nonce: string }][]) {
      const { rows: found } = await db.query<{ state: string }>(
        `SELECT state FROM ${table} WHERE lower(payer) = $1 AND lower(nonce) = $2`,
        [key.payer, key.nonce],
      );
      rows[name] = found[0]?.state ?? null;
    }
    return rows as Rows;
  } finally {
    await db.close();
  }
}

/** `x402-merchants check` on the restored data directory: its exit code and its last line. */
async function checkStore(
  dataDir: string,
  runCli: (argv: readonly string[]) => Promise<CliOutcome>,
): Promise<{ code: number; verdict: string }> {
  const { code, stdout, stderr } = await runCli(["check", "--data", dataDir]);
  const text = code === 0 ? stdout : `${stdout}${stderr}`;
  return { code, verdict: text.trim().split("\n").at(-1) ?? "" };
}

/** `bin/x402-merchants argv` in a child process, to its end. */
function childCli(argv: readonly string[]): Promise<CliOutcome> {
  const bin = path.join(ROOT, "bin", "x402-merchants");
  return run(process.execPath, [bin, ...argv]).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: typeof error.code === "number" ? error.code : 1,
      stdout: error.stdout ?? "",
      stderr: error.stderr ?? "",
    }),
  );
}

/** A backup must not hold a PGlite directory a process still had open: the services did not stop. */
function refuseLocks(dataDir: string): void {
  const locks = fs.readdirSync(dataDir).filter((name) => name.endsWith(".lock"));
  if (locks.length > 0)
    throw new Error(`the services left ${locks.join(", ")} in ${dataDir}: they did not stop cleanly`);
}

/** A search backend that is down: every request gets a 500, and is counted. */
async function failingBackend() {
  let calls = 0;
  const server = http.createServer((_request, response) => {
    calls++;
    response.writeHead(500, { "content-type": "text/plain" }).end("down");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls: () => calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A database of the drill's own on the server at `adminUrl`: created now, dropped (and re-created) on demand. */
async function scratchDatabase(adminUrl: string) {
  const name = `x402m_drill_${crypto.randomBytes(6).toString("hex")}`;
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const create = () => run("createdb", [`--maintenance-db=${adminUrl}`, name]).then(() => undefined);
  await create();
  return {
    name,
    url: url.toString(),
    create,
    drop: () =>
      run("dropdb", [`--maintenance-db=${adminUrl}`, "--if-exists", "--force", name]).then(() => undefined),
  };
}

async function main(argv: string[]): Promise<number> {
  const at = argv.indexOf("--postgres");
  const postgres = at >= 0 ? argv[at + 1] : undefined;
  if ((at >= 0 && !postgres) || argv.length !== (at >= 0 ? 2 : 0)) {
    process.stderr.write("usage: npx tsx scripts/restore-drill.ts [--postgres ADMIN_URL]\n");
    return 2;
  }
  const result = await restoreDrill({
    postgres,
    log: (line) => process.stderr.write(`restore drill: ${line}\n`),
    // The services' request lines would bury the drill's own; X402M_LOG_LEVEL=info shows them.
    logLevel: process.env.X402M_LOG_LEVEL || "warn",
  });
  const found = problems(result);
  for (const problem of found) process.stderr.write(`restore drill: FAILED: ${problem}\n`);
  process.stdout.write(
    `${JSON.stringify({ ok: found.length === 0, ...result }, (_key, value) => (typeof value === "bigint" ? value.toString() : value))}\n`,
  );
  return found.length === 0 ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`restore drill: ${(error as Error).message}\n`);
      process.exit(1);
    },
  );
}
