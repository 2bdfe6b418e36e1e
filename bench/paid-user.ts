/**
 * `npm run bench:paid` (the default mode; `-- --in-process` runs bench/paid.ts's own): what a user runs,
 * against the stock x402 stack, per paid request, on one devnet (issue 87 item 4).
 *
 * The project's side is the two commands docs/cli.md has a new user start, each a process of its own:
 * `x402-merchants facilitator --rpc DEVNET` (its ledger on PGlite in a data directory of its own, settlements
 * one at a time and receipts polled every 500 ms, its defaults) and `x402-merchants serve --only
 * utility,inference` against it (`X402M_FACILITATOR_URL`, `X402M_RPC_URL`, the hosts' wallets,
 * `X402M_INFERENCE_ENGINE=offline`, as docs/cli.md's "Paying with the client you already run" starts it): the
 * default store (PGlite in a fresh data directory), signed offers and receipts, the Bazaar and builder-code
 * extensions, request logs at `info`, as they come. The utility host offers calc's payment channels with an
 * authorizer key of its own, which the facilitator is told (`X402M_UTILITY_CHANNEL_AUTHORIZER_KEY`,
 * `X402M_FACILITATOR_CHANNEL_AUTHORIZERS`: docs/facilitator.md, "The deposit rule", the path
 * test/cli/own-authorizer-facilitator.test.ts takes). Only what a bench must change is changed: ports and the
 * metrics listener on free ports, `DATABASE_URL` unset.
 *
 * The stock side is likewise two processes (`bench/paid-stock.ts`): a merchant of `@x402/hono`'s middleware
 * on the SDK's resource server in front of the same handlers, and the SDK's facilitator behind the
 * documentation's example routes, its receipts polled every `--poll-ms` (500, the project's).
 *
 * Three schemes, each paid by the SDK's own clients through `@x402/fetch`, one buyer per worker:
 *
 * - **exact**: `GET /api/calc` at $0.001 (`ExactEvmScheme`), settled on chain one payment at a time;
 * - **upto**: `POST /v1/chat/completions/_t/t3/upto` (the inference API's tier 3, metered; no utility route
 *   takes upto), its offline engine replying to one short prompt (`UptoEvmScheme`; the buyers approved
 *   Permit2 at the devnet's start); settled for the metered amount;
 * - **vouchers**: calc through a payment channel (the SDK's batch-settlement client, `bench/paid.ts`'s
 *   channel phase): each buyer's channel opened first with a $5 deposit (not counted), then every request a
 *   402 and a voucher, no chain write.
 *
 * For each scheme, each side in turn (alternating which goes first from round to round): each process's CPU
 * at rest (the lower of two windows of `--idle-seconds`: `idleRates`), then `--requests` paid requests at
 * `--concurrency`, the merchant process's and the facilitator process's CPU read from /proc (bench/cpu.ts)
 * over the phase, the rest's rate times the phase's length subtracted. Printed per paid request: the merchant
 * (project / stock), the facilitator, and the server side whole (both; PGlite is inside them), with the chain
 * (anvil) and the buyers (this process) apart; then one JSON line with every figure.
 *
 * Afterwards every payment is checked on chain: exact, each merchant's USDC exactly its paid requests x $0.001
 * with one Transfer each; upto, exactly the sum of the amounts its receipts state, one Transfer each;
 * vouchers, each channel charged exactly its paid requests x $0.001 by the merchant's own records (`channels
 * list` for `serve`; the SDK's storage for the stock merchant), its escrow holding the whole deposit with
 * nothing claimed, and no transaction mined during the voucher phases.
 *
 * Flags: --concurrency N (16), --requests N (a paid phase's requests, 200), --rounds N (1), --schemes
 * exact,upto,batch-settlement (all), --idle-seconds N (3), --mine-ms N (5), --poll-ms N (the stock
 * facilitator's receipt polling, 500). With BENCH_CPU_PROF=DIR each of the four processes writes a V8 CPU
 * profile there when it stops (`serve` run as its script runs it, `node --max-semi-space-size=4`, with
 * `--cpu-prof`); the JSON gives each phase's window as `phaseUs` for `bench/cpu-profile.ts --from A --to B`.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { UptoEvmScheme as UptoEvmClient } from "@x402/evm/upto/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { createPublicClient, http, pad, parseUnits, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { BASE_USDC, X402_BATCH_SETTLEMENT_ADDRESS } from "../src/chain/base.ts";
import { batchSettlementAbi } from "../src/chain/batch-settlement.ts";
import { type Devnet, devnetChain, startDevnet } from "../src/chain/devnet/index.ts";
import { TRANSFER_TOPIC } from "../src/indexer/decode.ts";
import { rpc } from "../test/helpers/settle.ts";
import { channelClient, channelPayer } from "../test/helpers/stock-facilitator.ts";
import { NETWORK, newMerchant, usdcReader } from "../test/helpers/x402.ts";
import { type CpuCount, meterCpu, processCpuMs } from "./cpu.ts";
import { expectCalc, type Load, load, startBenchMiner, summary } from "./paid-load.ts";
import type { StockPartOptions } from "./paid-stock.ts";
import { startCliChild, startServeChild } from "./serve-child.ts";
import type { BenchChannel } from "./stock-stack.ts";
import { UPTO_PATH } from "./stock-stack.ts";

/** Issue 87: the merchant process's CPU per paid exact request at most the stock merchant's. */
const GOAL_MERCHANT_VS_STOCK = 1;
/** Issues 20, 53, 87: the whole server side per paid request at most half the stock stack's (exact, vouchers). */
const GOAL_WHOLE_VS_STOCK = 0.5;
/** Issue 53: a voucher at most a fifth of the project's own exact payment, counted whole. */
const GOAL_VOUCHER_VS_EXACT = 0.2;
const PRICE_ATOMIC = 1000n; // calc's $0.001
/** Each buyer's deposit into each side's channel: $5, 5,000 calls, no top-up within a run of several rounds. */
const CHANNEL_DEPOSIT = 5_000_000n;
const CHANNEL_WARM_UP = 5;
const EXPRESSION = "2^200 + 1/7";
/** The upto call: docs/cli.md's, one short prompt and the tier's least reply. */
const UPTO_BODY = JSON.stringify({ messages: [{ role: "user", content: "Say hello." }], max_tokens: 16 });

const SCHEMES = ["exact", "upto", "batch-settlement"] as const;
type Scheme = (typeof SCHEMES)[number];
type SideName = "project" | "stock";

function parseFlags(argv: string[]) {
  const flags = {
    concurrency: 16,
    requests: 200,
    rounds: 1,
    schemes: [...SCHEMES] as Scheme[],
    "idle-seconds": 3,
    "mine-ms": 5,
    "poll-ms": 500,
  };
  for (let i = 0; i < argv.length; i++) {
    const key = (argv[i] ?? "").replace(/^--/, "") as keyof typeof flags;
    const raw = String(argv[++i]);
    if (!(key in flags))
      throw new Error(
        `unknown flag ${argv[i - 1]}: use ${Object.keys(flags).join(", ")} (or --in-process and bench/paid.ts's flags)`,
      );
    if (key === "schemes") {
      const list = [...new Set(raw.split(","))] as Scheme[];
      if (!list.every((s) => SCHEMES.includes(s)))
        throw new Error(`--schemes is a list of ${SCHEMES.join(", ")}`);
      flags.schemes = list;
    } else {
      const value = Number(raw);
      if (!Number.isSafeInteger(value) || value < 1) throw new Error(`bad value for --${key}: ${raw}`);
      flags[key] = value;
    }
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
const closers: (() => Promise<unknown>)[] = [];
const PROFILE_DIR = process.env.BENCH_CPU_PROF;
const round = (x: number, digits = 2) => Number(x.toFixed(digits));

/** One side of the run, started: its two processes, where it sells, and its channels as its merchant holds them. */
interface Side {
  name: SideName;
  merchantPid: number;
  facilitatorPid: number;
  calcUrl: string;
  uptoUrl: string;
  payTo: `0x${string}`;
  uptoPayTo: `0x${string}`;
  /** The merchant's own record of its channels: payer, channel, charged (atomic). */
  channels(): Promise<{ payer: string; channel: `0x${string}`; charged: bigint }[]>;
}

function tempDir(name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `x402m-paid-${name}-`));
  closers.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The environment of the project's commands: the caller's, with a fresh store and free ports. */
function userEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, X402M_METRICS_PORT: "0", ...extra };
  delete env.DATABASE_URL;
  return env;
}

/** `--cpu-prof` for a process, when BENCH_CPU_PROF asks for profiles. */
const profiling = (): string[] =>
  PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(PROFILE_DIR)}`] : [];

/** A key of its own for a facilitator, with ETH for gas. */
async function facilitatorKey(devnet: Devnet): Promise<`0x${string}`> {
  const key = generatePrivateKey();
  await rpc(devnet.rpc, "anvil_setBalance", [privateKeyToAccount(key).address, "0x56bc75e2d63100000"]);
  return key;
}

/** `facilitator` and `serve --only utility,inference` as docs/cli.md starts them (see the file's comment). */
async function startProject(devnet: Devnet): Promise<Side> {
  const payTo = newMerchant();
  const uptoPayTo = newMerchant();
  const authorizerKey = generatePrivateKey();
  const facilitator = await startCliChild(
    ["facilitator", "--rpc", devnet.rpc, "--port", "0", "--data", tempDir("facilitator")],
    userEnv({
      X402M_FACILITATOR_KEY: await facilitatorKey(devnet),
      X402M_FACILITATOR_CHANNEL_AUTHORIZERS: `${payTo}=${privateKeyToAccount(authorizerKey).address}`,
    }),
    PROFILE_DIR ? profiling() : undefined,
  );
  closers.push(() => facilitator.stop());
  const dataDir = tempDir("serve");
  const env = userEnv({
    X402M_FACILITATOR_URL: (JSON.parse(facilitator.line) as { facilitator: string }).facilitator,
    X402M_RPC_URL: devnet.rpc,
    X402M_UTILITY_PAY_TO: payTo,
    X402M_INFERENCE_PAY_TO: uptoPayTo,
    X402M_INFERENCE_ENGINE: "offline",
    X402M_UTILITY_CHANNEL_AUTHORIZER_KEY: authorizerKey,
    X402M_UTILITY_PORT: "0",
    X402M_INFERENCE_PORT: "0",
    // What bin/x402-merchants's `sh` line gives `serve`, when it is run as `node ...` to be profiled.
    ...(PROFILE_DIR && { MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? "2" }),
  });
  const serve = await startServeChild(
    ["utility", "inference"] as const,
    env,
    dataDir,
    PROFILE_DIR ? ["--max-semi-space-size=4", ...profiling()] : undefined,
  );
  closers.push(() => serve.stop());
  const cli = path.resolve(import.meta.dirname, "..", "bin", "x402-merchants");
  return {
    name: "project",
    merchantPid: serve.pid,
    facilitatorPid: facilitator.pid,
    calcUrl: `${serve.urls.utility}/api/calc?expr=${encodeURIComponent(EXPRESSION)}`,
    uptoUrl: `${serve.urls.inference}${UPTO_PATH}`,
    payTo,
    uptoPayTo,
    async channels() {
      // As an operator reads them: `channels list`, which asks the running serve.
      const { stdout } = await promisify(execFile)(
        cli,
        ["channels", "list", "--merchant", "utility", "--data", dataDir],
        { env },
      );
      return stdout
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { payer: string; channel: `0x${string}`; charged: string })
        .map((c) => ({
          payer: c.payer.toLowerCase(),
          channel: c.channel,
          charged: parseUnits(c.charged, 6),
        }));
    },
  };
}

/** One part of the stock stack in a process of its own (`bench/paid-stock.ts`), once it printed its line. */
async function startStockPart(
  options: StockPartOptions,
): Promise<{ pid: number; line: Record<string, string> }> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...process.execArgv,
      ...profiling(),
      path.join(import.meta.dirname, "paid-stock.ts"),
      JSON.stringify(options),
    ],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  closers.push(async () => {
    child.stdin?.end();
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  });
  const line = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("\n")) resolve(out.slice(0, out.indexOf("\n")));
    });
    child.once("exit", (code) =>
      reject(new Error(`stock ${options.part} exited (${code}) before it was ready`)),
    );
  });
  return { pid: child.pid as number, line: JSON.parse(line) as Record<string, string> };
}

async function startStock(devnet: Devnet): Promise<Side> {
  const payTo = newMerchant();
  const uptoPayTo = newMerchant();
  const facilitator = await startStockPart({
    part: "facilitator",
    rpc: devnet.rpc,
    facilitatorKey: await facilitatorKey(devnet),
    pollMs: flags["poll-ms"],
  });
  const merchant = await startStockPart({
    part: "merchant",
    facilitatorUrl: facilitator.line.facilitator as string,
    payTo,
    uptoPayTo,
  });
  const channelsUrl = merchant.line.channels as string;
  return {
    name: "stock",
    merchantPid: merchant.pid,
    facilitatorPid: facilitator.pid,
    calcUrl: `${merchant.line.paid}/api/calc?expr=${encodeURIComponent(EXPRESSION)}`,
    uptoUrl: `${merchant.line.paid}${UPTO_PATH}`,
    payTo,
    uptoPayTo,
    async channels() {
      const listed = (await (await fetch(channelsUrl)).json()) as BenchChannel[];
      return listed.map((c) => ({
        payer: c.payer,
        channel: c.channelId as `0x${string}`,
        charged: BigInt(c.charged),
      }));
    },
  };
}

/** What a side's buyers pay with, and what they paid so far (for the checks on chain). */
interface Buyers {
  exact: (typeof fetch)[];
  upto: (typeof fetch)[];
  channel: (typeof fetch)[];
  exactPaid: number;
  uptoPaid: number;
  /** The amounts the upto receipts stated, summed. */
  uptoAtomic: bigint;
  /** Each buyer's vouchers answered and charged so far, deposits included. */
  vouchers: number[];
}

function buyersOf(devnet: Devnet): Buyers {
  const accounts = devnet.buyers.map((b) => privateKeyToAccount(b.privateKey));
  return {
    exact: accounts.map((a) =>
      wrapFetchWithPayment(fetch, new x402Client().register(NETWORK, new ExactEvmClient(a))),
    ),
    upto: accounts.map((a) =>
      wrapFetchWithPayment(fetch, new x402Client().register(NETWORK, new UptoEvmClient(a))),
    ),
    // The SDK's batch-settlement client, a channel per buyer and merchant, depositing $5 the first time.
    channel: devnet.buyers.map((b) =>
      wrapFetchWithPayment(fetch, channelPayer(channelClient(devnet, b, { deposit: CHANNEL_DEPOSIT }))),
    ),
    exactPaid: 0,
    uptoPaid: 0,
    uptoAtomic: 0n,
    vouchers: devnet.buyers.map(() => 0),
  };
}

/** Why a paid answer is not one, from its 402's headers; null when it is not a 402. */
function refusal(response: Response): string | null {
  if (response.status !== 402) return null;
  const required = response.headers.get("PAYMENT-REQUIRED");
  if (required) return `402: ${decodePaymentRequiredHeader(required).error ?? "no reason given"}`;
  const settled = response.headers.get("PAYMENT-RESPONSE");
  if (!settled) return "402 without a reason";
  const failed = decodePaymentResponseHeader(settled);
  return `402, settlement failed: ${failed.errorReason ?? "no reason given"}${failed.errorMessage ? ` (${failed.errorMessage})` : ""}`;
}

/** One paid request of `scheme` by buyer `worker` to `side`: null when answered and settled, else why not. */
async function payOnce(side: Side, buyers: Buyers, scheme: Scheme, worker: number, deposit = false) {
  if (scheme === "upto") {
    const response = await (buyers.upto[worker] as typeof fetch)(side.uptoUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: UPTO_BODY,
    });
    const body = await response.text();
    const why = refusal(response);
    if (why) return why;
    if (response.status !== 200 || !body.includes('"chat.completion"'))
      return `status ${response.status}: ${body.slice(0, 80)}`;
    const receipt = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE") ?? "");
    if (!receipt.success || !receipt.transaction) return "no settlement receipt";
    if (receipt.amount === undefined) return "an upto receipt without its amount";
    buyers.uptoPaid++;
    buyers.uptoAtomic += BigInt(receipt.amount);
    return null;
  }
  const pay = scheme === "exact" ? buyers.exact : buyers.channel;
  const response = await (pay[worker] as typeof fetch)(side.calcUrl);
  const why = refusal(response) ?? (await expectCalc(response));
  if (why) return why;
  const receipt = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE") ?? "");
  if (!receipt.success) return "no payment receipt";
  if (scheme === "exact") {
    if (!receipt.transaction) return "no settlement transaction";
    buyers.exactPaid++;
    return null;
  }
  // Answered and charged, whatever the receipt says next: counted for the check.
  buyers.vouchers[worker] = (buyers.vouchers[worker] ?? 0) + 1;
  if (deposit !== Boolean(receipt.transaction))
    return deposit ? "no deposit transaction" : "a voucher answered with a transaction";
  return null;
}

type Miner = ReturnType<typeof startBenchMiner>;

/** Waits (4 s at most) for the transactions in the devnet's pool to be mined. */
async function drained(miner: Miner) {
  for (let i = 0; i < 200 && (await miner.pending()) > 0; i++) await new Promise((r) => setTimeout(r, 20));
}

/**
 * Warms `side` up for `scheme` (JIT, connections, the facilitator's /supported, the offline engine's
 * tokenizer): one payment alone, then one per worker at once; for channels, each buyer's channel opened first,
 * one after another (its deposit), then five vouchers each.
 */
async function warmUp(side: Side, buyers: Buyers, scheme: Scheme, miner: Miner) {
  const must = (why: string | null, what: string) => {
    if (why !== null) throw new Error(`${side.name}: ${what} failed: ${why}`);
  };
  if (scheme === "batch-settlement") {
    if (buyers.vouchers.every((n) => n === 0))
      for (const i of buyers.channel.keys())
        must(await payOnce(side, buyers, scheme, i, true), "opening a channel");
    await drained(miner);
    await Promise.all(
      buyers.channel.map(async (_, i) => {
        for (let n = 0; n < CHANNEL_WARM_UP; n++)
          must(await payOnce(side, buyers, scheme, i), "a warm-up voucher");
      }),
    );
    return;
  }
  must(await payOnce(side, buyers, scheme, 0), `a first ${scheme} payment`);
  // The stock facilitator's viem nonce manager now and then gives a settlement a nonce already used when many
  // start at once ("replacement transaction underpriced": refused, nothing charged), as the SDK's users would
  // see it too; a warm-up burst that meets it is tried again, and the measured phases count such failures.
  for (let attempt = 1; ; attempt++) {
    const warm = await load(flags.concurrency, { total: flags.concurrency }, (w) =>
      payOnce(side, buyers, scheme, w),
    );
    const failed = [...warm.failures].map(([why, n]) => `${n}x ${why}`).join("; ");
    if (!failed) return;
    if (attempt === 3) throw new Error(`${side.name}: warm-up payments (${scheme}) failed: ${failed}`);
    log(`${side.name}: warm-up payments (${scheme}) failed, trying again: ${failed.slice(0, 300)}`);
    await drained(miner);
  }
}

/**
 * The side's processes' CPU at rest, in ms a second: the lower of two windows of `--idle-seconds` each. A
 * process just warmed up is still at its warm-up's work for a while (V8's compiler and GC threads): one window
 * read the stock merchant at 92 ms/s, nine times its rest, and subtracted over the phase that gave -11 ms a paid
 * request (2026-11-29, 15:10). Work only adds CPU, so the lower window is the nearer to the rest.
 */
async function idleRates(side: Side) {
  const window = async () => {
    const meter = meterCpu({ merchant: side.merchantPid, facilitator: side.facilitatorPid });
    await new Promise((r) => setTimeout(r, flags["idle-seconds"] * 1000));
    const count = meter.stop();
    return {
      merchant: (count.processes.merchant ?? 0) / count.seconds,
      facilitator: (count.processes.facilitator ?? 0) / count.seconds,
    };
  };
  const first = await window();
  const second = await window();
  return {
    merchant: Math.min(first.merchant, second.merchant),
    facilitator: Math.min(first.facilitator, second.facilitator),
  };
}

interface Phase {
  scheme: Scheme;
  side: SideName;
  round: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  ok: number;
  requests: number;
  failed: Record<string, number>;
  seconds: number;
  /** Per paid request, in ms, the processes' rest subtracted: merchant + facilitator = whole. */
  cpuMsPerPaid: { merchant: number; facilitator: number; whole: number; anvil: number; buyers: number };
  /** The processes' CPU at rest before the phase, ms a second. */
  idleMsPerS: { merchant: number; facilitator: number };
  /** Blocks mined and transactions they held during the phase. */
  blocks: number;
  transactions: number;
  /** The phase on the machine's monotonic clock, µs (V8 profiles' clock): `bench/cpu-profile.ts --from --to`. */
  phaseUs: [number, number];
}

const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

async function blockNumber(devnet: Devnet): Promise<bigint> {
  return BigInt(await rpc<string>(devnet.rpc, "eth_blockNumber", []));
}

/** Transactions in the blocks after `from`, up to the head. */
async function transactionsSince(
  devnet: Devnet,
  from: bigint,
): Promise<{ blocks: number; transactions: number }> {
  const head = await blockNumber(devnet);
  let transactions = 0;
  for (let b = from + 1n; b <= head; b++)
    transactions += Number(await rpc<string>(devnet.rpc, "eth_getBlockTransactionCountByNumber", [toHex(b)]));
  return { blocks: Number(head - from), transactions };
}

/** A side's paid phase of `scheme`: its rest first, then `--requests` at `--concurrency`, CPU per paid request. */
async function measure(
  side: Side,
  buyers: Buyers,
  scheme: Scheme,
  ctx: { devnet: Devnet; miner: Miner; round: number },
): Promise<Phase> {
  await drained(ctx.miner);
  const idle = await idleRates(side);
  const from = await blockNumber(ctx.devnet);
  const anvilBefore = processCpuMs(ctx.devnet.pid) ?? 0;
  const buyersBefore = process.cpuUsage();
  const meter = meterCpu({ merchant: side.merchantPid, facilitator: side.facilitatorPid });
  const start = monotonicUs();
  const done: Load = await load(flags.concurrency, { total: flags.requests }, (w) =>
    payOnce(side, buyers, scheme, w),
  );
  const count: CpuCount = meter.stop();
  const phaseUs: [number, number] = [start, monotonicUs()];
  const buyersUsage = process.cpuUsage(buyersBefore);
  const anvilMs = (processCpuMs(ctx.devnet.pid) ?? anvilBefore) - anvilBefore;
  summary(`${scheme}, ${side.name}, concurrency ${flags.concurrency}`, done);
  // What the phase sent is mined within a few ticks: then count what its blocks hold.
  await drained(ctx.miner);
  await new Promise((r) => setTimeout(r, 10 * flags["mine-ms"] + 100));
  const chain = await transactionsSince(ctx.devnet, from);
  const per = (ms: number) => round(ms / Math.max(1, done.ok));
  const merchant = (count.processes.merchant ?? 0) - idle.merchant * count.seconds;
  const facilitator = (count.processes.facilitator ?? 0) - idle.facilitator * count.seconds;
  const cpuMsPerPaid = {
    merchant: per(merchant),
    facilitator: per(facilitator),
    whole: per(merchant + facilitator),
    anvil: per(anvilMs),
    buyers: per((buyersUsage.user + buyersUsage.system) / 1000),
  };
  log(
    `CPU per paid ${scheme} request, ${side.name}: merchant ${cpuMsPerPaid.merchant} ms + facilitator ${cpuMsPerPaid.facilitator} ms = ${cpuMsPerPaid.whole} ms (at rest before: ${round(idle.merchant)} and ${round(idle.facilitator)} ms/s, subtracted); apart: anvil ${cpuMsPerPaid.anvil} ms, buyers ${cpuMsPerPaid.buyers} ms; ${chain.transactions} transactions in ${chain.blocks} blocks`,
  );
  return {
    scheme,
    side: side.name,
    round: ctx.round,
    rps: round(done.rps, 1),
    p50Ms: round(done.p50),
    p99Ms: round(done.p99),
    ok: done.ok,
    requests: done.requests,
    failed: Object.fromEntries(done.failures),
    seconds: round(done.seconds),
    cpuMsPerPaid,
    idleMsPerS: { merchant: round(idle.merchant), facilitator: round(idle.facilitator) },
    ...chain,
    phaseUs,
  };
}

/** Exact and upto on chain: the wallet's USDC exactly `expected`, one Transfer per payment. */
async function checkTransfers(devnet: Devnet, payTo: `0x${string}`, payments: number, expected: bigint) {
  const balance = await usdcReader(devnet.rpc).balanceOf(payTo);
  const transfers = (
    await rpc<unknown[]>(devnet.rpc, "eth_getLogs", [
      { fromBlock: "0x0", toBlock: "latest", address: BASE_USDC, topics: [TRANSFER_TOPIC, null, pad(payTo)] },
    ])
  ).length;
  return {
    payments,
    transfers,
    expectedAtomic: expected.toString(),
    balanceAtomic: balance.toString(),
    ok: balance === expected && transfers === payments,
  };
}

/** Channels: the merchant's records against the vouchers counted, and the escrow against the deposits. */
async function checkChannels(devnet: Devnet, side: Side, buyers: Buyers) {
  const listed = await side.channels();
  const reader = createPublicClient({ chain: devnetChain(devnet.rpc), transport: http(devnet.rpc) });
  let chargedAsCounted = 0;
  let escrowUntouched = 0;
  for (const [i, buyer] of devnet.buyers.entries()) {
    const row = listed.find((c) => c.payer === buyer.address.toLowerCase());
    if (!row) continue;
    if (row.charged === BigInt(buyers.vouchers[i] ?? 0) * PRICE_ATOMIC) chargedAsCounted++;
    else
      log(
        `${side.name}: ${buyer.address}'s channel charged ${row.charged}, counted ${buyers.vouchers[i]} requests`,
      );
    const [balance, claimed] = (await reader.readContract({
      address: X402_BATCH_SETTLEMENT_ADDRESS,
      abi: batchSettlementAbi,
      functionName: "channels",
      args: [row.channel],
    })) as readonly [bigint, bigint];
    if (balance === CHANNEL_DEPOSIT && claimed === 0n) escrowUntouched++;
  }
  const n = devnet.buyers.length;
  return {
    buyers: n,
    chargedAsCounted,
    escrowUntouched,
    requests: buyers.vouchers.reduce((a, b) => a + b, 0),
    ok: chargedAsCounted === n && escrowUntouched === n,
  };
}

async function main() {
  const loadAtStart = os.loadavg().map((x) => round(x));
  log(
    `bench:paid (serve and facilitator as a user starts them) on ${os.cpus()[0]?.model} x${os.cpus().length}, Node ${process.version}, load average ${loadAtStart.join(" ")}`,
  );
  log(
    `concurrency ${flags.concurrency}, ${flags.requests} paid requests a phase, ${flags.rounds} round(s), schemes ${flags.schemes.join(", ")}, rest measured ${flags["idle-seconds"]} s before each phase`,
  );
  const devnet = await startDevnet({ port: 0, buyers: flags.concurrency, blockTime: 0 });
  closers.push(() => devnet.stop());
  await rpc(devnet.rpc, "anvil_removeBlockTimestampInterval", []);
  const miner = startBenchMiner(devnet, "pending", flags["mine-ms"]);
  closers.push(() => miner.stop());
  const sides = [await startProject(devnet), await startStock(devnet)];
  const buyers = new Map(sides.map((s) => [s.name, buyersOf(devnet)]));
  const of = (side: Side) => buyers.get(side.name) as Buyers;

  const phases: Phase[] = [];
  for (let r = 0; r < flags.rounds; r++) {
    for (const scheme of flags.schemes) {
      const order = r % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        log(`\n--- ${scheme}, ${side.name}${flags.rounds > 1 ? `, round ${r + 1}` : ""}`);
        await warmUp(side, of(side), scheme, miner);
        phases.push(await measure(side, of(side), scheme, { devnet, miner, round: r }));
      }
    }
  }
  await drained(miner);
  const checks = Object.fromEntries(
    await Promise.all(
      sides.map(async (side) => {
        const b = of(side);
        return [
          side.name,
          {
            exact: await checkTransfers(devnet, side.payTo, b.exactPaid, BigInt(b.exactPaid) * PRICE_ATOMIC),
            upto: await checkTransfers(devnet, side.uptoPayTo, b.uptoPaid, b.uptoAtomic),
            channels: flags.schemes.includes("batch-settlement")
              ? await checkChannels(devnet, side, b)
              : null,
          },
        ] as const;
      }),
    ),
  );
  report(phases, checks, loadAtStart);
}

type Checks = Record<
  string,
  {
    exact: Awaited<ReturnType<typeof checkTransfers>>;
    upto: Awaited<ReturnType<typeof checkTransfers>>;
    channels: Awaited<ReturnType<typeof checkChannels>> | null;
  }
>;

/** The table, the ratios against the goals, the checks, and the JSON line. */
function report(phases: Phase[], checks: Checks, loadAtStart: number[]) {
  const mean = (scheme: Scheme, side: SideName, pick: (p: Phase) => number) => {
    const of = phases.filter((p) => p.scheme === scheme && p.side === side).map(pick);
    return of.length === 0 ? Number.NaN : round(of.reduce((a, b) => a + b, 0) / of.length);
  };
  log("");
  log(
    "| scheme | side | paid/s | p50 (ms) | merchant per paid (ms) | facilitator per paid (ms) | server side per paid (ms) | anvil | buyers | transactions |",
  );
  log("|---|---|---|---|---|---|---|---|---|---|");
  for (const p of phases) {
    const c = p.cpuMsPerPaid;
    log(
      `| ${p.scheme} | ${p.side} | ${p.rps} | ${p.p50Ms} | ${c.merchant} | ${c.facilitator} | **${c.whole}** | ${c.anvil} | ${c.buyers} | ${p.transactions} |`,
    );
  }
  log("");
  const figures: Record<string, unknown> = {};
  const met = (ok: boolean) => (ok ? "met" : "MISSED");
  for (const scheme of flags.schemes) {
    const part = (side: SideName) => ({
      merchant: mean(scheme, side, (p) => p.cpuMsPerPaid.merchant),
      facilitator: mean(scheme, side, (p) => p.cpuMsPerPaid.facilitator),
      whole: mean(scheme, side, (p) => p.cpuMsPerPaid.whole),
    });
    const project = part("project");
    const stock = part("stock");
    const ratios = {
      merchant: round(project.merchant / stock.merchant),
      facilitator: round(project.facilitator / stock.facilitator),
      whole: round(project.whole / stock.whole),
    };
    figures[scheme] = { project, stock, ratios };
    const goals =
      scheme === "upto"
        ? ""
        : `   goals: ${scheme === "exact" ? `merchant <= ${GOAL_MERCHANT_VS_STOCK}x: ${met(ratios.merchant <= GOAL_MERCHANT_VS_STOCK)}, ` : ""}whole <= ${GOAL_WHOLE_VS_STOCK}x: ${met(ratios.whole <= GOAL_WHOLE_VS_STOCK)}`;
    log(
      `${scheme.padEnd(16)} merchant ${project.merchant} / ${stock.merchant} ms = ${ratios.merchant}x   facilitator ${project.facilitator} / ${stock.facilitator} ms   whole ${project.whole} / ${stock.whole} ms = ${ratios.whole}x${goals}`,
    );
  }
  const voucherVsExact = round(
    mean("batch-settlement", "project", (p) => p.cpuMsPerPaid.whole) /
      mean("exact", "project", (p) => p.cpuMsPerPaid.whole),
  );
  if (!Number.isNaN(voucherVsExact))
    log(
      `a voucher / the project's own exact payment, counted whole: ${voucherVsExact}x   goal <= ${GOAL_VOUCHER_VS_EXACT}x: ${met(voucherVsExact <= GOAL_VOUCHER_VS_EXACT)}`,
    );
  const voucherTransactions = phases
    .filter((p) => p.scheme === "batch-settlement")
    .reduce((a, p) => a + p.transactions, 0);
  let allGood = voucherTransactions === 0;
  for (const [side, c] of Object.entries(checks)) {
    const parts = [
      flags.schemes.includes("exact") &&
        `exact ${c.exact.transfers} Transfers, ${c.exact.balanceAtomic} of ${c.exact.expectedAtomic} expected (${c.exact.payments} payments): ${c.exact.ok ? "settled" : "MISMATCH"}`,
      flags.schemes.includes("upto") &&
        `upto ${c.upto.transfers} Transfers, ${c.upto.balanceAtomic} of ${c.upto.expectedAtomic} the receipts stated (${c.upto.payments} payments): ${c.upto.ok ? "settled" : "MISMATCH"}`,
      c.channels &&
        `channels ${c.channels.chargedAsCounted}/${c.channels.buyers} charged exactly their ${c.channels.requests} requests, escrow untouched ${c.channels.escrowUntouched}/${c.channels.buyers}: ${c.channels.ok ? "as counted" : "MISMATCH"}`,
    ].filter(Boolean);
    log(`on chain, ${side}: ${parts.join("; ")}`);
    allGood &&=
      (!flags.schemes.includes("exact") || c.exact.ok) &&
      (!flags.schemes.includes("upto") || c.upto.ok) &&
      (c.channels?.ok ?? true);
  }
  log(`transactions mined during the voucher phases: ${voucherTransactions}`);
  consoleLog(
    JSON.stringify({
      bench: "paid",
      mode: "as a user starts serve and facilitator",
      date: new Date().toISOString(),
      machine: os.cpus()[0]?.model,
      cores: os.cpus().length,
      node: process.version,
      loadAverageAtStart: loadAtStart,
      flags,
      counted:
        "the merchant process and the facilitator process (PGlite inside each), at rest subtracted; not anvil, not the buyers",
      figures,
      voucherVsExact,
      goals: {
        merchantVsStock: GOAL_MERCHANT_VS_STOCK,
        wholeVsStock: GOAL_WHOLE_VS_STOCK,
        voucherVsExact: GOAL_VOUCHER_VS_EXACT,
      },
      phases,
      checks,
      allSettled: allGood,
    }),
  );
  // A payment charged and not settled, or settled twice, makes every figure above meaningless.
  if (!allGood) process.exitCode = 1;
}

try {
  await main();
} finally {
  for (const close of closers.reverse()) await close().catch(() => undefined);
}
