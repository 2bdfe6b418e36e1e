/**
 * Funding history by coverage (`src/indexer/history.ts`, `scan.ts`, `balances.ts`) on a devnet with a
 * gap of 250,000 empty blocks (more than the history's first span): a merchant's money followed
 * through six private wallets, a read that stops at the inflow that explains the balance, the
 * depositors of an exchange and the funder of a distributor that pay buyers after their first payment
 * (read once), the balances stored, and the same rows however batched or resumed. A buyer dormant for
 * twelve weeks: dormant.test.ts.
 *
 * The chain mines fast only with anvil's `--prune-history 0`, which keeps no old state: the provider in
 * front of it answers `balanceOf` at past blocks from the Transfer logs, as an archive node does
 * (test/helpers/provider.ts). Settlements are signed here and sent by the facilitator's signer.
 */
import type { Address, Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import { type Devnet, type DevnetAccount, derive } from "../../src/chain/devnet/index.ts";
import { FacilitatorRegistry } from "../../src/chain/facilitators.ts";
import { HUB_SENDERS } from "../../src/indexer/history.ts";
import { type IndexerOptions, runIndexer } from "../../src/indexer/index.ts";
import { openTempAnalytics, snapshot, startTestDevnet, storedTxs } from "../helpers/indexer.ts";
import { type Provider, startProvider } from "../helpers/provider.ts";
import { fundedAccount, mineAll, rpc, sendRaw, sendTransfer, signSettlements } from "../helpers/settle.ts";

const USD = 1_000_000n;
const GAP_BLOCKS = 250_000;

let devnet: Devnet;
let archive: Provider;
/** The same chain without old state: balances unknown. */
let pruned: Provider;
let facilitatorNonce = 0;
/** The first block indexed: after every funding transfer below, before the first payment. */
let start = 0;
let head = 0;

const merchants = {
  chain: derive(500),
  dormant: derive(501),
  exchange: derive(502),
  distributor: derive(503),
};
/** M -> Q1 -> ... -> Q6 -> buyer. */
const chain = { hops: [] as Hex[], wallets: [] as DevnetAccount[], buyer: derive(511) };
/** C received 3 from X long ago and spent it, then 4 from Y: it holds 4 when it pays. */
const covered = { wallet: derive(530), old: "0x" as Hex, recent: "0x" as Hex };
/** An exchange with 55 depositors pays a buyer twice after the buyer's first payment. */
const exchange = {
  wallet: derive(540),
  depositors: [] as DevnetAccount[],
  deposits: [] as Hex[],
  buyer: derive(541),
  withdrawals: [] as Hex[],
};
/** A distributor fed by one merchant pays a buyer after the buyer's first payment. */
const distributor = { wallet: derive(550), feed: "0x" as Hex, buyer: derive(551), payout: "0x" as Hex };

beforeAll(async () => {
  devnet = await startTestDevnet({ buyers: 4, hardfork: "cancun", pruneHistory: 0 });
  archive = await startProvider(devnet.rpc, { hosted: false, archive: devnet.usdc });
  pruned = await startProvider(devnet.rpc, { hosted: false });
  const [funder, x, y] = devnet.buyers as [DevnetAccount, DevnetAccount, DevnetAccount];
  const gas = [
    ...Object.values(merchants),
    chain.buyer,
    covered.wallet,
    exchange.wallet,
    exchange.buyer,
    distributor.wallet,
    distributor.buyer,
  ];
  chain.wallets = Array.from({ length: 6 }, (_, i) => derive(512 + i));
  exchange.depositors = Array.from({ length: HUB_SENDERS + 5 }, (_, i) => derive(600 + i));
  // Only the wallet that sends before the gap gets its gas before it: anvil's cost per block mined grows
  // with the accounts the chain holds (50,000 empty blocks: 3.5 s with none funded, 11.7 s with 80), and the
  // gap mined after the other 70 took 59 s of this file's 76.
  await fundedAccount(devnet, covered.wallet);
  const send = async (from: DevnetAccount, to: Address, amount: bigint) => {
    const tx = await sendTransfer(devnet, from, to, amount);
    await mineAll(devnet, [tx]);
    return tx;
  };
  // Merchants' and buyers' money, from a buyer the devnet minted to.
  for (const m of [merchants.chain, merchants.distributor]) await send(funder, m.address, 50n * USD);
  for (const b of [exchange.buyer, distributor.buyer]) await send(funder, b.address, 20n * USD);

  // Long ago: C's money that it spent.
  covered.old = await send(x, covered.wallet.address, 3n * USD);
  await send(covered.wallet, funder.address, 3n * USD);
  await rpc(devnet.rpc, "anvil_mine", [`0x${GAP_BLOCKS.toString(16)}`, "0x2"]);
  for (const a of [...gas, ...chain.wallets, ...exchange.depositors]) await fundedAccount(devnet, a);

  // Recent funding, before any payment.
  let from: DevnetAccount = merchants.chain;
  for (const wallet of [...chain.wallets, chain.buyer]) {
    chain.hops.push(await send(from, wallet.address, 10n * USD));
    from = wallet;
  }
  covered.recent = await send(y, covered.wallet.address, 4n * USD);
  // The depositors' money, one sender's transfers in one block (anvil mines them in the order sent): 55 blocks
  // mined and waited for one by one cost more than the rest of this funding.
  const funded: Hex[] = [];
  for (const d of exchange.depositors) funded.push(await sendTransfer(devnet, funder, d.address, 2n * USD));
  await mineAll(devnet, funded);
  for (const d of exchange.depositors) exchange.deposits.push(await send(d, exchange.wallet.address, USD));
  distributor.feed = await send(merchants.distributor, distributor.wallet.address, 20n * USD);
  start = Number(await rpc(devnet.rpc, "eth_blockNumber")) + 1;

  facilitatorNonce = Number(
    await rpc<string>(devnet.rpc, "eth_getTransactionCount", [devnet.facilitatorAccount.address, "pending"]),
  );
  await pay([
    [chain.buyer, merchants.chain],
    [covered.wallet, merchants.chain],
    [exchange.buyer, merchants.exchange],
    [distributor.buyer, merchants.distributor],
  ]);
  exchange.withdrawals.push(await send(exchange.wallet, exchange.buyer.address, 5n * USD));
  distributor.payout = await send(distributor.wallet, distributor.buyer.address, 5n * USD);
  await devnet.mine(3);
  exchange.withdrawals.push(await send(exchange.wallet, exchange.buyer.address, 5n * USD));
  await pay([
    [exchange.buyer, merchants.exchange],
    [distributor.buyer, merchants.distributor],
  ]);
  await devnet.mine(3);
  head = Number(await rpc(devnet.rpc, "eth_blockNumber"));
}, 600_000);

afterAll(async () => {
  await archive?.close();
  await pruned?.close();
  await devnet?.stop();
});

/** One settlement per pair, in one block: each buyer pays its merchant $1. */
async function pay(pairs: [DevnetAccount, DevnetAccount][]): Promise<void> {
  const signed = await signSettlements(
    devnet.usdc,
    devnet.facilitatorAccount,
    facilitatorNonce,
    pairs.map(([buyer, merchant]) => ({ buyer, payTo: merchant.address, amount: USD })),
  );
  facilitatorNonce += signed.length;
  await mineAll(
    devnet,
    await sendRaw(
      devnet.rpc,
      signed.map((s) => s.tx),
    ),
  );
}

function index(analytics: Analytics, options: Partial<IndexerOptions> = {}) {
  return runIndexer({
    analytics,
    rpc: { url: archive.url },
    registry: FacilitatorRegistry.base().withSigners([devnet.facilitatorAccount.address]),
    fromBlock: start,
    toBlock: head,
    reorgDepth: 8,
    ...options,
  });
}

async function balancesOf(analytics: Analytics, wallet: DevnetAccount) {
  const rows = await analytics.all<{ block_number: bigint; amount: bigint }>(
    "SELECT block_number, amount FROM balances WHERE wallet = $1 ORDER BY block_number",
    [wallet.address.toLowerCase()],
  );
  return rows.map((r) => ({ block: Number(r.block_number), amount: BigInt(r.amount) }));
}

async function blockOf(tx: Hex): Promise<number> {
  const receipt = await rpc<{ blockNumber: string }>(devnet.rpc, "eth_getTransactionReceipt", [tx]);
  return Number(receipt.blockNumber);
}

/** The history's eth_getLogs calls (those with a recipient list) that asked for `wallet`'s inflows. */
function getLogsFor(provider: Provider, wallet: DevnetAccount): number {
  const topic = `0x000000000000000000000000${wallet.address.slice(2).toLowerCase()}`;
  return provider.cost.seen.filter((call) => {
    if (call.method !== "eth_getLogs") return false;
    const topics = (call.params[0] as { topics?: unknown[] }).topics;
    return Array.isArray(topics?.[2]) && (topics[2] as string[]).includes(topic);
  }).length;
}

describe("funding history by coverage", () => {
  let analytics: Analytics;
  beforeAll(async () => {
    analytics = await openTempAnalytics();
    archive.reset();
    // One eth_getLogs in flight, so that a wallet is asked for in exactly the calls its read needed.
    await index(analytics, { concurrency: 1 });
  }, 300_000);
  afterAll(() => analytics?.close());

  it("follows a merchant's money through six private wallets to the buyer", async () => {
    const txs = await storedTxs(analytics);
    expect(chain.hops).toHaveLength(7);
    for (const hop of chain.hops) expect(txs.has(hop), hop).toBe(true);
  });

  it("stops reading a wallet at the inflow that explains its balance", async () => {
    const txs = await storedTxs(analytics);
    expect(txs.has(covered.recent)).toBe(true);
    expect(txs.has(covered.old)).toBe(false);
    // One eth_getLogs found the recent inflow; nothing older was asked for.
    expect(getLogsFor(archive, covered.wallet)).toBe(1);

    // A node without old state leaves the balance unknown: the read goes back to the lookback.
    const blind = await openTempAnalytics();
    try {
      const events: string[] = [];
      pruned.reset();
      await index(blind, { rpc: { url: pruned.url }, concurrency: 1, onEvent: (e) => events.push(e.type) });
      expect(events).toContain("funding_limit");
      expect((await storedTxs(blind)).has(covered.old)).toBe(true);
      expect(getLogsFor(pruned, covered.wallet)).toBeGreaterThan(1);
      expect(await balancesOf(blind, covered.wallet)).toEqual([]);
    } finally {
      blind.close();
    }
  });

  it("reads the depositors of an exchange and the funder of a distributor that pay buyers after their first payment, once each", async () => {
    const txs = await storedTxs(analytics);
    // Newest first until the 50th distinct sender: the 50 latest deposits.
    const deposits = exchange.deposits.filter((tx) => txs.has(tx));
    expect(deposits).toEqual(exchange.deposits.slice(-HUB_SENDERS));
    expect(txs.has(distributor.feed)).toBe(true);
    // The exchange paid the buyer twice: read for the first only, from its balance before it.
    const [first] = exchange.withdrawals as [Hex];
    expect(await balancesOf(analytics, exchange.wallet)).toEqual([
      { block: (await blockOf(first)) - 1, amount: BigInt(exchange.deposits.length) * USD },
    ]);
    expect(await balancesOf(analytics, distributor.wallet)).toEqual([
      { block: (await blockOf(distributor.payout)) - 1, amount: 20n * USD },
    ]);
  });

  it("stores each wallet's balance at the end of the block before it passed the money on", async () => {
    const paidAt = await blockOf(chain.hops.at(-1) as Hex);
    expect(await balancesOf(analytics, chain.buyer)).toEqual([{ block: start - 1, amount: 10n * USD }]);
    const q6 = chain.wallets.at(-1) as DevnetAccount;
    expect(await balancesOf(analytics, q6)).toEqual([{ block: paidAt - 1, amount: 10n * USD }]);
    expect(await balancesOf(analytics, covered.wallet)).toEqual([{ block: start - 1, amount: 4n * USD }]);
  });

  it("stores the same rows in one batch or many, and after a stop and a resume", async () => {
    const expected = await snapshot(analytics);
    const pieces = await openTempAnalytics();
    const resumed = await openTempAnalytics();
    try {
      await index(pieces, { batchBlocks: 1, concurrency: 3 });
      expect(await snapshot(pieces), "one block a batch").toEqual(expected);
      await index(resumed, { toBlock: start + 4, batchBlocks: 3 });
      await index(resumed, { batchBlocks: 2, fromBlock: undefined });
      expect(await snapshot(resumed), "resumed").toEqual(expected);
    } finally {
      pieces.close();
      resumed.close();
    }
  }, 300_000);
});
