import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importNdjson } from "../../src/analytics/import.ts";
import { POLYGON_RECORD } from "../../src/chain/chains.ts";
import type { Devnet, DevnetAccount } from "../../src/chain/devnet/index.ts";
import { derive } from "../../src/chain/devnet/index.ts";
import { FacilitatorRegistry } from "../../src/chain/facilitators.ts";
import { type IndexerEvent, type IndexerOptions, runIndexer } from "../../src/indexer/index.ts";
import { startMiner } from "../helpers/chain.ts";
import {
  channelConfig,
  claimChannel,
  depositErc3009,
  facilitatorOf,
  payExactPermit2,
  payUptoPermit2,
} from "../helpers/channels.ts";
import { addr, ndjsonFile, payment } from "../helpers/data.ts";
import { openTempAnalytics, startTestDevnet } from "../helpers/indexer.ts";
import { startRpcProxy } from "../helpers/rpc-proxy.ts";
import { mineAll, rpc, Settler, sendTransfer } from "../helpers/settle.ts";

/**
 * Polygon PoS played on anvil (chain id 137, Circle's USDC at its Polygon address, x402's contracts at their
 * CREATE2 addresses), its blocks dated by their own headers: x402 payments, a channel deposit and a buyer's
 * funding are indexed under `polygon`, each at its block's own time, whether the RPC's logs carry
 * `blockTimestamp` or not.
 */
let devnet: Devnet;
let registry: FacilitatorRegistry;
const merchant = derive(81).address.toLowerCase() as `0x${string}`;
const receiver = derive(82).address.toLowerCase() as `0x${string}`;
let head: number;
/** Each mined block's own timestamp. */
const times = new Map<number, number>();

const blockNumber = async () => Number(await rpc<string>(devnet.rpc, "eth_blockNumber"));

beforeAll(async () => {
  devnet = await startTestDevnet({ chain: POLYGON_RECORD, buyers: 3, genesisNumber: 0 });
  registry = FacilitatorRegistry.forChain(POLYGON_RECORD).withSigners([devnet.facilitatorAccount.address]);
  const [b0, b1, b2] = devnet.buyers as [DevnetAccount, DevnetAccount, DevnetAccount];
  // Blocks 1 to 3 s apart, as Polygon's are about 2 s but not exactly: no rule could date them.
  await rpc(devnet.rpc, "anvil_setBlockTimestampInterval", [3]);
  const settler = new Settler(devnet, devnet.facilitatorAccount);
  await settler.settle([{ buyer: b0, payTo: merchant, amount: 1_250_000n }]);
  await mineAll(devnet);
  await rpc(devnet.rpc, "anvil_setBlockTimestampInterval", [1]);
  // The second buyer is funded by the first, then pays: the transfer is kept as its funding.
  await mineAll(devnet, [await sendTransfer(devnet, b0, b1.address, 2_000_000n)]);
  await settler.settle([{ buyer: b1, payTo: merchant, amount: 700_000n }]);
  await mineAll(devnet);
  const miner = startMiner(devnet);
  try {
    const f = facilitatorOf(devnet);
    // Through x402's Permit2 proxies (exact for wallets without EIP-3009, and upto: signed for at most $1, a
    // metered $0.37 taken), then a channel: a deposit and a claim.
    await payExactPermit2(devnet, f, b2, merchant as `0x${string}`, 300_000n);
    await payUptoPermit2(devnet, f, b2, merchant as `0x${string}`, 1_000_000n, 370_000n);
    const config = channelConfig(devnet, b2.address, receiver);
    await depositErc3009(devnet, f, b2, config, 3_000_000n);
    await claimChannel(f, b2, config, 450_000n);
  } finally {
    await miner.stop();
  }
  head = await blockNumber();
  const headers = await Promise.all(
    Array.from({ length: head + 1 }, (_, n) =>
      rpc<{ timestamp: string }>(devnet.rpc, "eth_getBlockByNumber", [`0x${n.toString(16)}`, false]),
    ),
  );
  headers.forEach((h, n) => {
    times.set(n, Number(h.timestamp));
  });
}, 120_000);
afterAll(() => devnet?.stop());

function options(analytics: IndexerOptions["analytics"], url: string): IndexerOptions {
  return { analytics, rpc: { url }, registry, chain: POLYGON_RECORD, fromBlock: 1, toBlock: head };
}

type Row = {
  chain: string;
  block_number: bigint;
  t: bigint;
  payer: string;
  pay_to: string;
  scheme: string;
  asset: string;
  amount: bigint;
};

async function indexed(url: string) {
  const analytics = await openTempAnalytics();
  try {
    await runIndexer(options(analytics, url));
    const payments = await analytics.all<Row>(
      `SELECT chain, block_number, epoch(block_time)::BIGINT AS t, payer, pay_to, scheme, asset, amount
       FROM payments ORDER BY block_number, log_index`,
    );
    const transfers = await analytics.all<{
      chain: string;
      block_number: bigint;
      t: bigint;
      from_address: string;
      to_address: string;
    }>(
      `SELECT chain, block_number, epoch(block_time)::BIGINT AS t, from_address, to_address FROM transfers
       ORDER BY block_number, log_index`,
    );
    const state = await analytics.all<{ chain: string }>("SELECT chain FROM indexer_state");
    return { payments, transfers, state };
  } finally {
    analytics.close();
  }
}

describe("a chain whose blocks say their own time (Polygon PoS on anvil)", () => {
  it("indexes every payment, deposit and funding transfer under polygon at its block's own time", async () => {
    const { payments, transfers, state } = await indexed(devnet.rpc);
    expect(state).toEqual([{ chain: "polygon" }]);
    const [b0, b1, b2] = devnet.buyers.map((b) => b.address.toLowerCase());
    // EIP-3009 twice, x402's exact and upto Permit2 proxies (upto at the amount taken), and the channel's claim
    // (its payer's, to its receiver).
    expect(payments.map((p) => [p.payer, p.pay_to, p.scheme, p.amount])).toEqual([
      [b0, merchant, "exact", 1_250_000n],
      [b1, merchant, "exact", 700_000n],
      [b2, merchant, "exact", 300_000n],
      [b2, merchant, "upto", 370_000n],
      [b2, receiver, "batch-settlement", 450_000n],
    ]);
    // The deposit: money from the third buyer into its channel, named by the channel's id.
    expect(transfers.filter((t) => t.to_address.length === 66).map((t) => t.from_address)).toEqual([b2]);
    for (const row of [...payments, ...transfers]) {
      expect(row.chain).toBe("polygon");
      expect(Number(row.t)).toBe(times.get(Number(row.block_number)));
    }
    expect(payments.every((p) => p.asset === POLYGON_RECORD.usdc.address)).toBe(true);
    // The first buyer's transfer funded the second, before it paid.
    expect(transfers.some((t) => t.to_address === b1)).toBe(true);
  });

  it("dates logs from their blocks' headers where the RPC leaves blockTimestamp out, to the same rows", async () => {
    const proxy = await startRpcProxy(devnet.rpc, () => ({
      kind: "forward",
      rewrite: (answer) => {
        for (const a of Array.isArray(answer) ? answer : [answer]) {
          const result = (a as { result?: unknown }).result;
          if (Array.isArray(result)) {
            for (const log of result as { blockTimestamp?: string; logIndex?: string }[]) {
              if (log.logIndex !== undefined) delete log.blockTimestamp;
            }
          }
        }
        return answer;
      },
    }));
    try {
      expect(await indexed(proxy.url)).toEqual(await indexed(devnet.rpc));
    } finally {
      await proxy.close();
    }
  });

  it("follows a reorg above the blocks the other tests read: rewinds, resumes and dates the new blocks by their own times", async () => {
    // Above `head`, whatever the other tests read: the chain they index is left as it was.
    const fork = await rpc<string>(devnet.rpc, "evm_snapshot");
    const [b0, b1] = devnet.buyers as [DevnetAccount, DevnetAccount];
    const settler = new Settler(devnet, devnet.facilitatorAccount);
    const blockTimes = async (analytics: IndexerOptions["analytics"]) =>
      (
        await analytics.all<{ block: bigint; t: bigint; amount: bigint }>(
          `SELECT block_number AS block, epoch(block_time)::BIGINT AS t, amount FROM payments
           WHERE block_number > ${head} ORDER BY block_number`,
        )
      ).map((r) => [Number(r.block), Number(r.t), r.amount]);
    const headerTime = async (n: number) =>
      Number(
        (await rpc<{ timestamp: string }>(devnet.rpc, "eth_getBlockByNumber", [`0x${n.toString(16)}`, false]))
          .timestamp,
      );
    const analytics = await openTempAnalytics();
    try {
      // Chain A: a payment, blocks 1 s apart.
      await rpc(devnet.rpc, "anvil_setBlockTimestampInterval", [1]);
      await settler.settle([{ buyer: b0, payTo: merchant, amount: 4_000n }]);
      await mineAll(devnet);
      await devnet.mine(3);
      const headA = await blockNumber();
      await runIndexer({ ...options(analytics, devnet.rpc), toBlock: headA, reorgDepth: 10, batchBlocks: 2 });
      expect(await blockTimes(analytics)).toEqual([[head + 1, await headerTime(head + 1), 4_000n]]);
      // Chain B from the same parent: another payment, blocks 3 s apart, one block longer.
      await rpc(devnet.rpc, "evm_revert", [fork]);
      settler.resync();
      await rpc(devnet.rpc, "anvil_setBlockTimestampInterval", [3]);
      await settler.settle([{ buyer: b1, payTo: merchant, amount: 5_000n }]);
      await mineAll(devnet);
      await devnet.mine(4);
      const headB = await blockNumber();
      const events: IndexerEvent[] = [];
      await runIndexer({
        ...options(analytics, devnet.rpc),
        toBlock: headB,
        reorgDepth: 10,
        batchBlocks: 2,
        onEvent: (e) => events.push(e),
      });
      expect(events.some((e) => e.type === "reorg")).toBe(true);
      expect(await blockTimes(analytics)).toEqual([[head + 1, await headerTime(head + 1), 5_000n]]);
      const checkpoint = await analytics.one<{ block: bigint; t: bigint }>(
        "SELECT block_number AS block, epoch(block_time)::BIGINT AS t FROM indexer_state WHERE chain = 'polygon'",
      );
      expect([Number(checkpoint?.block), Number(checkpoint?.t)]).toEqual([headB, await headerTime(headB)]);
    } finally {
      analytics.close();
      await rpc(devnet.rpc, "evm_revert", [fork]);
    }
  });

  it("refuses an RPC of another chain, and indexes beside another chain's data in one store", async () => {
    const analytics = await openTempAnalytics();
    try {
      await expect(
        runIndexer({
          ...options(analytics, devnet.rpc),
          chain: undefined,
          registry: FacilitatorRegistry.base(),
        }),
      ).rejects.toThrow(/chain id 137, not Base's 8453/);
      // A Base payment at a block this devnet also has: each chain's rows stay its own.
      await importNdjson(
        analytics,
        ndjsonFile([payment({ payer: addr("b"), payTo: merchant, amount: 5, block: 2 })]),
      );
      await runIndexer(options(analytics, devnet.rpc));
      const rows = await analytics.all<{ chain: string; n: bigint }>(
        "SELECT chain, count(*) AS n FROM payments GROUP BY chain ORDER BY chain",
      );
      expect(rows.map((r) => r.chain)).toEqual(["base", "polygon"]);
      expect(rows[0]?.n).toBe(1n);
    } finally {
      analytics.close();
    }
  });
});
