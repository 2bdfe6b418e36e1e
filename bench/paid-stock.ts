/**
 * The stock x402 stack of `bench:paid`'s default mode (bench/paid-user.ts), one part per process, as the
 * project's side runs as two (`facilitator` and `serve`): so that the merchant's CPU and the facilitator's are
 * each read apart. Both are built as the in-process stock stack is (`bench/stock-stack.ts`).
 *
 * - `facilitator`: the SDK's `x402Facilitator` with the exact, upto and batch-settlement facilitator schemes
 *   and a viem wallet signer, behind the documentation's example routes on 127.0.0.1. Prints
 *   `{"facilitator": URL}`.
 * - `merchant`: `@x402/hono`'s middleware on the SDK's resource server, its facilitator reached over HTTP:
 *   `GET /api/calc` at $0.001 taking `exact` and `batch-settlement` (the documentation's batch-settlement
 *   server, its channels in the SDK's in-memory storage, a withdrawal delay of a day), as the utility API's
 *   catalogue offers calc; and the inference API's metered chat (`UPTO_PATH`) on its offline engine, paid with
 *   `upto` to a wallet of its own. Prints `{"paid", "plain", "channels"}`: the paid app, the same handlers
 *   with no payment layer, and the channels its storage holds (`BenchChannel[]`).
 *
 * Neither runs a claim schedule (the vouchers make no chain write). The process runs until its stdin closes.
 * Argument: one JSON object (`StockPartOptions`).
 */
import { HTTPFacilitatorClient } from "@x402/core/server";
import { BatchSettlementEvmScheme as BatchServer } from "@x402/evm/batch-settlement/server";
import { Hono } from "hono";
import { listen } from "../src/common/listen.ts";
import type { MerchantEnv } from "../src/merchant-kit/input.ts";
import { openTestDatabase } from "../test/helpers/db.ts";
import { testConfig } from "../test/helpers/merchant.ts";
import { benchChannels, calcRoute, stockFacilitatorApp, stockShopApp } from "./stock-stack.ts";

export type StockPartOptions =
  | { part: "facilitator"; rpc: string; facilitatorKey: `0x${string}`; pollMs: number }
  | { part: "merchant"; facilitatorUrl: string; payTo: `0x${string}`; uptoPayTo: `0x${string}` };

export const CHANNELS_PATH = "/bench/channels";

const options = JSON.parse(process.argv[2] ?? "{}") as StockPartOptions;
const closers: (() => Promise<unknown>)[] = [];
// The SDK logs every settlement's extension outcome to stdout, where only the ready line belongs.
console.log = () => undefined;

async function served(fetch: (request: Request) => Response | Promise<Response>): Promise<string> {
  const server = await listen(fetch, "127.0.0.1", 0);
  closers.push(() => server.close());
  return server.url;
}

async function ready(): Promise<Record<string, string>> {
  if (options.part === "facilitator") {
    const app = stockFacilitatorApp({ ...options, channels: true, upto: true });
    return { facilitator: await served(app.fetch) };
  }
  // The merchant's services, as the in-process stock stack has them: a store its handlers never write.
  const state = await openTestDatabase("pglite");
  closers.push(state.close);
  const services = { db: state.db, config: testConfig() };
  const channelServer = new BatchServer(options.payTo, { withdrawDelay: 86_400 });
  const client = new HTTPFacilitatorClient({ url: options.facilitatorUrl });
  const paid = stockShopApp(services, client, {
    payTo: options.payTo,
    channelServer,
    uptoPayTo: options.uptoPayTo,
  });
  const plain = calcRoute(new Hono<MerchantEnv>(), services).get(CHANNELS_PATH, async (c) =>
    c.json(await benchChannels(channelServer.getStorage())),
  );
  const plainUrl = await served(plain.fetch);
  return { paid: await served(paid.fetch), plain: plainUrl, channels: `${plainUrl}${CHANNELS_PATH}` };
}

process.stdout.write(`${JSON.stringify(await ready())}\n`);
process.stdin.resume();
process.stdin.on("end", async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  process.exit(0);
});
