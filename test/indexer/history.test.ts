/**
 * Funding history (`src/indexer/history.ts`) on a devnet, paid through the project's facilitator: a
 * merchant's funding of a fresh wallet through two private wallets before any x402 payment is stored,
 * a buyer funded through a hub is not followed past it, and the rows do not depend on how the blocks
 * are batched or where a run stopped. Longer chains and the coverage rule: coverage.test.ts.
 */
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { createPublicClient, type Hex, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import { type Devnet, type DevnetAccount, derive, devnetChain } from "../../src/chain/devnet/index.ts";
import { FacilitatorRegistry } from "../../src/chain/facilitators.ts";
import { pollReceipt } from "../../src/chain/receipt.ts";
import type { Database } from "../../src/common/db/index.ts";
import { type Listening, listen } from "../../src/common/listen.ts";
import type { Facilitator } from "../../src/facilitator/index.ts";
import { HUB_SENDERS } from "../../src/indexer/history.ts";
import { type IndexerOptions, runIndexer } from "../../src/indexer/index.ts";
import { startMiner } from "../helpers/chain.ts";
import { LEDGER_KIND, openTestDatabase } from "../helpers/db.ts";
import { devnetFacilitator, startShop } from "../helpers/facilitator.ts";
import { GENESIS, openTempAnalytics, snapshot, startTestDevnet, storedTxs } from "../helpers/indexer.ts";
import { fundedAccount, rpc, sendTransfer } from "../helpers/settle.ts";
import { NETWORK } from "../helpers/x402.ts";

const USD = 1_000_000n;
const PRICE = { usd: "$0.25", atomic: 250_000n };

let devnet: Devnet;
let miner: ReturnType<typeof startMiner>;
let db: Database;
let closeDb: () => Promise<void>;
let facilitator: Facilitator;
let facilitatorServer: Listening;
const shops: Listening[] = [];
let head: number;

/** The merchant that funds its own buyer: M -> P1 -> P2 -> W, then W pays M. */
const funded = {
  merchant: undefined as unknown as DevnetAccount,
  path: [] as { tx: Hex; block: number }[],
  buyer: derive(203),
  firstPayment: 0,
};
/** The merchant whose money goes into a hub that pays its buyer: M2 -> H -> B, then B pays M2. */
const hubbed = {
  merchant: undefined as unknown as DevnetAccount,
  hub: derive(210),
  buyer: derive(211),
  depositors: [] as DevnetAccount[],
  /** X -> depositor, the transfers beyond the hub. */
  beyond: [] as Hex[],
  deposits: [] as Hex[],
  merchantDeposit: "0x" as Hex,
  withdrawal: "0x" as Hex,
};

beforeAll(async () => {
  devnet = await startTestDevnet({ buyers: 3 });
  miner = startMiner(devnet);
  ({ db, close: closeDb } = await openTestDatabase(LEDGER_KIND));
  facilitator = await devnetFacilitator(devnet, db);
  facilitatorServer = await listen(facilitator.app.fetch, "127.0.0.1", 0);
  const [m, x, m2] = devnet.buyers as [DevnetAccount, DevnetAccount, DevnetAccount];
  funded.merchant = m;
  hubbed.merchant = m2;

  // Weeks before in spirit: every transfer of the path comes before any x402 payment of anyone here.
  const [p1, p2] = await Promise.all([
    fundedAccount(devnet, derive(201)),
    fundedAccount(devnet, derive(202)),
  ]);
  for (const [from, to, amount] of [
    [m, p1.address, 10n * USD],
    [p1, p2.address, 9n * USD],
    [p2, funded.buyer.address, 8n * USD],
  ] as const) {
    funded.path.push(await confirmed(await sendTransfer(devnet, from, to, amount)));
    await devnet.mine(5);
  }

  // The hub: 50 wallets funded by X deposit into it, then M2 does, then it pays B.
  hubbed.depositors = await Promise.all(
    Array.from({ length: HUB_SENDERS }, (_, i) => fundedAccount(devnet, derive(300 + i))),
  );
  await fundedAccount(devnet, hubbed.hub);
  for (const d of hubbed.depositors) hubbed.beyond.push(await sendTransfer(devnet, x, d.address, 2n * USD));
  await Promise.all(hubbed.beyond.map(confirmed));
  for (const d of hubbed.depositors)
    hubbed.deposits.push(await sendTransfer(devnet, d, hubbed.hub.address, USD));
  await Promise.all(hubbed.deposits.map(confirmed));
  hubbed.merchantDeposit = (
    await confirmed(await sendTransfer(devnet, m2, hubbed.hub.address, 20n * USD))
  ).tx;
  hubbed.withdrawal = (
    await confirmed(await sendTransfer(devnet, hubbed.hub, hubbed.buyer.address, 5n * USD))
  ).tx;
  await devnet.mine(5);

  // Each buyer pays its merchant twice through the facilitator.
  for (const [merchant, buyer] of [
    [m, funded.buyer],
    [m2, hubbed.buyer],
  ] as const) {
    const shop = await startShop(facilitatorServer.url, merchant.address, {
      "/forecast": { price: PRICE.usd, description: "Forecast", body: ({ city }) => ({ city }) },
    });
    shops.push(shop);
    const pay = wrapFetchWithPayment(
      fetch,
      new x402Client().register(NETWORK, new ExactEvmClient(privateKeyToAccount(buyer.privateKey))),
    );
    for (let i = 0; i < 2; i++) {
      const res = await pay(`${shop.url}/forecast?city=Lisbon`);
      expect(res.status).toBe(200);
    }
  }
  funded.firstPayment = await firstPaymentBlock(funded.buyer.address);
  await miner.stop();
  await devnet.mine(3);
  head = Number(await rpc(devnet.rpc, "eth_blockNumber"));
}, 120_000);

afterAll(async () => {
  for (const shop of shops) await shop.close();
  await facilitatorServer?.close();
  await facilitator?.close();
  await closeDb?.();
  await miner?.stop();
  await devnet?.stop();
});

/** Waits for a transaction mined by the miner; its hash and block. */
async function confirmed(tx: Hex): Promise<{ tx: Hex; block: number }> {
  const client = createPublicClient({ chain: devnetChain(devnet.rpc), transport: http(devnet.rpc) });
  const receipt = await pollReceipt(client, tx, 20_000, 20);
  if (receipt?.status !== "success") throw new Error(`transaction ${tx} failed`);
  return { tx, block: Number(receipt.blockNumber) };
}

/** The block of the first USDC settlement paid by `payer` (an AuthorizationUsed log names it). */
async function firstPaymentBlock(payer: string): Promise<number> {
  const logs = await rpc<{ blockNumber: string }[]>(devnet.rpc, "eth_getLogs", [
    {
      address: devnet.usdc,
      topics: [
        "0x98de503528ee59b575ef0c0a2576a82497bfc029a5685b209e9ec333479b10a5",
        `0x000000000000000000000000${payer.slice(2).toLowerCase()}`,
      ],
      fromBlock: `0x${GENESIS.toString(16)}`,
      toBlock: "latest",
    },
  ]);
  if (logs.length === 0) throw new Error(`${payer} never paid`);
  return Number(logs[0]?.blockNumber);
}

function index(analytics: Analytics, options: Partial<IndexerOptions> = {}) {
  return runIndexer({
    analytics,
    rpc: { url: devnet.rpc },
    registry: FacilitatorRegistry.base().withSigners([devnet.facilitatorAccount.address]),
    fromBlock: GENESIS + 1,
    toBlock: head,
    reorgDepth: 8,
    ...options,
  });
}

describe("funding history", () => {
  it("keeps a merchant's funding of a fresh wallet through two private wallets, read back from the wallet's first payment", async () => {
    // Indexing starts after the path: only the history can bring it back.
    const start = funded.path.at(-1)?.block as number;
    const analytics = await openTempAnalytics();
    const bare = await openTempAnalytics();
    try {
      const summary = await index(analytics, { fromBlock: start + 1 });
      expect(summary.history).toBeGreaterThanOrEqual(3);
      const txs = await storedTxs(analytics);
      for (const hop of funded.path) expect(txs.has(hop.tx), hop.tx).toBe(true);

      // Without it nothing links the buyer's money to the merchant: what the issue measured.
      await index(bare, { fromBlock: start + 1, fundingLookback: 0 });
      const none = await storedTxs(bare);
      for (const hop of funded.path) expect(none.has(hop.tx)).toBe(false);
    } finally {
      analytics.close();
      bare.close();
    }
  });

  it("reads a wallet's inflows back only --funding-lookback blocks before it passed the money on", async () => {
    const [toP1, toP2, toBuyer] = funded.path as [
      (typeof funded.path)[0],
      (typeof funded.path)[0],
      (typeof funded.path)[0],
    ];
    const dormancy = funded.firstPayment - toBuyer.block;
    // The money sat longest in W (from P2 -> W to W's first payment); each hop before it was shorter.
    expect(toBuyer.block - toP2.block).toBeLessThan(dormancy);
    expect(toP2.block - toP1.block).toBeLessThan(dormancy);
    const within = await openTempAnalytics();
    const beyond = await openTempAnalytics();
    try {
      await index(within, { fromBlock: toBuyer.block + 1, fundingLookback: dormancy });
      let txs = await storedTxs(within);
      expect([txs.has(toBuyer.tx), txs.has(toP2.tx), txs.has(toP1.tx)]).toEqual([true, true, true]);
      await index(beyond, { fromBlock: toBuyer.block + 1, fundingLookback: dormancy - 1 });
      txs = await storedTxs(beyond);
      expect([txs.has(toBuyer.tx), txs.has(toP2.tx), txs.has(toP1.tx)]).toEqual([false, false, false]);
    } finally {
      within.close();
      beyond.close();
    }
  });

  it("does not follow a buyer's funding past a hub, and keeps what makes it one", async () => {
    const analytics = await openTempAnalytics();
    try {
      // From after the withdrawal: H's transfers are read by eth_getLogs, not from a batch.
      const withdrawn = await rpc<{ blockNumber: string }>(devnet.rpc, "eth_getTransactionReceipt", [
        hubbed.withdrawal,
      ]);
      await index(analytics, { fromBlock: Number(withdrawn.blockNumber) + 1 });
      const txs = await storedTxs(analytics);
      // H -> B, and H's transfers newest first until 50 distinct senders: M2's and the 49 latest deposits.
      expect(txs.has(hubbed.withdrawal)).toBe(true);
      expect(txs.has(hubbed.merchantDeposit)).toBe(true);
      const deposits = hubbed.deposits.filter((tx) => txs.has(tx));
      expect(deposits).toHaveLength(HUB_SENDERS - 1);
      // Not followed: nothing of what reached the depositors.
      expect(hubbed.beyond.filter((tx) => txs.has(tx))).toEqual([]);
    } finally {
      analytics.close();
    }
  });

  it("reads the batch again when the checkpoint's block changed while the history was read below it", async () => {
    const fromBlock = (funded.path.at(-1)?.block as number) + 1;
    const parent = `0x${(fromBlock - 1).toString(16)}`;
    let historyRead = false;
    let tampered = 0;
    // A node that answers the checkpoint's header from another fork once, right after the history's logs.
    const forked: typeof fetch = async (input, init) => {
      const body = JSON.parse(String(init?.body)) as { method: string; params: unknown[] } | unknown[];
      if (Array.isArray(body)) return fetch(input, init);
      const filter = body.params[0] as { topics?: unknown[] } | undefined;
      if (body.method === "eth_getLogs" && filter?.topics?.length === 3) historyRead = true;
      const response = await fetch(input, init);
      if (
        !historyRead ||
        tampered > 0 ||
        body.method !== "eth_getBlockByNumber" ||
        body.params[0] !== parent
      ) {
        return response;
      }
      tampered++;
      const answer = (await response.json()) as { result: { hash: string } };
      answer.result.hash = `0x${"ab".repeat(32)}`;
      return Response.json(answer);
    };
    const clean = await openTempAnalytics();
    const moved = await openTempAnalytics();
    try {
      await index(clean, { fromBlock });
      const events: string[] = [];
      await index(moved, {
        fromBlock,
        rpc: { url: devnet.rpc, fetch: forked },
        onEvent: (e) => events.push(e.type),
      });
      expect(tampered).toBe(1);
      expect(events).toContain("chain_moved");
      expect(await snapshot(moved)).toEqual(await snapshot(clean));
    } finally {
      clean.close();
      moved.close();
    }
  });

  it("stores the same rows in one batch or many, and after a stop and a resume", async () => {
    for (const fromBlock of [GENESIS + 1, (funded.path.at(-1)?.block as number) + 1]) {
      const whole = await openTempAnalytics();
      const pieces = await openTempAnalytics();
      const resumed = await openTempAnalytics();
      try {
        await index(whole, { fromBlock, batchBlocks: 2_000 });
        const expected = await snapshot(whole);
        await index(pieces, { fromBlock, batchBlocks: 1, concurrency: 3 });
        expect(await snapshot(pieces), `from ${fromBlock}, one block a batch`).toEqual(expected);
        // Stopped between the buyer's two payments, then resumed with other batches.
        await index(resumed, { fromBlock, toBlock: funded.firstPayment, batchBlocks: 7 });
        await index(resumed, { batchBlocks: 3, fromBlock: undefined });
        expect(await snapshot(resumed), `from ${fromBlock}, resumed`).toEqual(expected);
      } finally {
        whole.close();
        pieces.close();
        resumed.close();
      }
    }
  }, 60_000);
});
