/**
 * The facilitator's access control from the command line: `facilitator keys add|list|revoke` on the
 * facilitator's own database, the refusal to start an open facilitator beyond loopback, the signing key
 * from a file, and a stock `HTTPFacilitatorClient` paying through the command's facilitator with a key.
 * `keys` ends on its own and runs in this process (runMain: a child process would open PGlite anew, 2
 * CPU-s each), and so do the refusals of a bad signing key (decided before anything starts); the facilitator
 * serves until signalled and runs as a process, and so does its refusal beyond loopback (its exit code) on one
 * kind of database, the others' in this process. A process costs 5-6 CPU-s to start: the open one and the one
 * with its key from a file are one process the two tests read, and the starts whose database decides nothing
 * keep their state where the tests keep a ledger (a server's schema in CI, not a PGlite to open).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { HTTPFacilitatorClient } from "@x402/core/server";
import { VerifyError } from "@x402/core/types";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { type Devnet, startDevnet } from "../../src/chain/devnet/index.ts";
import { startMiner } from "../helpers/chain.ts";
import {
  DATABASE_KINDS,
  isolatedDatabaseOptions,
  LEDGER_KIND,
  type TestDatabaseOptions,
} from "../helpers/db.ts";
import { runMain } from "../helpers/in-process.ts";
import { sharedCli, startCli } from "../helpers/process.ts";
import { newMerchant, pay, requirementsFor, usdcReader } from "../helpers/x402.ts";

let devnet: Devnet;
beforeAll(async () => {
  devnet = await startDevnet({ port: 0, buyers: 1, blockTime: 0 });
}, 60_000);
afterAll(async () => {
  await devnet?.stop();
});

/**
 * A data directory, and a database where the tests keep a ledger: for a facilitator whose database decides
 * nothing a test checks. Removed after the file.
 */
const states: TestDatabaseOptions[] = [];
async function apart(): Promise<TestDatabaseOptions> {
  const state = await isolatedDatabaseOptions(LEDGER_KIND);
  states.push(state);
  return state;
}
afterAll(async () => {
  await Promise.all(states.map((state) => state.cleanup()));
});

/** The signing key in a file, as an operator keeps it (leading blanks and a newline around it). */
const keyDir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-key-"));
const keyFile = path.join(keyDir, "key");
afterAll(() => fs.rmSync(keyDir, { recursive: true, force: true }));

function facilitatorEnv(state: TestDatabaseOptions): Record<string, string> {
  return {
    X402M_FACILITATOR_KEY: devnet.facilitatorAccount.privateKey,
    // The settlement's receipt asked for at the miner's pace (20 ms), not every 500 ms.
    X402M_FACILITATOR_POLL_MS: "20",
    ...(state.databaseUrl ? { DATABASE_URL: state.databaseUrl } : {}),
  };
}
const facilitatorArgs = (state: TestDatabaseOptions) => [
  "--rpc",
  devnet.rpc,
  "--port",
  "0",
  "--data",
  state.dataDir,
];

/**
 * Open beyond loopback with --open, its signing key from X402M_FACILITATOR_KEY_FILE: what two tests read
 * (its ready line and stderr) of one process. Stopped by SIGTERM after the file, with exit 0.
 */
let openState: TestDatabaseOptions;
const openFromFile = sharedCli(
  () => ["facilitator", ...facilitatorArgs(openState), "--host", "0.0.0.0", "--open"],
  () => ({ ...facilitatorEnv(openState), X402M_FACILITATOR_KEY: "", X402M_FACILITATOR_KEY_FILE: keyFile }),
);
beforeAll(async () => {
  fs.writeFileSync(keyFile, `  ${devnet.facilitatorAccount.privateKey}\n`, { mode: 0o600 });
  openState = await apart();
});
afterAll(async () => {
  if (openFromFile.started) expect(await openFromFile.stop()).toBe(0);
});

describe.each(DATABASE_KINDS)("facilitator keys and access (database: %s)", (kind) => {
  let db: TestDatabaseOptions;
  beforeAll(async () => {
    db = await isolatedDatabaseOptions(kind);
  });
  afterAll(async () => {
    await db?.cleanup();
  });
  const env = () => facilitatorEnv(db);
  const keys = (...args: string[]) =>
    runMain(["facilitator", "keys", ...args, "--data", db.dataDir], { DATABASE_URL: db.databaseUrl ?? "" });
  const args = () => facilitatorArgs(db);
  const start = (more: string[], extra: Record<string, string> = {}) =>
    startCli(["facilitator", ...args(), ...more], { ...env(), ...extra });

  // What does not depend on the database runs once.
  const once = kind === DATABASE_KINDS[0];

  it.runIf(once)(
    "refuses keys without payees, budget or a sound rate, naming what is missing",
    async () => {
      const payee = newMerchant();
      const cases = [
        [["add", "--gas-budget-eth-per-day", "0.01"], /--payee ADDR .* or --any-payee/],
        [["add", "--payee", "*", "--gas-budget-eth-per-day", "0.01"], /--any-payee, said on purpose/],
        [
          ["add", "--payee", "0x1234", "--gas-budget-eth-per-day", "0.01"],
          /--payee must be a wallet address/,
        ],
        [["add", "--payee", payee], /--gas-budget-eth-per-day N, in ETH/],
        [["add", "--payee", payee, "--gas-budget-eth-per-day", "0"], /ETH above 0/],
        [["add", "--payee", payee, "--gas-budget-eth-per-day", "1", "--rate", "0"], /--rate takes/],
        [
          ["add", "--payee", payee, "--gas-budget-eth-per-day", "1", "--chain-gas-budget", "celo=1"],
          /--chain-gas-budget takes CHAIN=N with CHAIN one of base, polygon, arbitrum/,
        ],
        [
          ["add", "--payee", payee, "--gas-budget-eth-per-day", "1", "--chain-gas-budget", "polygon=0"],
          /--chain-gas-budget polygon= takes POL above 0/,
        ],
        [["add", "--payee", payee, "--any-payee", "--gas-budget-eth-per-day", "1"], /not both/],
        [["revoke"], /one key id/],
        [["nope"], /usage: x402-merchants facilitator keys add/],
      ] as const;
      // Refused before the database is opened.
      const runs = await Promise.all(cases.map(([args]) => keys(...args)));
      cases.forEach(([, message], i) => {
        const run = runs[i] as Awaited<ReturnType<typeof keys>>;
        expect(run.code, run.stderr).toBe(2);
        expect(run.stderr).toMatch(message);
        expect(run.stderr.trim().split("\n")).toHaveLength(1);
      });
    },
    120_000,
  );

  // Decided on the keys its database holds (none here). On the last kind a process, for the exit code and
  // stderr a process ends with (PostgreSQL's in CI: the server's schema, cheaper to open than PGlite's
  // WebAssembly in a new process); on the others in this process, where main returns the code it exits with.
  const asProcess = kind === DATABASE_KINDS.at(-1);
  it("refuses to listen beyond loopback open, with one line and exit 2", async () => {
    let code: number | null;
    let stderr: string;
    if (asProcess) {
      const refused = start(["--host", "0.0.0.0"]);
      code = await refused.exited;
      stderr = refused.stderr();
    } else {
      ({ code, stderr } = await runMain(["facilitator", ...args(), "--host", "0.0.0.0"], env()));
    }
    expect(code).toBe(2);
    const lines = stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^x402-merchants: refusing to run an open facilitator on 0\.0\.0\.0: .*X402M_FACILITATOR_PAYEES.*keys add.*--open/,
    );
  }, 180_000);

  // --open and an allow-list decide without the database (its keys are read, none, as by the refusal above):
  // each on a state apart, the shared open one stopped after the file (exit 0).
  it.runIf(once)(
    "listens beyond loopback open with --open, and closed with an allow-list",
    async () => {
      const open = openFromFile.get();
      const ready = JSON.parse(await open.line) as Record<string, unknown>;
      expect(ready.access).toEqual({ open: true, payees: 0, keys: 0 });
      expect(open.stderr()).toMatch(/open facilitator beyond loopback/);

      // An allow-list closes it: it starts, and serves those payees only.
      const state = await apart();
      const listed = startCli(["facilitator", ...facilitatorArgs(state), "--host", "0.0.0.0"], {
        ...facilitatorEnv(state),
        X402M_FACILITATOR_PAYEES: `${newMerchant()}, ${newMerchant()}`,
      });
      expect(JSON.parse(await listed.line)).toMatchObject({ access: { open: false, payees: 2, keys: 0 } });
      listed.child.kill("SIGTERM");
      expect(await listed.exited).toBe(0);
    },
    180_000,
  );

  it("issues a key once, lists it without the key, settles with it through a stock client, and revokes it", async () => {
    // Mines the settlement below; nothing else in the file sends a transaction.
    const miner = startMiner(devnet);
    onTestFinished(() => miner.stop());
    const payee = newMerchant();
    const added = await keys(
      "add",
      "--payee",
      payee,
      "--gas-budget-eth-per-day",
      "0.005",
      "--chain-gas-budget",
      "polygon=20",
      "--rate",
      "30",
      "--name",
      "partner",
    );
    expect(added.code, added.stderr).toBe(0);
    const issued = JSON.parse(added.stdout) as Record<string, unknown> & { id: string; key: string };
    expect(issued).toMatchObject({
      id: expect.stringMatching(/^k_[0-9a-f]{12}$/),
      key: expect.stringMatching(/^x402m_/),
      name: "partner",
      payees: [payee.toLowerCase()],
      gasBudgetEthPerDay: "0.005",
      chainGasBudgetsPerDay: { "eip155:137": "20" },
      ratePerMinute: 30,
      revokedAt: null,
    });
    expect(added.stderr).toMatch(/shown this once/);

    const anyone = await keys("add", "--any-payee", "--gas-budget-eth-per-day", "0.001");
    expect(JSON.parse(anyone.stdout)).toMatchObject({ payees: "*", ratePerMinute: 60 });

    // Listening beyond loopback with keys in its database: closed, not refused.
    const facilitator = start(["--host", "0.0.0.0"]);
    const ready = JSON.parse(await facilitator.line) as { facilitator: string; access: unknown };
    expect(ready.access).toEqual({ open: false, payees: 0, keys: 2 });
    const url = ready.facilitator.replace("0.0.0.0", "127.0.0.1");

    const requirements = requirementsFor(payee, "1500");
    const payment = await pay(devnet.buyers[0] as Devnet["buyers"][0], requirements);
    const refused = await new HTTPFacilitatorClient({ url }).verify(payment, requirements).catch((e) => e);
    expect(refused).toBeInstanceOf(VerifyError);
    expect(refused).toMatchObject({ statusCode: 401, invalidReason: "payee_not_allowed" });

    const auth = { Authorization: `Bearer ${issued.key}` };
    const client = new HTTPFacilitatorClient({
      url,
      createAuthHeaders: async () => ({ verify: auth, settle: auth, supported: {} }),
    });
    expect(await client.verify(payment, requirements)).toMatchObject({ isValid: true });
    expect(await client.settle(payment, requirements)).toMatchObject({ success: true });
    expect(await usdcReader(devnet.rpc).balanceOf(payee)).toBe(1500n);
    facilitator.child.kill("SIGTERM");
    expect(await facilitator.exited).toBe(0);
    // Never a key in its output: neither the API key nor the signing key.
    expect(facilitator.stderr()).not.toContain(issued.key);
    expect(facilitator.stderr()).not.toContain(devnet.facilitatorAccount.privateKey.slice(2));

    const listed = await keys("list");
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).not.toContain(issued.key);
    const rows = listed.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    const mine = rows.find((r) => r.id === issued.id);
    expect(mine).toMatchObject({ name: "partner", payees: [payee.toLowerCase()], revokedAt: null });
    expect(mine).not.toHaveProperty("key");
    expect(mine.today).toMatchObject({ reservedEth: "0", settlements: 1 });
    // Counted on the devnet's chain (Base's id), apart from any other chain's day.
    expect(Object.keys(mine.today.chains)).toEqual(["eip155:8453"]);
    expect(Number(mine.today.spentEth)).toBeGreaterThan(0);

    const revoked = await keys("revoke", issued.id);
    expect(JSON.parse(revoked.stdout)).toEqual({ id: issued.id, revoked: true, already: false });
    expect((await keys("revoke", "k_000000000000")).code).toBe(2);
    const after = (await keys("list")).stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(after.find((r) => r.id === issued.id)?.revokedAt).toEqual(expect.any(String));
  }, 240_000);

  it.runIf(once)(
    "reads its signing key from X402M_FACILITATOR_KEY_FILE, and refuses both set or a bad file without echoing it",
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-key-"));
      onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
      const file = keyFile;

      // The shared open process reads its key from the file (stopped after the file, exit 0).
      const fromFile = openFromFile.get();
      expect(JSON.parse(await fromFile.line)).toMatchObject({ signer: devnet.facilitatorAccount.address });

      // Refused while reading the configuration, before the chain, the database or a signal handler: in
      // this process (a process's exit code and stderr for a refusal are the loopback refusal's above).
      const refuse = (extra: Record<string, string>) =>
        runMain(["facilitator", ...args()], { ...env(), ...extra });
      const both = await refuse({ X402M_FACILITATOR_KEY_FILE: file });
      expect(both.code).toBe(2);
      expect(both.stderr).toMatch(
        /both X402M_FACILITATOR_KEY and X402M_FACILITATOR_KEY_FILE are set: pick one/,
      );

      const bad = path.join(dir, "bad");
      fs.writeFileSync(bad, "0xnot-a-key-but-secret");
      const wrong = await refuse({ X402M_FACILITATOR_KEY: "", X402M_FACILITATOR_KEY_FILE: bad });
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toMatch(/X402M_FACILITATOR_KEY_FILE/);
      expect(wrong.stderr).not.toContain("not-a-key-but-secret");

      const missing = await refuse({
        X402M_FACILITATOR_KEY: "",
        X402M_FACILITATOR_KEY_FILE: path.join(dir, "none"),
      });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/cannot read .*none \(ENOENT\)/);
    },
    180_000,
  );
});
