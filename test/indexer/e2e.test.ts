/**
 * The whole chain path of issue 3 in one test: buyers pay a merchant's paid Hono routes with
 * `@x402/fetch` (real EIP-3009 signatures), the project's facilitator settles on the devnet, the indexer
 * reads the chain and the facilitator's Bazaar, and the weekly report says exactly what was paid.
 */
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Devnet, DevnetAccount } from "../../src/chain/devnet/index.ts";
import { FacilitatorRegistry } from "../../src/chain/facilitators.ts";
import type { Database } from "../../src/common/db/index.ts";
import { type Listening, listen } from "../../src/common/listen.ts";
import type { Facilitator } from "../../src/facilitator/index.ts";
import { runIndexer } from "../../src/indexer/index.ts";
import { ReportService } from "../../src/reports/index.ts";
import { startMiner } from "../helpers/chain.ts";
import { LEDGER_KIND, openTestDatabase } from "../helpers/db.ts";
import { devnetFacilitator, startShop } from "../helpers/facilitator.ts";
import { GENESIS, openTempAnalytics, startTestDevnet } from "../helpers/indexer.ts";
import { NETWORK, newMerchant } from "../helpers/x402.ts";

let devnet: Devnet;
let miner: ReturnType<typeof startMiner>;
let db: Database;
let closeDb: () => Promise<void>;
let facilitator: Facilitator;
let facilitatorServer: Listening;
let shop: Listening;
const merchant = newMerchant();

const PRICES = {
  "/weather": { usd: "$0.001", atomic: 1_000n },
  "/forecast": { usd: "$0.25", atomic: 250_000n },
};

beforeAll(async () => {
  devnet = await startTestDevnet({ buyers: 3 });
  miner = startMiner(devnet);
  ({ db, close: closeDb } = await openTestDatabase(LEDGER_KIND));
  facilitator = await devnetFacilitator(devnet, db);
  facilitatorServer = await listen(facilitator.app.fetch, "127.0.0.1", 0);
  shop = await startShop(facilitatorServer.url, merchant, {
    "/weather": {
      price: PRICES["/weather"].usd,
      description: "Current weather for a city",
      body: ({ city }) => ({ city, temperature: 21 }),
    },
    "/forecast": {
      price: PRICES["/forecast"].usd,
      description: "Seven-day forecast for a city",
      body: ({ city }) => ({ city, days: [21, 22, 20, 19, 21, 23, 24] }),
    },
  });
}, 60_000);

afterAll(async () => {
  await shop?.close();
  await facilitatorServer?.close();
  await facilitator?.close();
  await closeDb?.();
  await miner?.stop();
  await devnet?.stop();
});

describe("paid requests to a weekly report", () => {
  it("indexes what buyers paid through the facilitator, and the report's tx, usd and buyers equal it", async () => {
    const [a, b, c] = devnet.buyers as [DevnetAccount, DevnetAccount, DevnetAccount];
    const calls: [DevnetAccount, keyof typeof PRICES][] = [
      [a, "/weather"],
      [a, "/weather"],
      [a, "/forecast"],
      [b, "/forecast"],
      [c, "/weather"],
    ];
    let paid = 0n;
    for (const [buyer, path] of calls) {
      const buyerFetch = wrapFetchWithPayment(
        fetch,
        new x402Client().register(NETWORK, new ExactEvmClient(privateKeyToAccount(buyer.privateKey))),
      );
      const res = await buyerFetch(`${shop.url}${path}?city=Lisbon`);
      expect(res.status).toBe(200);
      paid += PRICES[path].atomic;
    }
    // A request without payment is not a payment.
    expect((await fetch(`${shop.url}/weather?city=Lisbon`)).status).toBe(402);

    const head = Number(await devnetHead(devnet.rpc));
    const analytics = await openTempAnalytics();
    try {
      const summary = await runIndexer({
        analytics,
        rpc: { url: devnet.rpc },
        registry: FacilitatorRegistry.base().withSigners([devnet.facilitatorAccount.address]),
        fromBlock: GENESIS + 1,
        toBlock: head,
        reorgDepth: 8,
        discovery: { url: `${facilitatorServer.url}/discovery/resources` },
      });
      expect(summary).toMatchObject({ payments: calls.length, candidates: 0, stopped: "done" });

      const { report } = await new ReportService(analytics, { publicUrl: "https://reports.test" }).report(
        merchant,
      );
      const usd = Number((paid + 5_000n) / 10_000n) / 100; // rounded half up to cents, as reports are
      expect(report).toMatchObject({
        tx: calls.length,
        usd,
        buyers: 3,
        real_tx: calls.length,
        real_usd: usd,
        real_buyers: 3,
        flags: {},
        name: "127.0.0.1",
        paid: { median: 0.001, p25: 0.001, p75: 0.25 },
      });
      expect(report.window.end_block).toBe(head);
      expect(report.bazaar_listings).toEqual([
        { resource: `${shop.url}/weather`, price_usd: 0.001, description: "Current weather for a city" },
        { resource: `${shop.url}/forecast`, price_usd: 0.25, description: "Seven-day forecast for a city" },
      ]);
    } finally {
      analytics.close();
    }
  }, 60_000);
});

async function devnetHead(rpc: string): Promise<bigint> {
  const res = await fetch(rpc, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
  });
  return BigInt(((await res.json()) as { result: string }).result);
}
