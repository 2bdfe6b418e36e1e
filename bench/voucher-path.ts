/**
 * A channel's voucher decided by the kit (payments/voucher-path.ts) against the same voucher through the SDK's
 * middleware (`vouchersThroughSdk`), in one process, blocks of each alternated: `npx tsx bench/voucher-path.ts
 * [--vouchers N] [--blocks B] [--warm W]`.
 *
 * Why apart from `bench:paid`: the difference is a few hundred microseconds a voucher, and `bench:paid`'s runs move
 * by a fifth from one to the next on a shared machine (each stack measured in its own minute); here both ways
 * run on the same devnet, store, channel terms and process, a few seconds apart, over and over, so what the
 * machine does beside them falls on both alike. Two hosts of one merchant on one PGlite store, a channel each
 * (opened by the SDK's client), vouchers signed beforehand, sent one at a time over HTTP on 127.0.0.1; the
 * process's CPU (host, store and the sending) per voucher, each block's, then the medians past the first
 * blocks, and the median of each block's ratio of the two ways.
 */
import { encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import { computeChannelId, signVoucher } from "@x402/evm/batch-settlement/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { startDevnet } from "../src/chain/devnet/index.ts";
import { type Listening, listenWithUrl } from "../src/common/listen.ts";
import { merchantApp } from "../src/merchant-kit/app.ts";
import { channelEndpoints, PRICE, requiredBy } from "../test/helpers/channel-shop.ts";
import { openTestDatabase } from "../test/helpers/db.ts";
import { gates } from "../test/helpers/gates.ts";
import { testConfig, testMerchant } from "../test/helpers/merchant.ts";
import { channelClient, channelPayer, stockFacilitator } from "../test/helpers/stock-facilitator.ts";
import { NETWORK, newMerchant } from "../test/helpers/x402.ts";

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}
const VOUCHERS = flag("vouchers", 200);
const BLOCKS = flag("blocks", 16);
/** The first blocks of each way, left out of the medians: the JIT and the store still warming up. */
const WARM = flag("warm", 4);

const devnet = await startDevnet({ port: 0, buyers: 1, blockTime: 1 });
const facilitator = stockFacilitator(devnet);
const store = await openTestDatabase("pglite");
const gate = gates();
const payTo = newMerchant();
const buyer = devnet.buyers[0] as (typeof devnet.buyers)[number];
const signer = privateKeyToAccount(buyer.privateKey);
const closers: (() => Promise<void>)[] = [];

/** A host deciding vouchers one way, and the signed vouchers that pay it, in order. */
async function side(sdk: boolean, salt: bigint): Promise<{ name: string; url: string; headers: string[] }> {
  const config = testConfig();
  const payments = { ...config.payments, rpcUrl: devnet.rpc };
  const tally = { runs: 0, running: 0, mostAtOnce: 0 };
  const host: Listening = await listenWithUrl(
    async (url) =>
      (
        await merchantApp(testMerchant(payTo, url, channelEndpoints(gate, tally)), {
          services: { db: store.db, config },
          facilitator,
          payments,
          vouchersThroughSdk: sdk,
        })
      ).fetch,
    "127.0.0.1",
    0,
  );
  closers.push(() => host.close());
  const client = channelClient(devnet, buyer, { salt, deposit: 10_000_000n });
  const opened = await wrapFetchWithPayment(fetch, channelPayer(client))(`${host.url}/api/counted`);
  if (opened.status !== 200) throw new Error(`the channel did not open: ${opened.status}`);
  const required = await requiredBy(`${host.url}/api/counted`);
  const accept = required.accepts.find((a) => a.scheme === "batch-settlement");
  if (!accept) throw new Error("no channel offered");
  const channelConfig = client.buildChannelConfig(accept);
  const id = computeChannelId(channelConfig, NETWORK);
  const headers: string[] = [];
  // The opening call charged PRICE; each voucher builds on the one before.
  for (let i = 2; i <= VOUCHERS * BLOCKS + 1; i++) {
    const voucher = await signVoucher(signer, id, (BigInt(i) * PRICE).toString(), NETWORK);
    const payload: PaymentPayload = {
      x402Version: 2,
      accepted: accept,
      payload: { type: "voucher", channelConfig, voucher } as unknown as PaymentPayload["payload"],
      resource: required.resource,
      ...(required.extensions && { extensions: required.extensions }),
    };
    headers.push(encodePaymentSignatureHeader(payload));
  }
  return { name: sdk ? "through the SDK's middleware" : "decided by the kit", url: host.url, headers };
}

try {
  const sides = [await side(true, 77_001n), await side(false, 77_002n)];
  const cpu: Record<string, number[]> = Object.fromEntries(sides.map((s) => [s.name, []]));
  for (let block = 0; block < BLOCKS; block++) {
    // Alternated in order too, so that neither always follows the other.
    for (const s of block % 2 === 0 ? sides : [...sides].reverse()) {
      const batch = s.headers.slice(block * VOUCHERS, (block + 1) * VOUCHERS);
      const start = process.cpuUsage();
      for (const header of batch) {
        const answer = await fetch(`${s.url}/api/counted`, { headers: { "PAYMENT-SIGNATURE": header } });
        await answer.arrayBuffer();
        if (answer.status !== 200) throw new Error(`${s.name}: a voucher answered ${answer.status}`);
      }
      const used = process.cpuUsage(start);
      cpu[s.name]?.push((used.user + used.system) / 1000 / batch.length);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const warm = (s: (typeof sides)[number]) => (cpu[s.name] ?? []).slice(WARM);
  const [sdk, kit] = sides.map((s) => median(warm(s)));
  // Each block's two ways ran a few seconds apart: their ratio is the least disturbed by the machine.
  const [sdkBlocks, kitBlocks] = sides.map(warm) as [number[], number[]];
  const ratios = kitBlocks.map((k, i) => k / (sdkBlocks[i] as number));
  const paired = median(ratios);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  for (const s of sides)
    console.log(`${s.name}: ${cpu[s.name]?.map((x) => x.toFixed(3)).join(", ")} ms a voucher`);
  console.log(
    JSON.stringify({
      bench: "voucher-path",
      vouchers: VOUCHERS,
      blocks: BLOCKS,
      cpuMsPerVoucher: cpu,
      medianSdk: Number(sdk?.toFixed(3)),
      medianKit: Number(kit?.toFixed(3)),
      kitOverSdk: Number(((kit as number) / (sdk as number)).toFixed(3)),
      kitOverSdkPaired: Number(paired.toFixed(3)),
      kitOverSdkPairedMean: Number(mean(ratios).toFixed(3)),
      meanSdk: Number(mean(sdkBlocks).toFixed(3)),
      meanKit: Number(mean(kitBlocks).toFixed(3)),
    }),
  );
} finally {
  gate.close();
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await store.close();
  await devnet.stop();
}
