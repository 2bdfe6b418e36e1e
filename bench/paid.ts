/**
 * Paid-request benchmark (`npm run bench:paid [-- --concurrency N --seconds N ...]`).
 *
 * One run on a devnet (anvil), one process for the servers and the load (the chain is anvil's own process):
 *
 * 1. **Unpaid baseline**: `/api/calc` served by a plain Hono app on 127.0.0.1 with the same input validation
 *    (`validateInput(calc)`) and the same handler (`calc.handler`, i.e. the calc engine), no payment middleware.
 * 2. **Verify only**: the platform's `merchantApp` with only `calc`, its facilitator client passing `verify` to
 *    the project's facilitator (over HTTP, as in production) and answering `settle` at once with a success
 *    without touching the chain. Buyers send payments signed before the timed phase (`PAYMENT-SIGNATURE`),
 *    so a request is: middleware, facilitator `/verify` (HTTP, its checks and RPC reads), replay lock,
 *    handler. Added latency = its p50 minus the baseline's, at the load concurrency and one at a time.
 * 3. **Paid end to end**: the same merchant app with the real facilitator client; one buyer per worker
 *    with `@x402/fetch` (402, sign EIP-3009 with a random nonce, pay, verify, handler, settle on chain and
 *    wait for the receipt). Every payment is then checked on chain: the merchant's USDC balance must be
 *    exactly `paid x price`, and the Transfer logs to the merchant must number `paid`. The phase's CPU time
 *    per paid request is printed for this process, anvil, PostgreSQL and the whole machine (Linux /proc):
 *    the machine's figure bounds the paid rate these cores can reach.
 *
 * The devnet mines only when transactions wait (`--miner pending`, polled every `--mine-ms`) or every
 * `--mine-ms` whatever waits (`--miner interval`); never automine. Block timestamps follow the wall clock
 * (`anvil_removeBlockTimestampInterval`): the devnet's Base rule of 2 s per block would put the chain
 * clock minutes ahead at tens of blocks a second, and authorizations (valid for 300 s) would expire.
 *
 * Flags: --concurrency N (32), --seconds N (per timed phase, 15), --serial N (requests one at a time for
 * the added latency, 200), --mine-ms N (5), --miner pending|interval, --poll-ms N (the facilitator's
 * receipt polling, 10), --facilitator http|inprocess, --db pglite|postgres (default postgres when
 * DATABASE_URL is set).
 */
import fs from "node:fs";
import os from "node:os";
import { x402Client } from "@x402/core/client";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import { type FacilitatorClient, HTTPFacilitatorClient } from "@x402/core/server";
import type { PaymentRequired } from "@x402/core/types";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { Hono, type MiddlewareHandler } from "hono";
import { createTestClient, http, pad } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { BASE_USDC } from "../src/chain/base.ts";
import { type Devnet, devnetChain, startDevnet } from "../src/chain/devnet/index.ts";
import { type Listening, listen, listenWithUrl } from "../src/common/listen.ts";
import { inProcessClient } from "../src/facilitator/index.ts";
import { TRANSFER_TOPIC } from "../src/indexer/decode.ts";
import { merchantApp } from "../src/merchant-kit/app.ts";
import type { Merchant } from "../src/merchant-kit/catalogue.ts";
import { type MerchantEnv, validateInput } from "../src/merchant-kit/input.ts";
import { calc } from "../src/merchants/utility/calc.ts";
import { openTestDatabase } from "../test/helpers/db.ts";
import { devnetFacilitator } from "../test/helpers/facilitator.ts";
import { testConfig } from "../test/helpers/merchant.ts";
import { rpc } from "../test/helpers/settle.ts";
import { NETWORK, usdcReader } from "../test/helpers/x402.ts";

const GOAL_PAID_RPS = 200;
const GOAL_ADDED_P50_MS = 5;
const PRICE_ATOMIC = 1000n; // calc's $0.001
const EXPRESSION = "2^200 + 1/7";

function parseFlags(argv: string[]) {
  const flags = {
    concurrency: 32,
    seconds: 15,
    serial: 200,
    "mine-ms": 5,
    miner: "pending" as "pending" | "interval",
    "poll-ms": 10,
    facilitator: "http" as "http" | "inprocess",
    db: (process.env.DATABASE_URL ? "postgres" : "pglite") as "pglite" | "postgres",
  };
  const choices: Record<string, string[]> = {
    miner: ["pending", "interval"],
    facilitator: ["http", "inprocess"],
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
 * CPU time spent so far, in milliseconds: this process (all its threads), anvil, every PostgreSQL server
 * process (backends included) and the whole machine (every core, from /proc/stat). Linux only; what
 * cannot be read counts as 0.
 */
function cpuSnapshot(anvilPid: number) {
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
  let postgres = 0;
  for (const pid of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    const stat = read(`/proc/${pid}/stat`);
    if (stat.includes("(postgres)")) postgres += ofStat(stat);
  }
  const anvilStat = read(`/proc/${anvilPid}/stat`);
  const cpu = read("/proc/stat").split("\n")[0]?.split(/\s+/).slice(1).map(Number) ?? [];
  // user nice system idle iowait irq softirq steal: busy is all but idle and iowait.
  const machine =
    cpu.length >= 8 ? (cpu.reduce((a, b) => a + b, 0) - (cpu[3] ?? 0) - (cpu[4] ?? 0)) * tick : 0;
  const usage = process.cpuUsage();
  return {
    node: (usage.user + usage.system) / 1000,
    anvil: anvilStat ? ofStat(anvilStat) : 0,
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
    `concurrency ${flags.concurrency}, ${flags.seconds} s per phase, miner ${flags.miner} every ${flags["mine-ms"]} ms, facilitator ${flags.facilitator}, ledger and merchant state on ${flags.db}`,
  );

  // --- the chain -------------------------------------------------------------------------------------
  const devnet = await startDevnet({ port: 0, buyers: flags.concurrency, blockTime: 0 });
  closers.push(() => devnet.stop());
  await fetch(devnet.rpc, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_removeBlockTimestampInterval", params: [] }),
  });
  const miner = startBenchMiner(devnet, flags.miner, flags["mine-ms"]);
  closers.push(() => miner.stop());

  // --- the facilitator and the merchant ----------------------------------------------------------------
  const ledger = await openTestDatabase(flags.db);
  closers.push(ledger.close);
  const facilitator = await devnetFacilitator(devnet, ledger.db, { pollingIntervalMs: flags["poll-ms"] });
  closers.push(() => facilitator.close());
  let client: FacilitatorClient;
  if (flags.facilitator === "http") {
    const server = await listen(facilitator.app.fetch, "127.0.0.1", 0);
    closers.push(() => server.close());
    client = new HTTPFacilitatorClient({ url: server.url });
  } else {
    client = inProcessClient(facilitator);
  }
  // Verify only: the real verify; settle answers success at once and moves nothing.
  const verifyOnly: FacilitatorClient = {
    verify: (payload, requirements) => client.verify(payload, requirements),
    settle: async (payload, requirements) => ({
      success: true,
      transaction: pad("0x00"),
      network: requirements.network,
      payer: (payload.payload as { authorization?: { from?: string } }).authorization?.from,
    }),
    getSupported: () => client.getSupported(),
  };

  const state = await openTestDatabase(flags.db);
  closers.push(state.close);
  const config = testConfig();
  const payTo = privateKeyToAccount(generatePrivateKey()).address;
  const verifyPayTo = privateKeyToAccount(generatePrivateKey()).address;
  const merchant = (payTo: `0x${string}`, publicUrl: string): Merchant => ({
    name: "bench",
    title: "Bench merchant",
    payTo,
    publicUrl,
    endpoints: [calc],
  });
  const serve = async (to: `0x${string}`, facilitatorClient: FacilitatorClient): Promise<Listening> => {
    const server = await listenWithUrl(
      async (publicUrl) =>
        (
          await merchantApp(merchant(to, publicUrl), {
            services: { db: state.db, config },
            facilitator: facilitatorClient,
            payments: config.payments,
          })
        ).fetch,
      "127.0.0.1",
      0,
    );
    closers.push(() => server.close());
    return server;
  };
  const shop = await serve(payTo, client);
  const verifyShop = await serve(verifyPayTo, verifyOnly);

  // The baseline: the same validation and handler, no payment layer.
  const plain = new Hono<MerchantEnv>();
  const handler: MiddlewareHandler<MerchantEnv> = async (c) =>
    c.json(
      await calc.handler(c.var.input as Parameters<typeof calc.handler>[0], {
        payer: "0x0000000000000000000000000000000000000000",
        signal: c.req.raw.signal,
        services: { db: state.db, config },
        request: c.req.raw,
      }),
    );
  plain.on(
    "GET",
    calc.path,
    ...([...validateInput(calc, { db: state.db, config }), handler] as [MiddlewareHandler<MerchantEnv>]),
  );
  const baselineServer = await listen(plain.fetch, "127.0.0.1", 0);
  closers.push(() => baselineServer.close());

  const buyers = devnet.buyers.map((b) => privateKeyToAccount(b.privateKey));
  const payingFetch = buyers.map((account) =>
    wrapFetchWithPayment(fetch, new x402Client().register(NETWORK, new ExactEvmClient(account))),
  );

  // Warm-up: JIT, connections, the resource servers' /supported, one real payment each way.
  for (let i = 0; i < 20; i++) await expectCalc(await fetch(url(baselineServer.url)));
  const warm = await payingFetch[0]?.(url(shop.url));
  if (!warm || (await expectCalc(warm)) !== null) throw new Error(`warm-up payment failed: ${warm?.status}`);

  // Pre-signed payments for the verify-only phases (signing is not what they time).
  const unpaid = await fetch(url(verifyShop.url));
  const required: PaymentRequired = decodePaymentRequiredHeader(unpaid.headers.get("PAYMENT-REQUIRED") ?? "");
  const signers = buyers.map((account) => new x402Client().register(NETWORK, new ExactEvmClient(account)));
  const verifyCount = Math.max(flags.serial, flags.concurrency * 40);
  log(`signing ${verifyCount + flags.serial + 20} payments for the verify-only phases ...`);
  const signStart = performance.now();
  const headers: string[] = [];
  for (let i = 0; i < verifyCount + flags.serial + 20; i++) {
    const signer = signers[i % signers.length] as x402Client;
    headers.push(encodePaymentSignatureHeader(await signer.createPaymentPayload(required)));
  }
  const signMs = (performance.now() - signStart) / headers.length;
  log(`  ${signMs.toFixed(2)} ms per signature`);
  let nextHeader = 0;
  const verifyRequest = async () => {
    const header = headers[nextHeader++];
    if (!header) throw new Error("out of signed payments");
    return expectCalc(await fetch(url(verifyShop.url), { headers: { "PAYMENT-SIGNATURE": header } }));
  };
  for (let i = 0; i < 20; i++) await verifyRequest();

  // --- phases ----------------------------------------------------------------------------------------
  const baselineSerial = await load(1, { total: flags.serial }, async () =>
    expectCalc(await fetch(url(baselineServer.url))),
  );
  summary("unpaid, one at a time", baselineSerial);
  const verifySerial = await load(1, { total: flags.serial }, verifyRequest);
  summary("verify only, one at a time", verifySerial);

  const baseline = await load(flags.concurrency, { seconds: flags.seconds }, async () =>
    expectCalc(await fetch(url(baselineServer.url))),
  );
  summary(`unpaid, concurrency ${flags.concurrency}`, baseline);
  const verify = await load(flags.concurrency, { total: verifyCount }, verifyRequest);
  summary(`verify only, concurrency ${flags.concurrency}`, verify);

  const blocksBefore = miner.blocks;
  const cpuBefore = cpuSnapshot(devnet.pid);
  const settled = new Set<string>();
  const paid = await load(flags.concurrency, { seconds: flags.seconds }, async (worker) => {
    const response = await (payingFetch[worker] as typeof fetch)(url(shop.url));
    const failure = await expectCalc(response);
    if (failure) return failure;
    const receipt = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE") ?? "");
    if (!receipt.success || !receipt.transaction) return "no settlement receipt";
    settled.add(receipt.transaction.toLowerCase());
    return null;
  });
  const paidBlocks = miner.blocks - blocksBefore;
  const cpuAfter = cpuSnapshot(devnet.pid);
  summary(`paid, concurrency ${flags.concurrency}`, paid);
  // CPU per paid request, by process: on these cores, the paid rate can be at most cores x 1000 / total ms.
  const cpuPerPaid = Object.fromEntries(
    (Object.keys(cpuAfter) as (keyof typeof cpuAfter)[]).map((k) => [
      k,
      round((cpuAfter[k] - cpuBefore[k]) / Math.max(1, paid.ok)),
    ]),
  ) as Record<keyof typeof cpuAfter, number>;
  const ceiling = (os.cpus().length * 1000) / Math.max(0.01, cpuPerPaid.machine);
  log(
    `CPU per paid request: this process ${cpuPerPaid.node} ms, anvil ${cpuPerPaid.anvil} ms, PostgreSQL ${cpuPerPaid.postgres} ms, whole machine ${cpuPerPaid.machine} ms: at most ${ceiling.toFixed(0)} paid req/s on ${os.cpus().length} cores`,
  );

  // --- every payment on chain ------------------------------------------------------------------------
  for (let i = 0; i < 200 && (await miner.pending()) > 0; i++) await new Promise((r) => setTimeout(r, 20));
  const balance = await usdcReader(devnet.rpc).balanceOf(payTo);
  const transferLogs = await rpc<unknown[]>(devnet.rpc, "eth_getLogs", [
    { fromBlock: "0x0", toBlock: "latest", address: BASE_USDC, topics: [TRANSFER_TOPIC, null, pad(payTo)] },
  ]);
  const transfers = transferLogs.length;
  const paidTotal = paid.ok + 1; // with the warm-up payment
  const onChain = balance === BigInt(paidTotal) * PRICE_ATOMIC && transfers === paidTotal;
  log(
    `on chain: ${transfers} Transfer logs to the merchant, balance ${balance} (expected ${paidTotal} x ${PRICE_ATOMIC}), ${settled.size} distinct settlement transactions, ${paidBlocks} blocks mined in the paid phase: ${onChain ? "every payment settled" : "MISMATCH"}`,
  );

  // --- figures ---------------------------------------------------------------------------------------
  const addedP50 = verify.p50 - baseline.p50;
  const addedSerialP50 = verifySerial.p50 - baselineSerial.p50;
  const ratio = paid.rps / baseline.rps;
  const met = (ok: boolean) => (ok ? "met" : "MISSED");
  log("");
  log(
    `paid req/s           ${paid.rps.toFixed(1)}   goal >= ${GOAL_PAID_RPS}: ${met(paid.rps >= GOAL_PAID_RPS)}`,
  );
  log(
    `added p50, verify    ${addedSerialP50.toFixed(2)} ms one at a time, ${addedP50.toFixed(2)} ms at concurrency ${flags.concurrency}   goal <= ${GOAL_ADDED_P50_MS} ms: ${met(addedSerialP50 <= GOAL_ADDED_P50_MS)} one at a time, ${met(addedP50 <= GOAL_ADDED_P50_MS)} under load`,
  );
  log(`ratio paid / unpaid  ${ratio.toFixed(4)} (req/s at concurrency ${flags.concurrency})`);
  const figures = (l: Load) => ({
    rps: round(l.rps),
    p50Ms: round(l.p50),
    p99Ms: round(l.p99),
    ok: l.ok,
    requests: l.requests,
    failed: Object.fromEntries(l.failures),
  });
  consoleLog(
    JSON.stringify({
      bench: "paid",
      machine: os.cpus()[0]?.model,
      cores: os.cpus().length,
      node: process.version,
      loadAverageAtStart: os.loadavg().length ? load1.map(Number) : [],
      flags,
      unpaidSerial: figures(baselineSerial),
      verifySerial: figures(verifySerial),
      unpaid: figures(baseline),
      verify: figures(verify),
      paid: { ...figures(paid), blocks: paidBlocks, transfers, settledOnChain: onChain },
      cpuMsPerPaidRequest: cpuPerPaid,
      paidRpsCeilingFromCpu: round(ceiling, 1),
      signMsPerPayment: round(signMs),
      addedP50MsSerial: round(addedSerialP50),
      addedP50Ms: round(addedP50),
      ratioPaidUnpaid: round(ratio, 4),
      goals: { paidRps: GOAL_PAID_RPS, addedP50Ms: GOAL_ADDED_P50_MS },
    }),
  );
}

function round(x: number, digits = 2) {
  return Number(x.toFixed(digits));
}

try {
  await main();
} finally {
  for (const close of closers.reverse()) await close().catch(() => undefined);
}
