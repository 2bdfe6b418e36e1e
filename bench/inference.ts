/**
 * The inference host's payment layer (`npm run bench:inference [-- --calls N --buyers N]`), in one run on a
 * devnet, with the offline engine (no model: what is measured is the platform, not inference):
 *
 * 1. **Unpaid**: the tier-2 route's own input check and handler behind a plain Hono route (no x402), over
 *    HTTP on 127.0.0.1: what a call costs without payment.
 * 2. **Paid, exact**: `/v1/chat/completions/_t/t2` through the merchant kit, paid by `@x402/fetch` (402,
 *    EIP-3009 signature, verify, handler, settlement on chain, receipt), the project's facilitator in
 *    process, one call at a time.
 * 3. **Paid, upto**: `/v1/chat/completions/_t/t2/upto` the same way (Permit2 signature for the maximum,
 *    metered settlement).
 * 4. **upto settlements per second**: `--buyers` buyers at once, each making `--calls` metered calls.
 *
 * Prints the p50 and p90 of each phase, the payment layer's added p50 (paid minus unpaid) and the
 * throughput, and checks on chain that the merchant received exactly what the answers said they settled.
 * The chain mines as soon as a settlement waits, its blocks on the wall clock (2 s a block would put the
 * chain past the buyers' 300 s authorizations). One JSON line on stdout, a table on stderr.
 */
import os from "node:os";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { wrapFetchWithPayment } from "@x402/fetch";
import { Hono, type MiddlewareHandler } from "hono";
import { startDevnet } from "../src/chain/devnet/index.ts";
import { listen } from "../src/common/listen.ts";
import { inProcessClient } from "../src/facilitator/index.ts";
import type { HandlerContext } from "../src/merchant-kit/endpoint.ts";
import { type MerchantEnv, validateInput } from "../src/merchant-kit/input.ts";
import { chatEndpoints, inferenceMerchant, OFFLINE_SETTINGS } from "../src/merchants/inference/catalogue.ts";
import { startMiner } from "../test/helpers/chain.ts";
import { openTestDatabase } from "../test/helpers/db.ts";
import { devnetFacilitator } from "../test/helpers/facilitator.ts";
import { startMerchant, testConfig } from "../test/helpers/merchant.ts";
import { newMerchant, usdcReader, x402ClientOf } from "../test/helpers/x402.ts";

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  const value = i >= 0 ? Number(args[i + 1]) : fallback;
  if (!Number.isInteger(value) || value < 1) {
    process.stderr.write(`bench:inference: --${name} takes a positive integer\n`);
    process.exit(2);
  }
  return value;
};
const CALLS = flag("calls", 60);
const BUYERS = flag("buyers", 4);
const log = (message: string) => process.stderr.write(`${message}\n`);

const BODY = JSON.stringify({
  messages: [{ role: "user", content: "Say hello to the benchmark." }],
  max_tokens: 32,
});
const post = { method: "POST", headers: { "content-type": "application/json" }, body: BODY };

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** `calls` calls one at a time: their latencies (ms); every answer must be a 200. */
async function serial(call: () => Promise<Response>, calls: number, what: string): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    const response = await call();
    const body = await response.text();
    if (response.status !== 200) throw new Error(`${what}: ${response.status} ${body.slice(0, 300)}`);
    ms.push(performance.now() - t0);
  }
  return ms;
}

const closers: (() => Promise<unknown>)[] = [];
try {
  const devnet = await startDevnet({ port: 0, buyers: BUYERS + 1, blockTime: 0 });
  closers.push(() => devnet.stop());
  const miner = startMiner(devnet, 5, "wall");
  closers.push(() => miner.stop());
  const ledger = await openTestDatabase(process.env.DATABASE_URL ? "postgres" : "pglite");
  closers.push(ledger.close);
  const facilitator = await devnetFacilitator(devnet, ledger.db);
  closers.push(() => facilitator.close());
  const state = await openTestDatabase(process.env.DATABASE_URL ? "postgres" : "pglite");
  closers.push(state.close);
  const payTo = newMerchant();
  const host = await startMerchant(
    (url) => inferenceMerchant({ payTo, publicUrl: url }, OFFLINE_SETTINGS),
    state.db,
    inProcessClient(facilitator),
    { rpcUrl: devnet.rpc },
  );
  closers.push(() => host.close());

  // The same route's input check and handler, without payment.
  const route = chatEndpoints().find((e) => e.path === "/v1/chat/completions/_t/t2");
  if (!route) throw new Error("no tier-2 route");
  const config = testConfig();
  const plain = new Hono<MerchantEnv>();
  const handle: MiddlewareHandler<MerchantEnv> = async (c) => {
    const ctx: HandlerContext = {
      payer: "0x0000000000000000000000000000000000000001",
      signal: c.req.raw.signal,
      services: { db: state.db, config },
      request: c.req.raw,
    };
    const answer = await route.handler(c.var.input, ctx);
    return answer instanceof Response ? answer : c.json(answer);
  };
  plain.on(
    "POST",
    route.path,
    ...([...validateInput(route, { db: state.db, config }), handle] as [MiddlewareHandler<MerchantEnv>]),
  );
  const unpaidServer = await listen(plain.fetch, "127.0.0.1", 0);
  closers.push(() => unpaidServer.close());

  const [first, ...others] = devnet.buyers;
  if (!first) throw new Error("no buyer");
  const pay = wrapFetchWithPayment(fetch, x402ClientOf(first));
  const exactUrl = `${host.url}/v1/chat/completions/_t/t2`;
  const uptoUrl = `${exactUrl}/upto`;
  // The first calls load the tokenizer and warm every path: not timed.
  await serial(() => fetch(`${unpaidServer.url}${route.path}`, post), 3, "warm-up unpaid");
  await serial(() => pay(exactUrl, post), 2, "warm-up exact");
  await serial(() => pay(uptoUrl, post), 2, "warm-up upto");

  log(
    `bench:inference on ${os.cpus()[0]?.model ?? "?"} x${os.cpus().length}, Node ${process.version}, ${CALLS} calls a phase`,
  );
  const unpaid = await serial(() => fetch(`${unpaidServer.url}${route.path}`, post), CALLS, "unpaid");
  const exact = await serial(() => pay(exactUrl, post), CALLS, "exact");
  const upto = await serial(() => pay(uptoUrl, post), CALLS, "upto");

  // Several buyers at once, metered calls only; what the answers say was settled must be what arrived.
  const usdc = usdcReader(devnet.rpc);
  const before = await usdc.balanceOf(payTo);
  let settled = 0n;
  const t0 = performance.now();
  await Promise.all(
    others.slice(0, BUYERS).map(async (buyer) => {
      const buyerPay = wrapFetchWithPayment(fetch, x402ClientOf(buyer));
      for (let i = 0; i < CALLS; i++) {
        const response = await buyerPay(uptoUrl, post);
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`concurrent upto: ${response.status}`);
        const receipt = decodePaymentResponseHeader(response.headers.get("payment-response") as string);
        settled += BigInt((receipt as { amount?: string }).amount ?? "0");
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const received = (await usdc.balanceOf(payTo)) - before;
  if (received !== settled) throw new Error(`the merchant received ${received}, the answers said ${settled}`);

  const p50 = (ms: number[]) => Math.round(percentile(ms, 50) * 10) / 10;
  const p90 = (ms: number[]) => Math.round(percentile(ms, 90) * 10) / 10;
  const results = {
    date: new Date().toISOString(),
    cpu: `${os.cpus()[0]?.model ?? "?"} x${os.cpus().length}`,
    calls: CALLS,
    unpaid: { p50: p50(unpaid), p90: p90(unpaid) },
    exact: { p50: p50(exact), p90: p90(exact), addedP50: Math.round((p50(exact) - p50(unpaid)) * 10) / 10 },
    upto: { p50: p50(upto), p90: p90(upto), addedP50: Math.round((p50(upto) - p50(unpaid)) * 10) / 10 },
    uptoConcurrent: {
      buyers: BUYERS,
      calls: BUYERS * CALLS,
      perSecond: Math.round(((BUYERS * CALLS) / seconds) * 10) / 10,
      settledAtomic: settled.toString(),
      receivedMatches: true,
    },
  };
  log("");
  log(`unpaid            p50 ${results.unpaid.p50} ms  p90 ${results.unpaid.p90} ms`);
  log(
    `paid, exact       p50 ${results.exact.p50} ms  p90 ${results.exact.p90} ms  (+${results.exact.addedP50} ms)`,
  );
  log(
    `paid, upto        p50 ${results.upto.p50} ms  p90 ${results.upto.p90} ms  (+${results.upto.addedP50} ms)`,
  );
  log(
    `upto, ${BUYERS} buyers at once: ${results.uptoConcurrent.perSecond} paid calls/s; settled ${settled} atomic units, all received`,
  );
  process.stdout.write(`${JSON.stringify(results)}\n`);
} finally {
  for (const close of closers.reverse()) await close().catch((error) => log(`closing: ${error}`));
}
process.exit(0);
