import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import { type Devnet, type DevnetAccount, derive } from "../../src/chain/devnet/index.ts";
import { FacilitatorRegistry } from "../../src/chain/facilitators.ts";
import { type IndexerEvent, runIndexer } from "../../src/indexer/index.ts";
import { ReorgTooDeepError } from "../../src/indexer/reorg.ts";
import { GENESIS, openTempAnalytics, snapshot, startTestDevnet } from "../helpers/indexer.ts";
import { mineAll, rpc, Settler } from "../helpers/settle.ts";

let devnet: Devnet;
let registry: FacilitatorRegistry;
let settler: Settler;
const merchant = derive(90).address;

beforeAll(async () => {
  devnet = await startTestDevnet({ buyers: 3 });
  registry = FacilitatorRegistry.base().withSigners([devnet.facilitatorAccount.address]);
  settler = new Settler(devnet, devnet.facilitatorAccount);
});
afterAll(() => devnet?.stop());

const buyer = (i: number) => devnet.buyers[i] as DevnetAccount;
const headNumber = async () => Number(await rpc(devnet.rpc, "eth_blockNumber"));

async function index(analytics: Analytics, toBlock: number, events: IndexerEvent[] = []) {
  return runIndexer({
    analytics,
    rpc: { url: devnet.rpc },
    registry,
    fromBlock: GENESIS + 1,
    toBlock,
    reorgDepth: 10,
    batchBlocks: 2,
    onEvent: (e) => events.push(e),
  });
}

describe("reorgs", () => {
  it("detects a reorg made with evm_snapshot/evm_revert and different transactions, rewinds and reindexes", async () => {
    await devnet.mine(2);
    const base = await headNumber();
    const snapshotId = await rpc<string>(devnet.rpc, "evm_snapshot");

    // Chain A: two payments, then a few blocks.
    const a = await settler.settle([
      { buyer: buyer(0), payTo: merchant, amount: 1_000n },
      { buyer: buyer(1), payTo: merchant, amount: 2_000n },
    ]);
    await mineAll(
      devnet,
      a.map((p) => p.tx),
    );
    await devnet.mine(4);
    const headA = await headNumber();
    const analytics = await openTempAnalytics();
    try {
      await index(analytics, headA);
      expect(
        (await analytics.all("SELECT amount FROM payments ORDER BY amount")).map((r) => r.amount),
      ).toEqual([1_000n, 2_000n]);

      // Chain B forks at `base`: other payments, and it grows longer than A.
      await rpc(devnet.rpc, "evm_revert", [snapshotId]);
      expect(await headNumber()).toBe(base);
      settler.resync();
      const b = await settler.settle([
        { buyer: buyer(2), payTo: merchant, amount: 3_000n },
        { buyer: buyer(0), payTo: merchant, amount: 4_000n },
        { buyer: buyer(1), payTo: merchant, amount: 5_000n },
      ]);
      await devnet.mine(1);
      await mineAll(
        devnet,
        b.map((p) => p.tx),
      );
      await devnet.mine(6);
      const headB = await headNumber();
      expect(headB).toBeGreaterThan(headA);

      const events: IndexerEvent[] = [];
      const summary = await index(analytics, headB, events);
      expect(summary.reorgs).toBe(1);
      const reorg = events.find((e) => e.type === "reorg");
      expect(reorg).toEqual({
        type: "reorg",
        checkpoint: headA,
        ancestor: expect.any(Number),
        ancestorTime: expect.any(Number),
      });
      expect((reorg as { ancestor: number }).ancestor).toBeLessThanOrEqual(base);
      expect(
        (await analytics.all("SELECT tx_hash, amount FROM payments ORDER BY amount")).map((r) => r.tx_hash),
      ).toEqual(b.map((p) => p.tx));

      // The corrected database is exactly what indexing chain B from scratch gives.
      const fresh = await openTempAnalytics();
      try {
        await index(fresh, headB);
        expect(await snapshot(analytics)).toEqual(await snapshot(fresh));
      } finally {
        fresh.close();
      }
      const state = await analytics.one<{ block_number: bigint; block_hash: string }>(
        "SELECT block_number, block_hash FROM indexer_state",
      );
      const chainHead = await rpc<{ hash: string }>(devnet.rpc, "eth_getBlockByNumber", [
        `0x${headB.toString(16)}`,
        false,
      ]);
      expect(state).toEqual({ block_number: BigInt(headB), block_hash: chainHead.hash });
    } finally {
      analytics.close();
    }
  });

  it("refuses to guess when the fork is deeper than --reorg-depth", async () => {
    const analytics = await openTempAnalytics();
    try {
      await devnet.mine(1);
      const snapshotId = await rpc<string>(devnet.rpc, "evm_snapshot");
      await devnet.mine(20);
      const head = await headNumber();
      await index(analytics, head);
      await rpc(devnet.rpc, "evm_revert", [snapshotId]);
      settler.resync();
      const c = await settler.settle([{ buyer: buyer(0), payTo: merchant, amount: 9n }]);
      await mineAll(
        devnet,
        c.map((p) => p.tx),
      );
      await devnet.mine(25);
      const before = await snapshot(analytics);
      await expect(index(analytics, await headNumber())).rejects.toThrow(ReorgTooDeepError);
      expect(await snapshot(analytics)).toEqual(before);
    } finally {
      analytics.close();
    }
  });
});
