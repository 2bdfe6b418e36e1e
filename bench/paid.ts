/**
 * Paid-request benchmark (`npm run bench:paid [-- --concurrency N --seconds N ...]`): the project's payment
 * path against the stock x402 stack, in one run on one devnet (issues 20 and 41).
 *
 * Each stack runs in a process of its own (`bench/paid-stack.ts`): a merchant selling `/api/calc` at
 * $0.001 and the facilitator it settles through. `project` is the platform's merchant app (payment ledger,
 * replay locks) and the project's facilitator, its state on each store of `--db` (PGlite inside the
 * process; PostgreSQL, its backends outside) and its merchant-to-facilitator hop each of `--hop` (over
 * HTTP; in process): by default every combination, each a process of its own. `stock` is `@x402/hono`'s
 * middleware with `@x402/core`'s `x402Facilitator`, `@x402/evm`'s exact scheme and a viem wallet signer, as
 * the x402 documentation builds them (no state of its own: no database work). The buyers run in this process
 * and the chain in anvil's. For each stack, in turn (`--rounds` times, alternating):
 *
 * 1. **Plain**: the same validation and handler with no payment layer, one request at a time.
 * 2. **Verify only**: the stack's middleware with the real verify and a settle answered at once, nothing on
 *    chain, payments signed beforehand (`PAYMENT-SIGNATURE`). Added latency = its p50 minus plain's.
 * 3. **Paid**: one buyer per worker with `@x402/fetch` (402, sign, pay, verify, handler, settle on chain,
 *    receipt). The server side's cost per paid request is counted whole: the stack's process (merchant and
 *    facilitator, and PGlite when it is the store), the PostgreSQL backends it opened (matched by client
 *    port, bench/cpu.ts) and the PostgreSQL server's own processes (WAL writer, checkpointer: they also serve
 *    this machine's other users, so they are shown apart and counted for every stack alike). Not counted:
 *    anvil (the chain) and this process (the buyers), printed apart. Each project stack's cost is then a
 *    ratio to the stock stack's. Afterwards every payment is checked on chain: each merchant's balance must
 *    be exactly paid x price, with one Transfer log per payment.
 *
 * The devnet mines when transactions wait (`--miner pending`, polled every `--mine-ms`) or every tick
 * (`--miner interval`); never automine. Block timestamps follow the wall clock
 * (`anvil_removeBlockTimestampInterval`), so authorizations (valid for 300 s) do not expire at tens of
 * blocks a second.
 *
 * Flags: --concurrency N (16), --seconds N (paid phase, 10), --serial N (verify-only and plain requests one
 * at a time, 200), --rounds N (1), --mine-ms N (5), --miner pending|interval, --poll-ms N (both stacks'
 * receipt polling, 10), --hop http,inprocess (the project's hops, both by default; the stock stack is always
 * over HTTP), --db pglite,postgres (the project's stores: both when DATABASE_URL is set, else PGlite). With
 * BENCH_CPU_PROF=DIR set, each stack's process writes a V8 CPU profile there when it stops.
 */
import { spawn } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { x402Client } from "@x402/core/client";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { createTestClient, http, pad } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { BASE_USDC } from "../src/chain/base.ts";
import { type Devnet, devnetChain, startDevnet } from "../src/chain/devnet/index.ts";
import { TRANSFER_TOPIC } from "../src/indexer/decode.ts";
import { openTestDatabase } from "../test/helpers/db.ts";
import { rpc } from "../test/helpers/settle.ts";
import { NETWORK, usdcReader } from "../test/helpers/x402.ts";
import { meterCpu, processCpuMs } from "./cpu.ts";
import type { StackOptions, StackUrls } from "./paid-stack.ts";

/** Issue 20: the project's server-side CPU per paid request at most half the stock stack's. */
const GOAL_CPU_RATIO = 0.5;
/** Issue 20: what verify adds to a request's p50, one request at a time. */
const GOAL_ADDED_P50_MS = 2;
const PRICE_ATOMIC = 1000n; // calc's $0.001
const EXPRESSION = "2^200 + 1/7";

type Hop = StackOptions["hop"];
type Store = StackOptions["db"];

function parseFlags(argv: string[]) {
  const flags = {
    concurrency: 16,
    seconds: 10,
    serial: 200,
    rounds: 1,
    "mine-ms": 5,
    miner: "pending" as "pending" | "interval",
    "poll-ms": 10,
    hop: ["http", "inprocess"] as Hop[],
    db: (process.env.DATABASE_URL ? ["pglite", "postgres"] : ["pglite"]) as Store[],
  };
  const choices: Record<string, string[]> = {
    miner: ["pending", "interval"],
    hop: ["http", "inprocess"],
    db: ["pglite", "postgres"],
  };
  for (let i = 0; i < argv.length; i++) {
    const key = (argv[i] ?? "").replace(/^--/, "") as keyof typeof flags;
    const raw = String(argv[++i]);
    if (!(key in flags)) throw new Error(`unknown flag ${argv[i - 1]}: use ${Object.keys(flags).join(", ")}`);
    const allowed = choices[key];
    if (key === "hop" || key === "db") {
      const list = [...new Set(raw.split(","))];
      if (!list.every((x) => allowed?.includes(x)))
        throw new Error(`--${key} is a list of ${allowed?.join(", ")}`);
      (flags as Record<string, unknown>)[key] = list;
    } else if (allowed) {
      if (!allowed.includes(raw)) throw new Error(`--${key} is one of ${allowed.join(", ")}`);
      (flags as Record<string, unknown>)[key] = raw;
    } else {
      const value = Number(raw);
      if (!Number.isSafeInteger(value) || value < 1) throw new Error(`bad value for --${key}: ${raw}`);
      (flags as Record<string, unknown>)[key] = value;
    }
  }
  if (flags.db.includes("postgres") && !process.env.DATABASE_URL) {
    throw new Error("--db postgres needs DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test)");
  }
  return flags;
}

const flags = parseFlags(process.argv.slice(2));
const log = (message: string) => process.stderr.write(`${message}\n`);
// The SDK logs every settlement's extension outcome to stdout, where only the final JSON line belongs.
const consoleLog = console.log;
console.log = (...args: unknown[]) => {
  if (!String(args[0]).startsWith("[x402]")) consoleLog(...args);
};

interface Load {
  requests: number;
  ok: number;
  failures: Map<string, number>;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/**
 * `concurrency` workers each calling `request(worker)` back to back until `seconds` have passed or `total`
 * requests have started. Every request is timed; req/s counts successful ones over the phase's wall time.
 */
async function load(
  concurrency: number,
  limit: { seconds?: number; total?: number },
  request: (worker: number, n: number) => Promise<string | null>,
): Promise<Load> {
  const latencies: number[] = [];
  const failures = new Map<string, number>();
  let started = 0;
  const begin = performance.now();
  const deadline = limit.seconds === undefined ? Number.POSITIVE_INFINITY : begin + limit.seconds * 1000;
  const total = limit.total ?? Number.POSITIVE_INFINITY;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (performance.now() < deadline && started < total) {
        const n = started++;
        const t0 = performance.now();
        let failure: string | null;
        try {
          failure = await request(worker, n);
        } catch (error) {
          failure = String((error as Error)?.message ?? error).slice(0, 120);
        }
        if (failure === null) latencies.push(performance.now() - t0);
        else failures.set(failure, (failures.get(failure) ?? 0) + 1);
      }
    }),
  );
  const seconds = (performance.now() - begin) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: started,
    ok: latencies.length,
    failures,
    seconds,
    rps: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

const url = (base: string) => `${base}/api/calc?expr=${encodeURIComponent(EXPRESSION)}`;

/** A 200 with calc's answer, else why not. */
async function expectCalc(response: Response): Promise<string | null> {
  const body = await response.text();
  if (response.status !== 200) return `status ${response.status}: ${body.slice(0, 80)}`;
  return body.includes('"result"') ? null : `unexpected body ${body.slice(0, 80)}`;
}

/** Mines when transactions wait (`pending`), or every tick (`interval`); counts the blocks it made. */
function startBenchMiner(devnet: Devnet, mode: "pending" | "interval", tickMs: number) {
  const test = createTestClient({
    chain: devnetChain(devnet.rpc),
    mode: "anvil",
    transport: http(devnet.rpc),
  });
  let stopped = false;
  let blocks = 0;
  const loop = (async () => {
    while (!stopped) {
      await new Promise((resolve) => setTimeout(resolve, tickMs));
      try {
        if (mode === "interval" || (await test.getTxpoolStatus()).pending > 0) {
          await test.mine({ blocks: 1 });
          blocks++;
        }
      } catch {
        // anvil is stopping.
      }
    }
  })();
  return {
    get blocks() {
      return blocks;
    },
    pending: async () => (await test.getTxpoolStatus()).pending,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

function summary(name: string, l: Load) {
  const fails = [...l.failures].map(([why, n]) => `${n}x ${why}`).join("; ");
  log(
    `${name.padEnd(30)} ${l.rps.toFixed(1).padStart(8)} req/s  p50 ${l.p50.toFixed(2).padStart(7)} ms  p99 ${l.p99
      .toFixed(2)
      .padStart(
        7,
      )} ms  (${l.ok}/${l.requests} ok in ${l.seconds.toFixed(1)} s${fails ? `; failed: ${fails}` : ""})`,
  );
}

const closers: (() => Promise<unknown>)[] = [];

/** One stack as measured: the project on one store and hop, or the stock stack. */
interface Variant {
  /** "project, postgres, http", "stock". */
  name: string;
  stack: Stack;
  db: Store;
  hop: Hop;
}

async function main() {
  const load1 = os.loadavg().map((x) => x.toFixed(2));
  log(
    `bench:paid on ${os.cpus()[0]?.model} x${os.cpus().length}, Node ${process.version}, load average ${load1.join(" ")}`,
  );
  log(
    `concurrency ${flags.concurrency}, paid phase ${flags.seconds} s, ${flags.rounds} round(s), miner ${flags.miner} every ${flags["mine-ms"]} ms, project hops ${flags.hop.join(", ")}, project stores ${flags.db.join(", ")}`,
  );
  log(
    "server side counted whole: each stack's process (merchant, facilitator, PGlite), its PostgreSQL backends and the PostgreSQL server's own processes; not counted: anvil (the chain) and the buyers (this process), shown apart",
  );
  const variants: Variant[] = [
    ...flags.db.flatMap((db) =>
      flags.hop.map((hop) => ({ name: `project, ${db}, ${hop}`, stack: "project" as const, db, hop })),
    ),
    // The stock stack keeps no state: its process opens a store for the plain app's services and never uses it.
    { name: "stock", stack: "stock", db: "pglite", hop: "http" },
  ];

  // --- the chain -------------------------------------------------------------------------------------
  const devnet = await startDevnet({ port: 0, buyers: flags.concurrency, blockTime: 0 });
  closers.push(() => devnet.stop());
  await rpc(devnet.rpc, "anvil_removeBlockTimestampInterval", []);
  const miner = startBenchMiner(devnet, flags.miner, flags["mine-ms"]);
  closers.push(() => miner.stop());

  const stacks = new Map<string, Running>();
  for (const variant of variants) {
    // Each stack's facilitator signs from a key of its own (gas only), so their nonces never meet.
    const key = generatePrivateKey();
    await rpc(devnet.rpc, "anvil_setBalance", [privateKeyToAccount(key).address, "0x56bc75e2d63100000"]);
    const running = await startStack({
      stack: variant.stack,
      rpc: devnet.rpc,
      facilitatorKey: key,
      payTo: privateKeyToAccount(generatePrivateKey()).address,
      verifyPayTo: privateKeyToAccount(generatePrivateKey()).address,
      pollMs: flags["poll-ms"],
      db: variant.db,
      hop: variant.hop,
    });
    closers.push(() => running.stop());
    stacks.set(variant.name, running);
  }

  const buyers = devnet.buyers.map((b) => privateKeyToAccount(b.privateKey));
  const signers = buyers.map((account) => new x402Client().register(NETWORK, new ExactEvmClient(account)));
  const payingFetch = signers.map((client) => wrapFetchWithPayment(fetch, client));

  const results: StackResult[] = [];
  for (let round = 0; round < flags.rounds; round++) {
    for (const variant of variants) {
      log(`\n--- ${variant.name}${flags.rounds > 1 ? `, round ${round + 1}` : ""}`);
      results.push(
        await measure(variant, stacks.get(variant.name) as Running, { devnet, miner, signers, payingFetch }),
      );
    }
  }

  const floors: Record<string, Awaited<ReturnType<typeof verifyFloor>>> = {};
  for (const db of flags.db) floors[db] = await verifyFloor(devnet, db);

  // --- figures ---------------------------------------------------------------------------------------
  const mean = (name: string, pick: (r: StackResult) => number) => {
    const of = results.filter((r) => r.name === name).map(pick);
    return of.reduce((a, b) => a + b, 0) / of.length;
  };
  const whole = (r: StackResult) => r.cpuMsPerPaid.whole;
  const processOnly = (r: StackResult) => r.cpuMsPerPaid.process;
  const added = (r: StackResult) => r.addedP50Ms;
  const met = (ok: boolean) => (ok ? "met" : "MISSED");
  log("");
  log(
    "| stack | paid req/s | whole server side per paid (ms) | its process | its PostgreSQL backends | PostgreSQL server's own | connections (most, opened) | anvil | buyers | verify-only added p50 (ms) | plain p50 | commits per paid | on chain |",
  );
  log("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
  for (const r of results) {
    const c = r.cpuMsPerPaid;
    log(
      `| ${r.name} | ${r.paid.rps} | **${c.whole}** | ${c.process} | ${c.backends} | ${c.postgresServer} | ${r.connections.most}, ${r.connections.opened} | ${c.anvil} | ${c.buyers} | ${r.addedP50Ms} | ${r.plainSerial.p50Ms} | ${r.ledger.commitsPerPaid} | ${r.settledOnChain ? "all settled" : "MISMATCH"} |`,
    );
  }
  log("");
  const ratios: Record<string, { whole: number; process: number }> = {};
  for (const variant of variants.filter((v) => v.stack === "project")) {
    ratios[variant.name] = {
      whole: round(mean(variant.name, whole) / mean("stock", whole)),
      process: round(mean(variant.name, processOnly) / mean("stock", processOnly)),
    };
    const r = ratios[variant.name] as { whole: number; process: number };
    log(
      `server side per paid request, ${variant.name.padEnd(26)} / stock   ${r.whole.toFixed(2)}x counted whole (its process alone ${r.process.toFixed(2)}x)   goal <= ${GOAL_CPU_RATIO}x: ${met(r.whole <= GOAL_CPU_RATIO)}`,
    );
  }
  for (const variant of variants) {
    log(
      `verify-only added p50, ${variant.name.padEnd(26)} ${mean(variant.name, added).toFixed(2)} ms   goal <= ${GOAL_ADDED_P50_MS} ms: ${met(mean(variant.name, added) <= GOAL_ADDED_P50_MS)}`,
    );
  }
  for (const [db, floor] of Object.entries(floors)) {
    log(
      `verify's floor here on ${db}: one JSON-RPC eth_call p50 ${floor.rpcP50Ms} ms, one commit p50 ${floor.commitP50Ms} ms; the project's verify reads the chain once and commits ${VERIFY_COMMITS} times: at least ${floor.projectMs} ms over plain`,
    );
  }
  consoleLog(
    JSON.stringify({
      bench: "paid",
      date: new Date().toISOString(),
      machine: os.cpus()[0]?.model,
      cores: os.cpus().length,
      node: process.version,
      loadAverageAtStart: load1.map(Number),
      flags,
      counted:
        "each stack's process, its PostgreSQL backends, the PostgreSQL server's own processes; not anvil, not the buyers",
      results,
      ratios,
      addedP50Ms: Object.fromEntries(variants.map((v) => [v.name, round(mean(v.name, added))])),
      goals: { cpuRatio: GOAL_CPU_RATIO, addedP50Ms: GOAL_ADDED_P50_MS },
      verifyFloor: floors,
      allSettled: results.every((r) => r.settledOnChain),
    }),
  );
  // A payment charged and not settled, or settled twice, makes every figure above meaningless.
  if (!results.every((r) => r.settledOnChain)) process.exitCode = 1;
}

type Stack = StackOptions["stack"];

interface Running {
  pid: number;
  urls: StackUrls;
  payTo: `0x${string}`;
  verifyPayTo: `0x${string}`;
  stop(): Promise<void>;
}

/** Starts one stack's process and waits for its URLs. */
function startStack(options: StackOptions): Promise<Running> {
  const child = spawn(
    process.execPath,
    [
      ...process.execArgv,
      // A CPU profile of each stack's process, written when it stops (NODE_OPTIONS may not carry --cpu-prof).
      ...(process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
      path.join(import.meta.dirname, "paid-stack.ts"),
      JSON.stringify(options),
    ],
    { stdio: ["pipe", "pipe", "pipe"] },
  );
  // The project's merchant logs every request (a line it pays for, counted); the table has no use for them.
  let errors = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    errors += chunk.toString();
    const lines = errors.split("\n");
    errors = lines.pop() ?? "";
    for (const line of lines) if (!line.includes('"msg":"request"')) process.stderr.write(`${line}\n`);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (!line) return;
      resolve({
        pid: child.pid as number,
        urls: JSON.parse(line) as StackUrls,
        payTo: options.payTo,
        verifyPayTo: options.verifyPayTo,
        async stop() {
          child.stdin?.end();
          const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
          await exited;
          clearTimeout(timer);
        },
      });
    });
    child.once("exit", (code) =>
      reject(new Error(`the ${options.stack} stack exited (${code}) before it was ready`)),
    );
  });
}

interface StackResult {
  name: string;
  stack: Stack;
  db: Store;
  hop: Hop;
  plainSerial: ReturnType<typeof figures>;
  verifySerial: ReturnType<typeof figures>;
  verify: ReturnType<typeof figures>;
  paid: ReturnType<typeof figures> & { blocks: number };
  addedP50Ms: number;
  /**
   * CPU per paid request (ms): `whole` = `process` (merchant, facilitator, PGlite) + `backends` (its
   * PostgreSQL backends) + `postgresServer` (the server's own processes); the chain, the buyers and the
   * whole machine apart.
   */
  cpuMsPerPaid: {
    whole: number;
    process: number;
    backends: number;
    postgresServer: number;
    anvil: number;
    buyers: number;
    machine: number;
  };
  /** The stack's connections to PostgreSQL over the paid phase: most open at once, opened during it. */
  connections: { most: number; opened: number };
  /** The project's ledgers (the stock stack keeps none): commits and statements per request. */
  ledger: { commitsPerPaid: number; statementsPerPaid: number; commitsPerVerifyOnly: number };
  settledOnChain: boolean;
}

function figures(l: Load) {
  return {
    rps: round(l.rps, 1),
    p50Ms: round(l.p50),
    p99Ms: round(l.p99),
    ok: l.ok,
    requests: l.requests,
    failed: Object.fromEntries(l.failures),
  };
}

async function measure(
  variant: Variant,
  running: Running,
  ctx: {
    devnet: Devnet;
    miner: ReturnType<typeof startBenchMiner>;
    signers: x402Client[];
    payingFetch: (typeof fetch)[];
  },
): Promise<StackResult> {
  const { urls } = running;
  const stack = variant.name;
  // Warm-up: JIT, connections, the resource server's /supported, a few real payments.
  for (let i = 0; i < 20; i++) await expectCalc(await fetch(url(urls.plain)));
  for (let i = 0; i < 5; i++) {
    const warm = await ctx.payingFetch[i % ctx.payingFetch.length]?.(url(urls.paid));
    const why = warm ? await expectCalc(warm) : "no buyer";
    if (why !== null) throw new Error(`${stack}: warm-up payment failed: ${why}`);
  }

  // Payments signed before the verify-only phases: signing is the buyer's work, not what they time.
  const unpaid = await fetch(url(urls.verify));
  const required: PaymentRequired = decodePaymentRequiredHeader(unpaid.headers.get("PAYMENT-REQUIRED") ?? "");
  const verifyCount = flags.serial + flags.concurrency * 20;
  const headers: string[] = [];
  for (let i = 0; i < verifyCount + 20; i++) {
    const signer = ctx.signers[i % ctx.signers.length] as x402Client;
    headers.push(encodePaymentSignatureHeader(await signer.createPaymentPayload(required)));
  }
  let next = 0;
  const verifyRequest = async () => {
    const header = headers[next++];
    if (!header) throw new Error("out of signed payments");
    return expectCalc(await fetch(url(urls.verify), { headers: { "PAYMENT-SIGNATURE": header } }));
  };
  for (let i = 0; i < 20; i++) await verifyRequest();

  const plainSerial = await load(1, { total: flags.serial }, async () =>
    expectCalc(await fetch(url(urls.plain))),
  );
  summary("plain, one at a time", plainSerial);
  const verifyCommits = await commitsOver(running, () => load(1, { total: flags.serial }, verifyRequest));
  const verifySerial = verifyCommits.result;
  summary("verify only, one at a time", verifySerial);
  const verify = await load(flags.concurrency, { total: flags.concurrency * 20 }, verifyRequest);
  summary(`verify only, concurrency ${flags.concurrency}`, verify);

  const blocksBefore = ctx.miner.blocks;
  const anvilBefore = processCpuMs(ctx.devnet.pid) ?? 0;
  const buyersBefore = process.cpuUsage();
  const meter = meterCpu({ stack: running.pid });
  const paidCommits = await commitsOver(running, () =>
    load(flags.concurrency, { seconds: flags.seconds }, async (worker) => {
      const response = await (ctx.payingFetch[worker] as typeof fetch)(url(urls.paid));
      const failure = await expectCalc(response);
      if (failure) return failure;
      const receipt = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE") ?? "");
      return receipt.success && receipt.transaction ? null : "no settlement receipt";
    }),
  );
  const count = meter.stop();
  const buyersUsage = process.cpuUsage(buyersBefore);
  const anvilMs = (processCpuMs(ctx.devnet.pid) ?? anvilBefore) - anvilBefore;
  const paid = paidCommits.result;
  const blocks = ctx.miner.blocks - blocksBefore;
  summary(`paid, concurrency ${flags.concurrency}`, paid);
  const per = (ms: number) => round(ms / Math.max(1, paid.ok));
  const processMs = count.processes.stack ?? 0;
  const backendsMs = count.backends.stack ?? 0;
  const cpuMsPerPaid = {
    whole: per(processMs + backendsMs + count.postgresServer),
    process: per(processMs),
    backends: per(backendsMs),
    postgresServer: per(count.postgresServer),
    anvil: per(anvilMs),
    buyers: per((buyersUsage.user + buyersUsage.system) / 1000),
    machine: per(count.machine),
  };
  const { most, opened } = count.connections.stack ?? { most: 0, opened: 0 };
  log(
    `CPU per paid request: ${cpuMsPerPaid.whole} ms counted whole = process ${cpuMsPerPaid.process} + its PostgreSQL backends ${cpuMsPerPaid.backends} (${most} connections at most, ${opened} opened) + the PostgreSQL server's own ${cpuMsPerPaid.postgresServer}; apart: anvil ${cpuMsPerPaid.anvil} ms, buyers ${cpuMsPerPaid.buyers} ms, machine ${cpuMsPerPaid.machine} ms`,
  );
  const ledger = {
    commitsPerPaid: round(paidCommits.commits / Math.max(1, paid.ok)),
    statementsPerPaid: round(paidCommits.statements / Math.max(1, paid.ok)),
    commitsPerVerifyOnly: round(verifyCommits.commits / Math.max(1, verifySerial.ok)),
  };
  log(
    `ledgers: ${ledger.commitsPerPaid} commits (${ledger.statementsPerPaid} statements) per paid request, ${ledger.commitsPerVerifyOnly} commits per verify-only request`,
  );

  // Every payment on chain: the merchant's balance and Transfer logs, the warm-up's included, over all rounds.
  for (let i = 0; i < 200 && (await ctx.miner.pending()) > 0; i++)
    await new Promise((r) => setTimeout(r, 20));
  paidSoFar.set(stack, (paidSoFar.get(stack) ?? 0) + paid.ok + 5);
  const expected = paidSoFar.get(stack) ?? 0;
  const balance = await usdcReader(ctx.devnet.rpc).balanceOf(running.payTo);
  const transfers = (
    await rpc<unknown[]>(ctx.devnet.rpc, "eth_getLogs", [
      {
        fromBlock: "0x0",
        toBlock: "latest",
        address: BASE_USDC,
        topics: [TRANSFER_TOPIC, null, pad(running.payTo)],
      },
    ])
  ).length;
  const settledOnChain = balance === BigInt(expected) * PRICE_ATOMIC && transfers === expected;
  log(
    `on chain: ${transfers} Transfer logs to the merchant, balance ${balance} (expected ${expected} x ${PRICE_ATOMIC}), ${blocks} blocks in the paid phase: ${settledOnChain ? "every payment settled" : "MISMATCH"}`,
  );
  return {
    name: variant.name,
    stack: variant.stack,
    db: variant.db,
    hop: variant.hop,
    plainSerial: figures(plainSerial),
    verifySerial: figures(verifySerial),
    verify: figures(verify),
    paid: { ...figures(paid), blocks },
    addedP50Ms: round(verifySerial.p50 - plainSerial.p50),
    cpuMsPerPaid,
    connections: { most, opened },
    ledger,
    settledOnChain,
  };
}

/** What the stack's databases committed while `work` ran (all of it: the stack serves nothing else then). */
async function commitsOver<T>(running: Running, work: () => Promise<T>) {
  const read = async () =>
    (await (await fetch(running.urls.commits)).json()) as Record<"commits" | "statements", number>;
  const before = await read();
  const result = await work();
  const after = await read();
  return {
    result,
    commits: after.commits - before.commits,
    statements: after.statements - before.statements,
  };
}

const paidSoFar = new Map<string, number>();

/**
 * The project's verify-only path commits three times: the merchant's payment row taken, the facilitator's
 * ledger row, and the merchant's outcome (`src/merchant-kit/payments/payment-ledger.ts`, `src/facilitator/authorization-ledger.ts`).
 */
const VERIFY_COMMITS = 3;

/**
 * What no verify that checks the chain and records durably can go below on this machine: one JSON-RPC
 * round trip to the node (the simulated transfer; the payer's code is read beside it) and one commit per
 * durable write, each timed alone, one at a time, 200 times.
 */
async function verifyFloor(devnet: Devnet, db: Store) {
  const times = async (fn: () => Promise<unknown>) => {
    for (let i = 0; i < 20; i++) await fn();
    const ms: number[] = [];
    for (let i = 0; i < 200; i++) {
      const start = performance.now();
      await fn();
      ms.push(performance.now() - start);
    }
    return ms.sort((a, b) => a - b)[100] as number;
  };
  const balanceOf = { to: BASE_USDC, data: `0x70a08231${pad(devnet.facilitatorAccount.address).slice(2)}` };
  const rpcP50Ms = await times(() => rpc(devnet.rpc, "eth_call", [balanceOf, "latest"]));
  const state = await openTestDatabase(db);
  let commitP50Ms: number;
  try {
    await state.db.query("CREATE TABLE floor_commits (id serial PRIMARY KEY, payer text NOT NULL)");
    commitP50Ms = await times(() =>
      state.db.query("INSERT INTO floor_commits (payer) VALUES ($1)", ["0x00"]),
    );
  } finally {
    await state.close();
  }
  return {
    rpcP50Ms: round(rpcP50Ms),
    commitP50Ms: round(commitP50Ms),
    projectMs: round(rpcP50Ms + VERIFY_COMMITS * commitP50Ms),
  };
}

function round(x: number, digits = 2) {
  return Number(x.toFixed(digits));
}

try {
  await main();
} finally {
  for (const close of closers.reverse()) await close().catch(() => undefined);
}
