/**
 * Paid-request benchmark, in-process stacks (`npm run bench:paid -- --in-process [--concurrency N --seconds N
 * ...]`): the project's payment path against the stock x402 stack, in one run on one devnet (issues 20 and 41).
 * Without `--in-process`, `bench:paid` runs bench/paid-user.ts instead: `serve` and `facilitator` as a user
 * starts them, against the stock merchant and facilitator, each a process of its own (issue 87).
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
 * With `--schemes batch-settlement` (both schemes by default) the run adds a **channel** stack per project
 * store and hop and a stock one (issue 53): the same merchants taking x402 payment channels beside exact
 * (`bench/paid-stack.ts` says how each is built; the stock one is the SDK's batch-settlement server with its
 * in-memory channel storage and the SDK's batch-settlement facilitator). One channel per buyer and stack, paid
 * by the SDK's batch-settlement client through `@x402/fetch` (`channelClient` and `channelPayer`, as the
 * kit's channel tests pay). For each channel stack in turn:
 *
 * 1. **Open** (not timed, not counted): each buyer's first paid request deposits $5 into its channel (a
 *    transaction the facilitator settles and waits for), then five vouchers each to warm up.
 * 2. **Plain** and **one voucher at a time** (`--serial` each): the latency a voucher adds over plain. Then,
 *    for what a voucher's two legs cost apart, 3 s each at `--concurrency` counted whole: plain requests,
 *    and unpaid requests to the paid route (its 402, a voucher's first leg).
 * 3. **Vouchers** at `--concurrency` for `--seconds`, one buyer (one channel) per worker: every request a
 *    402 and a voucher through an open channel, counted whole as the paid phase above.
 * 4. **Checked**: the server's channel state (its storage, through the stack) must hold for each buyer
 *    exactly its successful requests x $0.001, no reservation left; the escrow its whole deposit and nothing
 *    claimed; and the blocks mined during the voucher phase no transaction at all.
 *
 * Ratios per store and hop: the project's channel / the stock channel (goal <= 0.5) and the project's
 * channel / the project's exact on the same store and hop (goal <= 0.2), counted whole.
 *
 * With `--v1 on` (the default) each project exact stack has a second paid phase beside the first (issue 85):
 * the same payments made by x402 v1 clients, one `x402-fetch` 1.2.0 buyer per worker (the 402's v1 body, an
 * `X-PAYMENT` the kit's v1 front makes the v2 payment it is, `X-PAYMENT-RESPONSE`), counted whole the same
 * way; the ratio v1 / v2 of the server side's CPU per paid request (goal <= 1.05) is printed per stack. The
 * two phases alternate which goes first from round to round. The stock stack speaks v2 only and has none.
 * `--v1 only` runs just those two paid phases (after five payments of each to warm up) on the project's exact
 * stacks: no stock stack, no channels, no plain or verify-only phases; with `--requests N` each paid phase
 * is N requests instead of `--seconds` (e.g. `--in-process --v1 only --requests 50 --hop inprocess`: a check
 * that takes a minute).
 *
 * The devnet mines when transactions wait (`--miner pending`, polled every `--mine-ms`), and like Base at
 * least every 2 s, or every tick (`--miner interval`); never automine. The 2 s matter to the stock stacks:
 * viem's `waitForTransactionReceipt` looks for a receipt when a new block number shows, and one that shows
 * while it is still looking up the transaction is passed over; on a chain that then makes no block it
 * waits forever (a settlement never answered within the SDK's 90 s, seen in runs before 2026-11-26: the
 * receipt was in the head block). Block timestamps follow the wall clock
 * (`anvil_removeBlockTimestampInterval`), so authorizations (valid for 300 s) do not expire at tens of
 * blocks a second.
 *
 * Flags, beside --in-process: --concurrency N (16), --seconds N (paid phase, 10), --serial N (verify-only and plain
 * requests one at a time, 200), --rounds N (1), --mine-ms N (5), --miner pending|interval, --poll-ms N (both
 * stacks' receipt polling, 10), --hop http,inprocess (the project's hops, both by default; the stock stack is
 * always over HTTP), --db pglite,postgres (the project's stores: both when DATABASE_URL is set, else PGlite),
 * --schemes exact,batch-settlement (both by default), --group on|off (the project's facilitator settles in groups,
 * issue 66: on by default), --v1 on|off|only (above; on), --requests N (the exact paid phases: N requests each
 * instead of --seconds). With BENCH_CPU_PROF=DIR set, each stack's process
 * writes a V8 CPU profile there when it stops; `bench/cpu-profile.ts` reads one over a window of the run
 * (the JSON line gives each stack's measured phase as `phaseUs`, and a channel stack's 402s as
 * `channel.unpaidUs`): `npx tsx bench/cpu-profile.ts DIR/CPU...cpuprofile --from A --to B [--focus TEXT]`.
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
import { createPublicClient, http, pad, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { decodeXPaymentResponse, wrapFetchWithPayment as wrapFetchV1 } from "x402-fetch";
import { BASE_USDC, X402_BATCH_SETTLEMENT_ADDRESS } from "../src/chain/base.ts";
import { batchSettlementAbi } from "../src/chain/batch-settlement.ts";
import { type Devnet, devnetChain, startDevnet } from "../src/chain/devnet/index.ts";
import { TRANSFER_TOPIC } from "../src/indexer/decode.ts";
import { openTestDatabase } from "../test/helpers/db.ts";
import { rpc } from "../test/helpers/settle.ts";
import { channelClient, channelPayer } from "../test/helpers/stock-facilitator.ts";
import { NETWORK, usdcReader } from "../test/helpers/x402.ts";
import { meterCpu, processCpuMs } from "./cpu.ts";
import { expectCalc, type Load, load, startBenchMiner, summary } from "./paid-load.ts";
import type { BenchChannel, StackOptions, StackUrls } from "./paid-stack.ts";

/** Issue 20: the project's server-side CPU per paid request at most half the stock stack's. */
const GOAL_CPU_RATIO = 0.5;
/** Issue 20: what verify adds to a request's p50, one request at a time. */
const GOAL_ADDED_P50_MS = 2;
/** Issue 53: a request through an open channel, project / stock, counted whole. */
const GOAL_CHANNEL_VS_STOCK = 0.5;
/** Issue 53: a request through an open channel / the project's own exact payment, same store and hop. */
const GOAL_CHANNEL_VS_EXACT = 0.2;
/** Issue 85: a paid exact request from an x402 v1 client / the same from a v2 client, same stack. */
const GOAL_V1_VS_V2 = 1.05;
const PRICE_ATOMIC = 1000n; // calc's $0.001
/**
 * What each buyer deposits into each channel stack's channel: $5, 5,000 calls, no top-up within a run of
 * several rounds (the SDK's client deposits at most 5x its spend cap per payment, $1 by default).
 */
const CHANNEL_DEPOSIT = 5_000_000n;
/** Vouchers each buyer pays to warm a channel stack up, after its deposit. */
const CHANNEL_WARM_UP = 5;
const EXPRESSION = "2^200 + 1/7";

type Hop = StackOptions["hop"];
type Store = StackOptions["db"];
type Scheme = StackOptions["scheme"];

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
    schemes: ["exact", "batch-settlement"] as Scheme[],
    group: "on" as "on" | "off",
    v1: "on" as "on" | "off" | "only",
    requests: 0,
  };
  const choices: Record<string, string[]> = {
    miner: ["pending", "interval"],
    group: ["on", "off"],
    v1: ["on", "off", "only"],
    hop: ["http", "inprocess"],
    db: ["pglite", "postgres"],
    schemes: ["exact", "batch-settlement"],
  };
  for (let i = 0; i < argv.length; i++) {
    const key = (argv[i] ?? "").replace(/^--/, "") as keyof typeof flags;
    const raw = String(argv[++i]);
    if (!(key in flags)) throw new Error(`unknown flag ${argv[i - 1]}: use ${Object.keys(flags).join(", ")}`);
    const allowed = choices[key];
    if (key === "hop" || key === "db" || key === "schemes") {
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

// The default mode is what a user runs, `serve` and `facilitator` in processes of their own (bench/paid-user.ts);
// this file's stacks, each in one process, run with `--in-process`.
const IN_PROCESS = "--in-process";
if (!process.argv.includes(IN_PROCESS)) {
  await import("./paid-user.ts");
  process.exit(process.exitCode ?? 0);
}
const flags = parseFlags(process.argv.slice(2).filter((arg) => arg !== IN_PROCESS));
const log = (message: string) => process.stderr.write(`${message}\n`);
// The SDK logs every settlement's extension outcome to stdout, where only the final JSON line belongs.
const consoleLog = console.log;
console.log = (...args: unknown[]) => {
  if (!String(args[0]).startsWith("[x402]")) consoleLog(...args);
};

const url = (base: string) => `${base}/api/calc?expr=${encodeURIComponent(EXPRESSION)}`;

const closers: (() => Promise<unknown>)[] = [];

/** One stack as measured: the project on one store and hop, or the stock stack; exact, or channels. */
interface Variant {
  /** "project, postgres, http", "stock"; "channel: project, postgres, http", "channel: stock". */
  name: string;
  stack: Stack;
  db: Store;
  hop: Hop;
  scheme: Scheme;
}

const CHANNEL = "channel: ";
/** The exact variant a channel variant is compared with ("channel: project, pglite, http" -> "project, pglite, http"). */
const exactOf = (name: string) => name.slice(CHANNEL.length);

async function main() {
  const load1 = os.loadavg().map((x) => x.toFixed(2));
  log(
    `bench:paid on ${os.cpus()[0]?.model} x${os.cpus().length}, Node ${process.version}, load average ${load1.join(" ")}`,
  );
  log(
    `concurrency ${flags.concurrency}, paid phase ${flags.requests > 0 ? `${flags.requests} requests` : `${flags.seconds} s`}, ${flags.rounds} round(s), miner ${flags.miner} every ${flags["mine-ms"]} ms, project hops ${flags.hop.join(", ")}, project stores ${flags.db.join(", ")}, schemes ${flags.v1 === "only" ? "exact, by v2 and by v1 clients only (--v1 only)" : `${flags.schemes.join(", ")}, exact by v1 clients too: ${flags.v1}`}, the project's settlements in groups ${flags.group}`,
  );
  log(
    "server side counted whole: each stack's process (merchant, facilitator, PGlite), its PostgreSQL backends and the PostgreSQL server's own processes; not counted: anvil (the chain) and the buyers (this process), shown apart",
  );
  const all: Variant[] = flags.schemes.flatMap((scheme) => {
    const prefix = scheme === "exact" ? "" : CHANNEL;
    return [
      ...flags.db.flatMap((db) =>
        flags.hop.map((hop) => ({
          name: `${prefix}project, ${db}, ${hop}`,
          stack: "project" as const,
          db,
          hop,
          scheme,
        })),
      ),
      // The stock stack keeps no state in a database: its process opens a store for the plain app's
      // services and never uses it (its channels are in its memory).
      {
        name: `${prefix}stock`,
        stack: "stock" as const,
        db: "pglite" as const,
        hop: "http" as const,
        scheme,
      },
    ];
  });
  // `--v1 only`: the project's exact stacks, whose paid app speaks v1 (the stock stack's does not).
  const variants =
    flags.v1 === "only" ? all.filter((v) => v.stack === "project" && v.scheme === "exact") : all;
  if (variants.length === 0) throw new Error("--v1 only needs the exact scheme (--schemes exact)");

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
      groupSettlements: flags.group === "on",
      db: variant.db,
      hop: variant.hop,
      scheme: variant.scheme,
    });
    closers.push(() => running.stop());
    stacks.set(variant.name, running);
  }

  const buyers = devnet.buyers.map((b) => privateKeyToAccount(b.privateKey));
  const signers = buyers.map((account) => new x402Client().register(NETWORK, new ExactEvmClient(account)));
  const payingFetch = signers.map((client) => wrapFetchWithPayment(fetch, client));
  // x402 v1 buyers as their users make them: x402-fetch 1.2.0 given a viem account.
  const v1Fetch = buyers.map((account) => wrapFetchV1(fetch, account));

  const results: StackResult[] = [];
  const v1: V1Comparison[] = [];
  for (let round = 0; round < flags.rounds; round++) {
    for (const variant of variants) {
      log(`\n--- ${variant.name}${flags.rounds > 1 ? `, round ${round + 1}` : ""}`);
      const running = stacks.get(variant.name) as Running;
      const ctx = { devnet, miner, signers, payingFetch, v1Fetch, round };
      if (flags.v1 === "only") v1.push(await measureV1(variant, running, ctx));
      else if (variant.scheme === "exact") {
        const measured = await measure(variant, running, ctx);
        results.push(measured.result);
        if (measured.v1) v1.push(measured.v1);
      } else results.push(await measureChannel(variant, running, { devnet, miner }));
    }
  }
  if (flags.v1 === "only") {
    const v1Ratios = reportV1(v1);
    consoleLog(
      JSON.stringify({
        bench: "paid",
        mode: "v1 only",
        date: new Date().toISOString(),
        machine: os.cpus()[0]?.model,
        cores: os.cpus().length,
        node: process.version,
        loadAverageAtStart: load1.map(Number),
        flags,
        counted:
          "each stack's process, its PostgreSQL backends, the PostgreSQL server's own processes; not anvil, not the buyers",
        v1,
        v1Ratios,
        goals: { v1VsV2: GOAL_V1_VS_V2 },
        allSettled: v1.every((c) => c.settledOnChain),
      }),
    );
    if (!v1.every((c) => c.settledOnChain)) process.exitCode = 1;
    return;
  }

  const floors: Record<string, Awaited<ReturnType<typeof verifyFloor>>> = {};
  if (flags.schemes.includes("exact")) for (const db of flags.db) floors[db] = await verifyFloor(devnet, db);

  // --- figures ---------------------------------------------------------------------------------------
  const mean = (name: string, pick: (r: StackResult) => number) => {
    const of = results.filter((r) => r.name === name).map(pick);
    return of.length === 0 ? Number.NaN : of.reduce((a, b) => a + b, 0) / of.length;
  };
  const exactResults = results.filter((r) => r.scheme === "exact");
  const channelResults = results.filter((r) => r.scheme === "batch-settlement");
  const exactVariants = variants.filter((v) => v.scheme === "exact");
  const whole = (r: StackResult) => r.cpuMsPerPaid.whole;
  const processOnly = (r: StackResult) => r.cpuMsPerPaid.process;
  const added = (r: StackResult) => r.addedP50Ms;
  const met = (ok: boolean) => (ok ? "met" : "MISSED");
  if (exactResults.length > 0) {
    log("");
    log(
      "| stack | paid req/s | whole server side per paid (ms) | its process | its PostgreSQL backends | PostgreSQL server's own | connections (most, opened) | anvil | buyers | verify-only added p50 (ms) | plain p50 | commits per paid | gas per payment (payments a transaction) | on chain |",
    );
    log("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (const r of exactResults) {
      const c = r.cpuMsPerPaid;
      log(
        `| ${r.name} | ${r.paid.rps} | **${c.whole}** | ${c.process} | ${c.backends} | ${c.postgresServer} | ${r.connections.most}, ${r.connections.opened} | ${c.anvil} | ${c.buyers} | ${r.addedP50Ms} | ${r.plainSerial.p50Ms} | ${r.ledger.commitsPerPaid} | ${r.gas?.perPayment} (${r.gas?.paymentsPerTransaction}) | ${r.settledOnChain ? "all settled" : "MISMATCH"} |`,
      );
    }
  }
  if (channelResults.length > 0) {
    log("");
    log(
      "| channel stack | vouchers/s | whole server side per voucher (ms) | its process | its PostgreSQL backends | PostgreSQL server's own | connections (most, opened) | anvil | buyers | apart, whole per plain request, per 402 (ms) | one voucher at a time: p50, added over plain (ms) | commits per voucher | transactions in the voucher phase | charged = requests x price |",
    );
    log("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (const r of channelResults) {
      const c = r.cpuMsPerPaid;
      const ch = r.channel as ChannelCheck;
      log(
        `| ${r.name} | ${r.paid.rps} | **${c.whole}** | ${c.process} | ${c.backends} | ${c.postgresServer} | ${r.connections.most}, ${r.connections.opened} | ${c.anvil} | ${c.buyers} | ${ch.plainCpuMs}, ${ch.unpaidCpuMs} | ${r.verifySerial.p50Ms}, ${r.addedP50Ms} | ${r.ledger.commitsPerPaid} | ${ch.transactionsInPhase} | ${ch.chargedAsCounted === ch.buyers && ch.escrowUntouched === ch.buyers ? `all ${ch.buyers} channels` : `MISMATCH (${ch.chargedAsCounted}/${ch.buyers} charged, ${ch.escrowUntouched}/${ch.buyers} escrow)`} |`,
      );
    }
  }
  log("");
  const ratios: Record<string, { whole: number; process: number }> = {};
  for (const variant of exactVariants.filter((v) => v.stack === "project")) {
    ratios[variant.name] = {
      whole: round(mean(variant.name, whole) / mean("stock", whole)),
      process: round(mean(variant.name, processOnly) / mean("stock", processOnly)),
    };
    const r = ratios[variant.name] as { whole: number; process: number };
    log(
      `server side per paid request, ${variant.name.padEnd(26)} / stock   ${r.whole.toFixed(2)}x counted whole (its process alone ${r.process.toFixed(2)}x)   goal <= ${GOAL_CPU_RATIO}x: ${met(r.whole <= GOAL_CPU_RATIO)}`,
    );
  }
  for (const variant of exactVariants) {
    log(
      `verify-only added p50, ${variant.name.padEnd(26)} ${mean(variant.name, added).toFixed(2)} ms   goal <= ${GOAL_ADDED_P50_MS} ms: ${met(mean(variant.name, added) <= GOAL_ADDED_P50_MS)}`,
    );
  }
  // Issue 53: a request through an open channel, against the stock channel and the project's own exact.
  const channelRatios: Record<string, { vsStock: number; vsExact: number | null; processVsStock: number }> =
    {};
  for (const variant of variants.filter((v) => v.scheme === "batch-settlement" && v.stack === "project")) {
    const own = mean(variant.name, whole);
    const exact = mean(exactOf(variant.name), whole);
    const r = {
      vsStock: round(own / mean(`${CHANNEL}stock`, whole)),
      vsExact: Number.isNaN(exact) ? null : round(own / exact),
      processVsStock: round(mean(variant.name, processOnly) / mean(`${CHANNEL}stock`, processOnly)),
    };
    channelRatios[variant.name] = r;
    log(
      `per request through an open channel, ${exactOf(variant.name).padEnd(24)} project / stock channel ${r.vsStock.toFixed(2)}x (its process alone ${r.processVsStock.toFixed(2)}x)  goal <= ${GOAL_CHANNEL_VS_STOCK}x: ${met(r.vsStock <= GOAL_CHANNEL_VS_STOCK)}   / project exact ${r.vsExact === null ? "n/a (--schemes without exact)" : `${r.vsExact.toFixed(2)}x  goal <= ${GOAL_CHANNEL_VS_EXACT}x: ${met(r.vsExact <= GOAL_CHANNEL_VS_EXACT)}`}`,
    );
  }
  const stockChannel = mean(`${CHANNEL}stock`, whole);
  const stockExact = mean("stock", whole);
  if (!Number.isNaN(stockChannel) && !Number.isNaN(stockExact))
    log(
      `for reference, the stock stack's own: channel / exact ${(stockChannel / stockExact).toFixed(2)}x (${stockChannel.toFixed(2)} / ${stockExact.toFixed(2)} ms)`,
    );
  const v1Ratios = reportV1(v1);
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
      channelRatios,
      addedP50Ms: Object.fromEntries(variants.map((v) => [v.name, round(mean(v.name, added))])),
      goals: {
        cpuRatio: GOAL_CPU_RATIO,
        addedP50Ms: GOAL_ADDED_P50_MS,
        channelVsStock: GOAL_CHANNEL_VS_STOCK,
        channelVsExact: GOAL_CHANNEL_VS_EXACT,
        v1VsV2: GOAL_V1_VS_V2,
      },
      verifyFloor: floors,
      v1,
      v1Ratios,
      allSettled: results.every((r) => r.settledOnChain) && v1.every((c) => c.settledOnChain),
    }),
  );
  // A payment charged and not settled, or settled twice, makes every figure above meaningless.
  if (!results.every((r) => r.settledOnChain) || !v1.every((c) => c.settledOnChain)) process.exitCode = 1;
}

type Stack = StackOptions["stack"];

interface Running {
  pid: number;
  urls: StackUrls;
  payTo: `0x${string}`;
  verifyPayTo: `0x${string}`;
  /** The account its facilitator settles from. */
  facilitator: `0x${string}`;
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
        facilitator: privateKeyToAccount(options.facilitatorKey).address,
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
  scheme: Scheme;
  plainSerial: ReturnType<typeof figures>;
  /** Exact: verify only, one at a time. Channels: one voucher at a time (paid in full, nothing on chain). */
  verifySerial: ReturnType<typeof figures>;
  /** Exact: verify only at the bench's concurrency. Channels: none. */
  verify: ReturnType<typeof figures> | null;
  /** Exact: paid and settled on chain. Channels: vouchers through open channels. */
  paid: ReturnType<typeof figures> & { blocks: number };
  /** `verifySerial`'s p50 minus plain's. */
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
  /** Exact: every payment settled on chain. Channels: every check of `channel` passed. */
  settledOnChain: boolean;
  /**
   * The paid phase on the machine's monotonic clock (µs; V8's CPU profiles use the same), to read a stack's
   * profile over that phase alone (`npx tsx bench/cpu-profile.ts PROFILE --from A --to B`).
   */
  phaseUs: [number, number];
  channel?: ChannelCheck;
  /** Exact: the gas of the paid phase's settlement transactions, per payment (`paidPhaseGas`). */
  gas?: Awaited<ReturnType<typeof paidPhaseGas>>;
}

/** What a channel stack's state and the chain say after its voucher phase. */
interface ChannelCheck {
  buyers: number;
  /** Buyers whose channel the server charged exactly their successful requests x price, no reservation left. */
  chargedAsCounted: number;
  /** Successful requests through the channels so far (deposits and warm-ups included), and x price. */
  requests: number;
  expectedAtomic: string;
  /** What the server's channel state says it charged, all channels. */
  chargedAtomic: string;
  /**
   * The server side's CPU per request at the bench's concurrency, counted whole (3 s each): plain, and the
   * paid route's unpaid 402 (a voucher's first leg; the second carries the voucher).
   */
  plainCpuMs: number;
  unpaidCpuMs: number;
  /** When the 402s were measured (µs, as `phaseUs`), to read the profile over them alone. */
  unpaidUs: [number, number];
  /** Buyers whose channel on the escrow holds the whole deposit with nothing claimed. */
  escrowUntouched: number;
  /** Transactions mined during the voucher phase (any account), and left waiting after it. */
  transactionsInPhase: number;
  pendingAfter: number;
}

/** A phase's CPU per successful request, counted whole and apart, logged as `label`'s. */
function phaseCpu(
  label: string,
  count: ReturnType<ReturnType<typeof meterCpu>["stop"]>,
  ok: number,
  anvilMs: number,
  buyersMs: number,
) {
  const per = (ms: number) => round(ms / Math.max(1, ok));
  const processMs = count.processes.stack ?? 0;
  const backendsMs = count.backends.stack ?? 0;
  const cpuMsPerPaid = {
    whole: per(processMs + backendsMs + count.postgresServer),
    process: per(processMs),
    backends: per(backendsMs),
    postgresServer: per(count.postgresServer),
    anvil: per(anvilMs),
    buyers: per(buyersMs),
    machine: per(count.machine),
  };
  const connections = count.connections.stack ?? { most: 0, opened: 0 };
  log(
    `CPU per ${label}: ${cpuMsPerPaid.whole} ms counted whole = process ${cpuMsPerPaid.process} + its PostgreSQL backends ${cpuMsPerPaid.backends} (${connections.most} connections at most, ${connections.opened} opened) + the PostgreSQL server's own ${cpuMsPerPaid.postgresServer}; apart: anvil ${cpuMsPerPaid.anvil} ms, buyers ${cpuMsPerPaid.buyers} ms, machine ${cpuMsPerPaid.machine} ms`,
  );
  return { cpuMsPerPaid, connections };
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

/** What `measure` and `measureV1` are given: the chain, and the v2 and v1 buyers (one per worker). */
interface ExactContext {
  devnet: Devnet;
  miner: ReturnType<typeof startBenchMiner>;
  signers: x402Client[];
  payingFetch: (typeof fetch)[];
  v1Fetch: ReturnType<typeof wrapFetchV1>[];
  /** Which round this is: the v1 and v2 paid phases take turns going first. */
  round: number;
}

/** One paid phase of an exact stack, as measured: its requests, CPU counted whole, commits, blocks. */
interface PaidPhase {
  paid: ReturnType<typeof figures> & { blocks: number };
  cpuMsPerPaid: StackResult["cpuMsPerPaid"];
  connections: StackResult["connections"];
  commitsPerPaid: number;
  statementsPerPaid: number;
  phaseUs: [number, number];
}

/** A project exact stack paid by v2 clients and by v1 clients, phase against phase (`--v1`). */
interface V1Comparison {
  name: string;
  v2: PaidPhase;
  v1: PaidPhase;
  /** Every payment of the stack so far on chain, once (`checkOnChain`). */
  settledOnChain: boolean;
}

/** One exact payment by a v2 buyer (`@x402/fetch`): calc's answer and a settlement's receipt, else why not. */
async function payV2(ctx: ExactContext, running: Running, worker: number): Promise<string | null> {
  const response = await (ctx.payingFetch[worker] as typeof fetch)(url(running.urls.paid));
  const failure = await expectCalc(response);
  if (failure) return failure;
  const receipt = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE") ?? "");
  return receipt.success && receipt.transaction ? null : "no settlement receipt";
}

/** The same by a v1 buyer (`x402-fetch` 1.2.0): its receipt is `X-PAYMENT-RESPONSE`. */
async function payV1(ctx: ExactContext, running: Running, worker: number): Promise<string | null> {
  const response = await (ctx.v1Fetch[worker] as ExactContext["v1Fetch"][number])(url(running.urls.paid));
  const failure = await expectCalc(response);
  if (failure) return failure;
  const header = response.headers.get("X-PAYMENT-RESPONSE");
  if (!header) return "no X-PAYMENT-RESPONSE";
  const receipt = decodeXPaymentResponse(header);
  return receipt.success && receipt.transaction ? null : "no settlement receipt";
}

/** The exact paid phases' length: `--requests` when given, else `--seconds`. */
const paidLimit = () => (flags.requests > 0 ? { total: flags.requests } : { seconds: flags.seconds });

/** One paid phase at the bench's concurrency, `pay(worker)` per request, the server side counted whole. */
async function paidPhase(
  label: string,
  running: Running,
  ctx: ExactContext,
  pay: (worker: number) => Promise<string | null>,
): Promise<PaidPhase> {
  const blocksBefore = ctx.miner.blocks;
  const anvilBefore = processCpuMs(ctx.devnet.pid) ?? 0;
  const buyersBefore = process.cpuUsage();
  const meter = meterCpu({ stack: running.pid });
  const phaseStart = monotonicUs();
  const commits = await commitsOver(running, () => load(flags.concurrency, paidLimit(), pay));
  const count = meter.stop();
  const phaseUs: [number, number] = [phaseStart, monotonicUs()];
  const buyersUsage = process.cpuUsage(buyersBefore);
  const anvilMs = (processCpuMs(ctx.devnet.pid) ?? anvilBefore) - anvilBefore;
  const paid = commits.result;
  summary(`${label}, concurrency ${flags.concurrency}`, paid);
  const { cpuMsPerPaid, connections } = phaseCpu(
    label,
    count,
    paid.ok,
    anvilMs,
    (buyersUsage.user + buyersUsage.system) / 1000,
  );
  return {
    paid: { ...figures(paid), blocks: ctx.miner.blocks - blocksBefore },
    cpuMsPerPaid,
    connections,
    commitsPerPaid: round(commits.commits / Math.max(1, paid.ok)),
    statementsPerPaid: round(commits.statements / Math.max(1, paid.ok)),
    phaseUs,
  };
}

/** The v2 and the v1 paid phases, in this round's order (they take turns going first). */
async function paidPhases(running: Running, ctx: ExactContext, withV1: boolean) {
  const v2 = () => paidPhase("paid request", running, ctx, (worker) => payV2(ctx, running, worker));
  const v1 = () => paidPhase("v1 paid request", running, ctx, (worker) => payV1(ctx, running, worker));
  if (!withV1) return { v2: await v2(), v1: null };
  if (ctx.round % 2 === 1) {
    const first = await v1();
    return { v2: await v2(), v1: first };
  }
  const first = await v2();
  return { v2: first, v1: await v1() };
}

/**
 * Every payment of the stack on chain: the merchant's balance and Transfer logs, after `more` payments
 * (warm-ups included), over all rounds and phases.
 */
async function checkOnChain(running: Running, ctx: ExactContext, stack: string, more: number) {
  for (let i = 0; i < 200 && (await ctx.miner.pending()) > 0; i++)
    await new Promise((r) => setTimeout(r, 20));
  paidSoFar.set(stack, (paidSoFar.get(stack) ?? 0) + more);
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
  const settled = balance === BigInt(expected) * PRICE_ATOMIC && transfers === expected;
  log(
    `on chain: ${transfers} Transfer logs to the merchant, balance ${balance} (expected ${expected} x ${PRICE_ATOMIC}): ${settled ? "every payment settled" : "MISMATCH"}`,
  );
  return settled;
}

/**
 * Warms the stack up (JIT, connections, /supported) with each buyer kind the phases use: a payment per
 * worker, all at once, as the phases pay. Five one at a time warmed the serial path only: in a run of 50
 * requests each, the first paid phase then took 2.4x the wall time of the second (1.3x with this). Returns how
 * many it paid.
 */
async function warmUp(running: Running, ctx: ExactContext, withV1: boolean): Promise<number> {
  const kinds = withV1 ? [payV2, payV1] : [payV2];
  for (const pay of kinds) {
    const warm = await load(flags.concurrency, { total: flags.concurrency }, (worker) =>
      pay(ctx, running, worker),
    );
    if (warm.failures.size > 0) {
      await diagnose(ctx.devnet, running);
      const why = [...warm.failures].map(([reason, n]) => `${n}x ${reason}`).join("; ");
      throw new Error(`${running.urls.paid}: warm-up payments (${pay.name}) failed: ${why}`);
    }
  }
  return flags.concurrency * kinds.length;
}

/** `--v1 only`: a project exact stack's v2 and v1 paid phases, nothing else. */
async function measureV1(variant: Variant, running: Running, ctx: ExactContext): Promise<V1Comparison> {
  for (let i = 0; i < 20; i++) await expectCalc(await fetch(url(running.urls.plain)));
  const warm = await warmUp(running, ctx, true);
  const phases = await paidPhases(running, ctx, true);
  const v1 = phases.v1 as PaidPhase;
  const settledOnChain = await checkOnChain(
    running,
    ctx,
    variant.name,
    warm + phases.v2.paid.ok + v1.paid.ok,
  );
  return { name: variant.name, v2: phases.v2, v1, settledOnChain };
}

/** The v1 / v2 ratios of the server side's CPU per paid request, per stack (means over rounds), printed. */
function reportV1(comparisons: V1Comparison[]) {
  const ratios: Record<string, { v1Ms: number; v2Ms: number; ratio: number }> = {};
  for (const name of [...new Set(comparisons.map((c) => c.name))]) {
    const of = comparisons.filter((c) => c.name === name);
    const mean = (pick: (c: V1Comparison) => number) => of.reduce((a, c) => a + pick(c), 0) / of.length;
    const v1Ms = mean((c) => c.v1.cpuMsPerPaid.whole);
    const v2Ms = mean((c) => c.v2.cpuMsPerPaid.whole);
    const r = { v1Ms: round(v1Ms), v2Ms: round(v2Ms), ratio: round(v1Ms / v2Ms, 3) };
    ratios[name] = r;
    log(
      `server side per paid exact request, ${name.padEnd(26)} v1 ${r.v1Ms} ms / v2 ${r.v2Ms} ms = ${r.ratio.toFixed(3)}x counted whole (${of.map((c) => `${c.v1.paid.ok} + ${c.v2.paid.ok}`).join(", ")} requests)   goal <= ${GOAL_V1_VS_V2}x: ${r.ratio <= GOAL_V1_VS_V2 ? "met" : "MISSED"}`,
    );
  }
  return ratios;
}

async function measure(
  variant: Variant,
  running: Running,
  ctx: ExactContext,
): Promise<{ result: StackResult; v1: V1Comparison | null }> {
  const { urls } = running;
  const stack = variant.name;
  // v1 clients pay the project's paid app (its v1 front); the stock stack's middleware speaks v2 only.
  const withV1 = flags.v1 === "on" && variant.stack === "project";
  // Warm-up: JIT, connections, the resource server's /supported, a few real payments.
  for (let i = 0; i < 20; i++) await expectCalc(await fetch(url(urls.plain)));
  const warm = await warmUp(running, ctx, withV1);

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

  const firstBlock = BigInt(await rpc<string>(ctx.devnet.rpc, "eth_blockNumber", [])) + 1n;
  const phases = await paidPhases(running, ctx, withV1);
  const paid = phases.v2;
  const ledger = {
    commitsPerPaid: paid.commitsPerPaid,
    statementsPerPaid: paid.statementsPerPaid,
    commitsPerVerifyOnly: round(verifyCommits.commits / Math.max(1, verifySerial.ok)),
  };
  log(
    `ledgers: ${ledger.commitsPerPaid} commits (${ledger.statementsPerPaid} statements) per paid request, ${ledger.commitsPerVerifyOnly} commits per verify-only request`,
  );

  const settledOnChain = await checkOnChain(
    running,
    ctx,
    stack,
    warm + paid.paid.ok + (phases.v1?.paid.ok ?? 0),
  );
  const gas = await paidPhaseGas(ctx.devnet, running.payTo, firstBlock);
  log(
    `gas of the paid phase's settlements: ${gas.perPayment} per exact payment (${gas.payments} payments in ${gas.transactions} transactions, ${gas.paymentsPerTransaction} a transaction)`,
  );
  const result: StackResult = {
    name: variant.name,
    stack: variant.stack,
    db: variant.db,
    hop: variant.hop,
    scheme: variant.scheme,
    plainSerial: figures(plainSerial),
    verifySerial: figures(verifySerial),
    verify: figures(verify),
    paid: paid.paid,
    addedP50Ms: round(verifySerial.p50 - plainSerial.p50),
    cpuMsPerPaid: paid.cpuMsPerPaid,
    connections: paid.connections,
    ledger,
    settledOnChain,
    phaseUs: paid.phaseUs,
    gas,
  };
  return {
    result,
    v1: phases.v1 ? { name: variant.name, v2: paid, v1: phases.v1, settledOnChain } : null,
  };
}

/**
 * The gas the facilitator's settlements of the paid phase used, per payment (issue 66): every transaction
 * that carried a Transfer to the merchant from `fromBlock` on (the paid phase's; the chain check above waited
 * for the last), its receipt's gas used, over the Transfers they carried. A transaction carrying several
 * payments (grouped through Multicall3) is counted once.
 */
async function paidPhaseGas(devnet: Devnet, payTo: `0x${string}`, fromBlock: bigint) {
  const logs = await rpc<{ transactionHash: `0x${string}` }[]>(devnet.rpc, "eth_getLogs", [
    {
      fromBlock: `0x${fromBlock.toString(16)}`,
      toBlock: "latest",
      address: BASE_USDC,
      topics: [TRANSFER_TOPIC, null, pad(payTo)],
    },
  ]);
  const hashes = [...new Set(logs.map((l) => l.transactionHash))];
  let used = 0n;
  for (const hash of hashes) {
    const receipt = await rpc<{ gasUsed: string }>(devnet.rpc, "eth_getTransactionReceipt", [hash]);
    used += BigInt(receipt.gasUsed);
  }
  const payments = logs.length;
  return {
    payments,
    transactions: hashes.length,
    gasUsed: used.toString(),
    perPayment: payments === 0 ? 0 : Math.round(Number(used) / payments),
    paymentsPerTransaction: round(payments / Math.max(1, hashes.length)),
  };
}

/** What the chain holds of a stack's facilitator's transactions, when a settlement failed. */
async function diagnose(devnet: Devnet, running: Running) {
  const nonce = (tag: string) =>
    rpc<string>(devnet.rpc, "eth_getTransactionCount", [running.facilitator, tag]);
  log(
    `the facilitator ${running.facilitator}: nonce ${Number(await nonce("latest"))} mined, ${Number(await nonce("pending"))} pending; txpool ${JSON.stringify(await rpc(devnet.rpc, "txpool_inspect", []))}`,
  );
  // What the stack wrote about it, before this process stops.
  await new Promise((r) => setTimeout(r, 1000));
}

/** Each channel stack's buyers: one channel each, and how many of their requests through it succeeded. */
const channelBuyers = new Map<string, { pay: (typeof fetch)[]; ok: number[] }>();

/**
 * A channel stack measured (see the file's comment): channels opened (first round) and warmed up, plain and
 * one voucher at a time, vouchers at the bench's concurrency counted whole, then the server's channel state
 * and the chain checked.
 */
async function measureChannel(
  variant: Variant,
  running: Running,
  ctx: { devnet: Devnet; miner: ReturnType<typeof startBenchMiner> },
): Promise<StackResult> {
  const { urls } = running;
  const stack = variant.name;
  let buyers = channelBuyers.get(stack);
  if (!buyers) {
    buyers = {
      // The SDK's batch-settlement client, depositing $5 the first time; a channel per buyer and receiver.
      pay: ctx.devnet.buyers.map((b) =>
        wrapFetchWithPayment(fetch, channelPayer(channelClient(ctx.devnet, b, { deposit: CHANNEL_DEPOSIT }))),
      ),
      ok: ctx.devnet.buyers.map(() => 0),
    };
    channelBuyers.set(stack, buyers);
  }
  const { pay, ok } = buyers;
  /** One paid request through buyer `i`'s channel; `deposit`: the one that opens it (a transaction). */
  const payOnce = async (i: number, deposit = false): Promise<string | null> => {
    const response = await (pay[i] as typeof fetch)(url(urls.paid));
    const required = response.headers.get("PAYMENT-REQUIRED");
    if (response.status === 402 && required)
      return `402: ${decodePaymentRequiredHeader(required).error ?? "no reason given"}`;
    const settled = response.headers.get("PAYMENT-RESPONSE");
    if (response.status === 402 && settled) {
      const failed = decodePaymentResponseHeader(settled);
      return `402, settlement failed: ${failed.errorReason ?? "no reason given"}${failed.errorMessage ? ` (${failed.errorMessage})` : ""}`;
    }
    const failure = await expectCalc(response);
    if (failure) return failure;
    const receipt = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE") ?? "");
    if (!receipt.success) return "no payment receipt";
    // The request was answered and charged, whatever the receipt says next: counted for the check.
    ok[i] = (ok[i] ?? 0) + 1;
    if (deposit !== Boolean(receipt.transaction))
      return deposit ? "no deposit transaction" : "a voucher answered with a transaction";
    return null;
  };
  const must = (why: string | null, what: string) => {
    if (why !== null) throw new Error(`${stack}: ${what} failed: ${why}`);
  };

  for (let i = 0; i < 20; i++) await expectCalc(await fetch(url(urls.plain)));
  // Open: each buyer's first request deposits into its channel (not timed, not counted), one after another:
  // the stock facilitator's viem nonce manager now and then gives two concurrent deposits a nonce already
  // used ("Nonce provided for the transaction is lower than the current nonce"; about one run in five).
  const opening = ok.every((n) => n === 0);
  if (opening) {
    const t0 = performance.now();
    for (const i of pay.keys()) {
      const why = await payOnce(i, true);
      if (why !== null) {
        await diagnose(ctx.devnet, running);
      }
      must(why, "opening a channel");
    }
    log(
      `channels opened: ${pay.length} deposits of ${CHANNEL_DEPOSIT} in ${Math.round(performance.now() - t0)} ms`,
    );
  }
  for (let i = 0; i < 200 && (await ctx.miner.pending()) > 0; i++)
    await new Promise((r) => setTimeout(r, 20));
  await Promise.all(
    pay.map(async (_, i) => {
      for (let n = 0; n < CHANNEL_WARM_UP; n++) must(await payOnce(i), "a warm-up voucher");
    }),
  );

  const plainSerial = await load(1, { total: flags.serial }, async () =>
    expectCalc(await fetch(url(urls.plain))),
  );
  summary("plain, one at a time", plainSerial);
  const voucherSerial = await load(1, { total: flags.serial }, () => payOnce(0));
  summary("one voucher at a time", voucherSerial);
  const { cpuMs: plainCpuMs } = await cpuPerRequest(running, async () =>
    expectCalc(await fetch(url(urls.plain))),
  );
  const { cpuMs: unpaidCpuMs, windowUs: unpaidUs } = await cpuPerRequest(running, async () => {
    const response = await fetch(url(urls.paid));
    await response.arrayBuffer();
    return response.status === 402 && response.headers.has("PAYMENT-REQUIRED")
      ? null
      : `status ${response.status}`;
  });
  log(
    `CPU per request at concurrency ${flags.concurrency}, counted whole: plain ${plainCpuMs} ms, the paid route's 402 ${unpaidCpuMs} ms`,
  );

  const blockBefore = BigInt(await rpc<string>(ctx.devnet.rpc, "eth_blockNumber", []));
  const blocksBefore = ctx.miner.blocks;
  const anvilBefore = processCpuMs(ctx.devnet.pid) ?? 0;
  const buyersBefore = process.cpuUsage();
  const meter = meterCpu({ stack: running.pid });
  const phaseStart = monotonicUs();
  const paidCommits = await commitsOver(running, () =>
    load(flags.concurrency, { seconds: flags.seconds }, (worker) => payOnce(worker)),
  );
  const count = meter.stop();
  const phaseUs: [number, number] = [phaseStart, monotonicUs()];
  const buyersUsage = process.cpuUsage(buyersBefore);
  const anvilMs = (processCpuMs(ctx.devnet.pid) ?? anvilBefore) - anvilBefore;
  const paid = paidCommits.result;
  const blocks = ctx.miner.blocks - blocksBefore;
  summary(`vouchers, concurrency ${flags.concurrency}`, paid);
  // Whatever the phase sent is mined within a few ticks: wait for it, then count what the blocks hold.
  await new Promise((r) => setTimeout(r, 10 * flags["mine-ms"] + 100));
  const blockAfter = BigInt(await rpc<string>(ctx.devnet.rpc, "eth_blockNumber", []));
  let transactionsInPhase = 0;
  for (let b = blockBefore + 1n; b <= blockAfter; b++)
    transactionsInPhase += Number(
      await rpc<string>(ctx.devnet.rpc, "eth_getBlockTransactionCountByNumber", [toHex(b)]),
    );
  const pendingAfter = await ctx.miner.pending();

  const { cpuMsPerPaid, connections } = phaseCpu(
    "voucher",
    count,
    paid.ok,
    anvilMs,
    (buyersUsage.user + buyersUsage.system) / 1000,
  );
  const ledger = {
    commitsPerPaid: round(paidCommits.commits / Math.max(1, paid.ok)),
    statementsPerPaid: round(paidCommits.statements / Math.max(1, paid.ok)),
    commitsPerVerifyOnly: 0,
  };
  log(`ledgers: ${ledger.commitsPerPaid} commits (${ledger.statementsPerPaid} statements) per voucher`);

  // The server's channel state against the requests counted, and the escrow against the deposits.
  const listed = (await (await fetch(urls.channels as string)).json()) as BenchChannel[];
  const reader = createPublicClient({ chain: devnetChain(ctx.devnet.rpc), transport: http(ctx.devnet.rpc) });
  let chargedAsCounted = 0;
  let escrowUntouched = 0;
  let charged = 0n;
  const requests = ok.reduce((a, b) => a + b, 0);
  for (const [i, buyer] of ctx.devnet.buyers.entries()) {
    const row = listed.find((c) => c.payer === buyer.address.toLowerCase());
    if (!row) continue;
    charged += BigInt(row.charged);
    if (BigInt(row.charged) === BigInt(ok[i] ?? 0) * PRICE_ATOMIC && !row.pending) chargedAsCounted++;
    const [balance, totalClaimed] = (await reader.readContract({
      address: X402_BATCH_SETTLEMENT_ADDRESS,
      abi: batchSettlementAbi,
      functionName: "channels",
      args: [row.channelId as `0x${string}`],
    })) as readonly [bigint, bigint];
    if (balance === CHANNEL_DEPOSIT && totalClaimed === 0n && row.balance === CHANNEL_DEPOSIT.toString())
      escrowUntouched++;
    else
      log(
        `${buyer.address}'s channel ${row.channelId}: escrow balance ${balance}, claimed ${totalClaimed}; the server's record balance ${row.balance}, claimed ${row.totalClaimed} (deposit ${CHANNEL_DEPOSIT})`,
      );
  }
  const channel: ChannelCheck = {
    buyers: ctx.devnet.buyers.length,
    chargedAsCounted,
    requests,
    expectedAtomic: (BigInt(requests) * PRICE_ATOMIC).toString(),
    chargedAtomic: charged.toString(),
    escrowUntouched,
    transactionsInPhase,
    pendingAfter,
    plainCpuMs,
    unpaidCpuMs,
    unpaidUs,
  };
  const allGood =
    chargedAsCounted === channel.buyers &&
    escrowUntouched === channel.buyers &&
    transactionsInPhase === 0 &&
    pendingAfter === 0;
  log(
    `channels: ${chargedAsCounted}/${channel.buyers} charged exactly their requests x ${PRICE_ATOMIC} (${requests} requests so far: ${channel.expectedAtomic} expected, ${channel.chargedAtomic} charged); escrow holds the deposit, nothing claimed: ${escrowUntouched}/${channel.buyers}; ${transactionsInPhase} transactions in ${blockAfter - blockBefore} blocks during the voucher phase, ${pendingAfter} waiting: ${allGood ? "no chain write, every charge counted" : "MISMATCH"}`,
  );
  return {
    name: variant.name,
    stack: variant.stack,
    db: variant.db,
    hop: variant.hop,
    scheme: variant.scheme,
    plainSerial: figures(plainSerial),
    verifySerial: figures(voucherSerial),
    verify: null,
    paid: { ...figures(paid), blocks },
    addedP50Ms: round(voucherSerial.p50 - plainSerial.p50),
    cpuMsPerPaid,
    connections,
    ledger,
    settledOnChain: allGood,
    channel,
    phaseUs,
  };
}

/** The stack's server side CPU per successful `request`, counted whole, at the bench's concurrency for 3 s. */
async function cpuPerRequest(
  running: Running,
  request: () => Promise<string | null>,
): Promise<{ cpuMs: number; windowUs: [number, number] }> {
  await load(flags.concurrency, { total: flags.concurrency * 5 }, request);
  const meter = meterCpu({ stack: running.pid });
  const start = monotonicUs();
  const done = await load(flags.concurrency, { seconds: 3 }, request);
  const count = meter.stop();
  const windowUs: [number, number] = [start, monotonicUs()];
  if (done.failures.size > 0)
    log(`failed: ${[...done.failures].map(([why, n]) => `${n}x ${why}`).join("; ")}`);
  const ms = (count.processes.stack ?? 0) + (count.backends.stack ?? 0) + count.postgresServer;
  return { cpuMs: round(ms / Math.max(1, done.ok)), windowUs };
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
 * ledger row, and the merchant's outcome (`src/merchant-kit/payments/ledger/payment-ledger.ts`, `src/facilitator/authorization-ledger.ts`).
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

/** The machine's monotonic clock in µs (CLOCK_MONOTONIC, the clock of V8's profile timestamps). */
function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

function round(x: number, digits = 2) {
  return Number(x.toFixed(digits));
}

try {
  await main();
} finally {
  for (const close of closers.reverse()) await close().catch(() => undefined);
}
