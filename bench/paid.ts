/**
 * Paid-request benchmark (`npm run bench:paid [-- --concurrency N --seconds N ...]`): the project's payment
 * path against the stock x402 stack, in one run on one devnet (issue 20).
 *
 * Each stack runs in a process of its own (`bench/paid-stack.ts`): a merchant selling `/api/calc` at
 * $0.001 and the facilitator it settles through. `project` is the platform's merchant app (payment ledger,
 * replay locks) and the project's facilitator; `stock` is `@x402/hono`'s middleware with `@x402/core`'s
 * `x402Facilitator`, `@x402/evm`'s exact scheme and a viem wallet signer, as the x402 documentation builds
 * them. The buyers run in this process and the chain in anvil's, each measured apart. For each stack, in
 * turn (`--rounds` times, alternating):
 *
 * 1. **Plain**: the same validation and handler with no payment layer, one request at a time.
 * 2. **Verify only**: the stack's middleware with the real verify and a settle answered at once, nothing on
 *    chain, payments signed beforehand (`PAYMENT-SIGNATURE`). Added latency = its p50 minus plain's.
 * 3. **Paid**: one buyer per worker with `@x402/fetch` (402, sign, pay, verify, handler, settle on chain,
 *    receipt). The CPU time of the stack's process over the phase, divided by the paid requests, is the
 *    server side's cost; PostgreSQL (the project's ledger and merchant state, with `--db postgres`), anvil
 *    and the buyers are printed apart. Afterwards every payment is checked on chain: the merchant's balance
 *    must be exactly paid x price, with one Transfer log per payment.
 *
 * The devnet mines when transactions wait (`--miner pending`, polled every `--mine-ms`) or every tick
 * (`--miner interval`); never automine. Block timestamps follow the wall clock
 * (`anvil_removeBlockTimestampInterval`), so authorizations (valid for 300 s) do not expire at tens of
 * blocks a second.
 *
 * Flags: --concurrency N (16), --seconds N (paid phase, 10), --serial N (verify-only and plain requests one
 * at a time, 200), --rounds N (1), --mine-ms N (5), --miner pending|interval, --poll-ms N (both stacks'
 * receipt polling, 10), --hop http|inprocess (the project's merchant-to-facilitator hop; the stock stack is
 * always over HTTP), --db pglite|postgres (default postgres when DATABASE_URL is set). With BENCH_CPU_PROF=DIR
 * set, each stack's process writes a V8 CPU profile there when it stops.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
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
import type { StackOptions, StackUrls } from "./paid-stack.ts";

/** Issue 20: the project's server-side CPU per paid request at most half the stock stack's. */
const GOAL_CPU_RATIO = 0.5;
/** Issue 20: what verify adds to a request's p50, one request at a time. */
const GOAL_ADDED_P50_MS = 2;
const PRICE_ATOMIC = 1000n; // calc's $0.001
const EXPRESSION = "2^200 + 1/7";

function parseFlags(argv: string[]) {
  const flags = {
    concurrency: 16,
    seconds: 10,
    serial: 200,
    rounds: 1,
    "mine-ms": 5,
    miner: "pending" as "pending" | "interval",
    "poll-ms": 10,
    hop: "http" as "http" | "inprocess",
    db: (process.env.DATABASE_URL ? "postgres" : "pglite") as "pglite" | "postgres",
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
    if (allowed) {
      if (!allowed.includes(raw)) throw new Error(`--${key} is one of ${allowed.join(", ")}`);
      (flags as Record<string, unknown>)[key] = raw;
    } else {
      const value = Number(raw);
      if (!Number.isSafeInteger(value) || value < 1) throw new Error(`bad value for --${key}: ${raw}`);
      (flags as Record<string, unknown>)[key] = value;
    }
  }
  if (flags.db === "postgres" && !process.env.DATABASE_URL) {
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
/**
 * CPU time spent so far, in milliseconds: the stack's process and this one (the buyers), all threads of
 * each; anvil; every PostgreSQL server process (backends included); and the whole machine (every core,
 * from /proc/stat). Linux only; what cannot be read counts as 0.
 */
function cpuSnapshot(anvilPid: number, serverPid: number) {
  const tick = 1000 / 100; // USER_HZ, 100 on Linux
  const ofStat = (stat: string) => {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * tick;
  };
  const read = (file: string) => {
    try {
      return fs.readFileSync(file, "utf8");
    } catch {
      return "";
    }
  };
  // By process: a backend that exits takes its CPU time with it, so differences are taken per process.
  const postgres = new Map<string, number>();
  for (const pid of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    const stat = read(`/proc/${pid}/stat`);
    if (stat.includes("(postgres)")) postgres.set(pid, ofStat(stat));
  }
  const anvilStat = read(`/proc/${anvilPid}/stat`);
  const serverStat = read(`/proc/${serverPid}/stat`);
  const cpu = read("/proc/stat").split("\n")[0]?.split(/\s+/).slice(1).map(Number) ?? [];
  // user nice system idle iowait irq softirq steal: busy is all but idle and iowait.
  const machine =
    cpu.length >= 8 ? (cpu.reduce((a, b) => a + b, 0) - (cpu[3] ?? 0) - (cpu[4] ?? 0)) * tick : 0;
  const usage = process.cpuUsage();
  return {
    node: (usage.user + usage.system) / 1000,
    anvil: anvilStat ? ofStat(anvilStat) : 0,
    server: serverStat ? ofStat(serverStat) : 0,
    postgres,
    machine,
  };
}

async function main() {
  const load1 = os.loadavg().map((x) => x.toFixed(2));
  log(
    `bench:paid on ${os.cpus()[0]?.model} x${os.cpus().length}, Node ${process.version}, load average ${load1.join(" ")}`,
  );
  log(
    `concurrency ${flags.concurrency}, paid phase ${flags.seconds} s, ${flags.rounds} round(s), miner ${flags.miner} every ${flags["mine-ms"]} ms, project hop ${flags.hop}, project state on ${flags.db}`,
  );

  // --- the chain -------------------------------------------------------------------------------------
  const devnet = await startDevnet({ port: 0, buyers: flags.concurrency, blockTime: 0 });
  closers.push(() => devnet.stop());
  await rpc(devnet.rpc, "anvil_removeBlockTimestampInterval", []);
  const miner = startBenchMiner(devnet, flags.miner, flags["mine-ms"]);
  closers.push(() => miner.stop());
  // The stock facilitator signs from a key of its own (gas only), so the two stacks' nonces never meet.
  const stockKey = generatePrivateKey();
  await rpc(devnet.rpc, "anvil_setBalance", [privateKeyToAccount(stockKey).address, "0x56bc75e2d63100000"]);

  const stacks = new Map<Stack, Running>();
  for (const stack of ["project", "stock"] as const) {
    const running = await startStack({
      stack,
      rpc: devnet.rpc,
      facilitatorKey: stack === "project" ? devnet.facilitatorAccount.privateKey : stockKey,
      payTo: privateKeyToAccount(generatePrivateKey()).address,
      verifyPayTo: privateKeyToAccount(generatePrivateKey()).address,
      pollMs: flags["poll-ms"],
      db: flags.db,
      hop: flags.hop,
    });
    closers.push(() => running.stop());
    stacks.set(stack, running);
  }

  const buyers = devnet.buyers.map((b) => privateKeyToAccount(b.privateKey));
  const signers = buyers.map((account) => new x402Client().register(NETWORK, new ExactEvmClient(account)));
  const payingFetch = signers.map((client) => wrapFetchWithPayment(fetch, client));

  const results: StackResult[] = [];
  for (let round = 0; round < flags.rounds; round++) {
    for (const stack of ["project", "stock"] as const) {
      log(`\n--- ${stack}${flags.rounds > 1 ? `, round ${round + 1}` : ""}`);
      results.push(
        await measure(stack, stacks.get(stack) as Running, { devnet, miner, signers, payingFetch }),
      );
    }
  }

  const floor = await verifyFloor(devnet);

  // --- figures ---------------------------------------------------------------------------------------
  const mean = (stack: Stack, pick: (r: StackResult) => number) => {
    const of = results.filter((r) => r.stack === stack).map(pick);
    return of.reduce((a, b) => a + b, 0) / of.length;
  };
  const server = (r: StackResult) => r.cpuMsPerPaid.server;
  const serverAndDb = (r: StackResult) => r.cpuMsPerPaid.server + r.cpuMsPerPaid.postgres;
  const added = (r: StackResult) => r.addedP50Ms;
  const cpuRatio = mean("project", server) / mean("stock", server);
  const cpuDbRatio = mean("project", serverAndDb) / mean("stock", serverAndDb);
  const met = (ok: boolean) => (ok ? "met" : "MISSED");
  log("");
  log(
    "| stack | paid req/s | server CPU per paid (ms) | + PostgreSQL | anvil | buyers | verify-only added p50 (ms) | plain p50 | commits per paid | on chain |",
  );
  log("|---|---|---|---|---|---|---|---|---|---|");
  for (const r of results) {
    log(
      `| ${r.stack} | ${r.paid.rps} | ${r.cpuMsPerPaid.server} | ${r.cpuMsPerPaid.postgres} | ${r.cpuMsPerPaid.anvil} | ${r.cpuMsPerPaid.buyers} | ${r.addedP50Ms} | ${r.plainSerial.p50Ms} | ${r.ledger.commitsPerPaid} | ${r.settledOnChain ? "all settled" : "MISMATCH"} |`,
    );
  }
  log("");
  log(
    `server CPU per paid request, project / stock   ${cpuRatio.toFixed(2)}x (with PostgreSQL ${cpuDbRatio.toFixed(2)}x)   goal <= ${GOAL_CPU_RATIO}x: ${met(cpuRatio <= GOAL_CPU_RATIO)}`,
  );
  log(
    `verify-only added p50, project               ${mean("project", added).toFixed(2)} ms (stock ${mean("stock", added).toFixed(2)} ms)   goal <= ${GOAL_ADDED_P50_MS} ms: ${met(mean("project", added) <= GOAL_ADDED_P50_MS)}`,
  );
  log(
    `verify's floor here: one JSON-RPC eth_call p50 ${floor.rpcP50Ms} ms, one commit p50 ${floor.commitP50Ms} ms (${flags.db}); the project's verify reads the chain once and commits ${VERIFY_COMMITS} times: at least ${floor.projectMs} ms over plain`,
  );
  consoleLog(
    JSON.stringify({
      bench: "paid",
      date: new Date().toISOString().slice(0, 10),
      machine: os.cpus()[0]?.model,
      cores: os.cpus().length,
      node: process.version,
      loadAverageAtStart: load1.map(Number),
      flags,
      results,
      cpuRatio: round(cpuRatio),
      cpuWithPostgresRatio: round(cpuDbRatio),
      addedP50Ms: { project: round(mean("project", added)), stock: round(mean("stock", added)) },
      goals: { cpuRatio: GOAL_CPU_RATIO, addedP50Ms: GOAL_ADDED_P50_MS },
      verifyFloor: floor,
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
    { stdio: ["pipe", "pipe", "inherit"] },
  );
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
  stack: Stack;
  plainSerial: ReturnType<typeof figures>;
  verifySerial: ReturnType<typeof figures>;
  verify: ReturnType<typeof figures>;
  paid: ReturnType<typeof figures> & { blocks: number };
  addedP50Ms: number;
  cpuMsPerPaid: { server: number; postgres: number; anvil: number; buyers: number; machine: number };
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
  stack: Stack,
  running: Running,
  ctx: {
    devnet: Devnet;
    miner: ReturnType<typeof startBenchMiner>;
    signers: x402Client[];
    payingFetch: (typeof fetch)[];
  },
): Promise<StackResult> {
  const { urls } = running;
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
  const before = cpuSnapshot(ctx.devnet.pid, running.pid);
  const paidCommits = await commitsOver(running, () =>
    load(flags.concurrency, { seconds: flags.seconds }, async (worker) => {
      const response = await (ctx.payingFetch[worker] as typeof fetch)(url(urls.paid));
      const failure = await expectCalc(response);
      if (failure) return failure;
      const receipt = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE") ?? "");
      return receipt.success && receipt.transaction ? null : "no settlement receipt";
    }),
  );
  const paid = paidCommits.result;
  const after = cpuSnapshot(ctx.devnet.pid, running.pid);
  const blocks = ctx.miner.blocks - blocksBefore;
  summary(`paid, concurrency ${flags.concurrency}`, paid);
  const per = (k: Exclude<keyof typeof after, "postgres">) =>
    round((after[k] - before[k]) / Math.max(1, paid.ok));
  let postgresMs = 0;
  for (const [pid, ms] of after.postgres) postgresMs += ms - (before.postgres.get(pid) ?? 0);
  const cpuMsPerPaid = {
    server: per("server"),
    postgres: round(postgresMs / Math.max(1, paid.ok)),
    anvil: per("anvil"),
    buyers: per("node"),
    machine: per("machine"),
  };
  log(
    `CPU per paid request: ${stack} process ${cpuMsPerPaid.server} ms, PostgreSQL ${cpuMsPerPaid.postgres} ms, anvil ${cpuMsPerPaid.anvil} ms, buyers ${cpuMsPerPaid.buyers} ms, machine ${cpuMsPerPaid.machine} ms`,
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
    stack,
    plainSerial: figures(plainSerial),
    verifySerial: figures(verifySerial),
    verify: figures(verify),
    paid: { ...figures(paid), blocks },
    addedP50Ms: round(verifySerial.p50 - plainSerial.p50),
    cpuMsPerPaid,
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

const paidSoFar = new Map<Stack, number>();

/**
 * The project's verify-only path commits three times: the merchant's payment row taken, the facilitator's
 * ledger row, and the merchant's outcome (`src/merchant-kit/payments/ledger.ts`, `src/facilitator/ledger.ts`).
 */
const VERIFY_COMMITS = 3;

/**
 * What no verify that checks the chain and records durably can go below on this machine: one JSON-RPC
 * round trip to the node (the simulated transfer; the payer's code is read beside it) and one commit per
 * durable write, each timed alone, one at a time, 200 times.
 */
async function verifyFloor(devnet: Devnet) {
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
  const state = await openTestDatabase(flags.db);
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
