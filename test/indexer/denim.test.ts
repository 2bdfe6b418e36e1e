import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASE_DENIM_BLOCK, BASE_MAINNET_CLOCK } from "../../src/chain/block-clock.ts";
import type { Devnet, DevnetAccount } from "../../src/chain/devnet/index.ts";
import { derive } from "../../src/chain/devnet/index.ts";
import { FacilitatorRegistry } from "../../src/chain/facilitators.ts";
import { type IndexerEvent, runIndexer } from "../../src/indexer/index.ts";
import { blocksIn } from "../../src/indexer/options.ts";
import { ReportService } from "../../src/reports/index.ts";
import { openTempAnalytics, startTestDevnet } from "../helpers/indexer.ts";
import { type Paid, rpc, Settler } from "../helpers/settle.ts";

/**
 * Base Mainnet across Denim, played on anvil: a chain at Base Mainnet's block numbers and times, 2 s blocks up
 * to the activation block, then blocks 200 ms apart, five to a header second (anvil takes a timestamp equal to
 * its parent's). Payments on both sides are indexed with their blocks' times and reported in one week.
 */
const FIRST = BASE_DENIM_BLOCK - 300;
const clock = BASE_MAINNET_CLOCK;
let devnet: Devnet;
let registry: FacilitatorRegistry;
const merchant = derive(71).address.toLowerCase() as `0x${string}`;
const paid: { block: number; payment: Paid }[] = [];
let head: number;

const blockNumber = async () => Number(await rpc<string>(devnet.rpc, "eth_blockNumber"));

/** Mines block `n` at the time Base's clock gives it. */
async function mineOnClock(n: number): Promise<void> {
  await rpc(devnet.rpc, "evm_setNextBlockTimestamp", [clock.timeOf(n)]);
  await rpc(devnet.rpc, "evm_mine", []);
}

beforeAll(async () => {
  devnet = await startTestDevnet({ genesisNumber: FIRST, genesisTimestamp: clock.timeOf(FIRST), buyers: 2 });
  registry = FacilitatorRegistry.base().withSigners([devnet.facilitatorAccount.address]);
  const [b0, b1] = devnet.buyers as [DevnetAccount, DevnetAccount];
  const settler = new Settler(devnet, devnet.facilitatorAccount);
  const setup = await blockNumber();
  expect(setup).toBeLessThan(BASE_DENIM_BLOCK - 5);
  await devnet.mine(BASE_DENIM_BLOCK - 3 - setup);
  // Blocks paid in: the last but one of 2 s, the activation block, one sharing its second, and one a second on.
  const payIn = new Set([BASE_DENIM_BLOCK - 2, BASE_DENIM_BLOCK, BASE_DENIM_BLOCK + 3, BASE_DENIM_BLOCK + 6]);
  for (let n = BASE_DENIM_BLOCK - 2; n <= BASE_DENIM_BLOCK + 12; n++) {
    if (payIn.has(n)) {
      const buyer = paid.length % 2 === 0 ? b0 : b1;
      const [payment] = await settler.settle([
        { buyer, payTo: merchant, amount: 1_000_000n + BigInt(n % 1000) },
      ]);
      paid.push({ block: n, payment: payment as Paid });
    }
    await mineOnClock(n);
  }
  head = await blockNumber();
}, 120_000);
afterAll(() => devnet?.stop());

describe("Base Mainnet across Denim", () => {
  it("the devnet's blocks keep Base Mainnet's schedule, five 200 ms blocks to a second", async () => {
    expect(head).toBe(BASE_DENIM_BLOCK + 12);
    for (const n of [BASE_DENIM_BLOCK - 1, BASE_DENIM_BLOCK, BASE_DENIM_BLOCK + 4, BASE_DENIM_BLOCK + 5]) {
      const block = await rpc<{ timestamp: string }>(devnet.rpc, "eth_getBlockByNumber", [
        `0x${n.toString(16)}`,
        false,
      ]);
      expect(Number(block.timestamp)).toBe(clock.timeOf(n));
    }
  });

  it("indexes the payments of both sides at their blocks' times, and reports them in one week", async () => {
    const analytics = await openTempAnalytics();
    try {
      const events: IndexerEvent[] = [];
      // No --reorg-depth: the default is 128 s of blocks at the head: 640 of Denim's a day after it, 64 of 2 s
      // before it, and here, 12 blocks after it, the 12 and 63 of 2 s.
      expect(blocksIn(clock, BASE_DENIM_BLOCK + 432_000, 128)).toBe(640);
      expect(blocksIn(clock, BASE_DENIM_BLOCK - 1, 128)).toBe(64);
      await runIndexer({
        analytics,
        rpc: { url: devnet.rpc },
        registry,
        fromBlock: FIRST + 1,
        toBlock: head,
        onEvent: (e) => events.push(e),
      });
      expect(events.find((e) => e.type === "start")).toMatchObject({
        reorgDepth: 12 + 63,
        minuteBlocks: 12 + 29,
      });
      const rows = await analytics.all<{ block_number: bigint; t: bigint; tx_hash: string }>(
        "SELECT block_number, epoch(block_time)::BIGINT AS t, tx_hash FROM payments ORDER BY block_number",
      );
      expect(rows.map((r) => [Number(r.block_number), Number(r.t), r.tx_hash])).toEqual(
        paid.map((p) => [p.block, clock.timeOf(p.block), p.payment.tx]),
      );
      // Two payments in one header second, three blocks apart: the second sharing the activation block's.
      expect(clock.timeOf(BASE_DENIM_BLOCK + 3)).toBe(clock.timeOf(BASE_DENIM_BLOCK));

      const { report } = await new ReportService(analytics, { publicUrl: "https://reports.test" }).report(
        merchant,
      );
      expect(report.window).toMatchObject({
        end_block: head,
        start_block: clock.blockAtMs(clock.msOf(head) - 7 * 86_400_000),
      });
      // Its start is the last 2 s block at or before 7 days back: a week of up to 2 s more, said as it is.
      expect(report.window.days).toBeGreaterThanOrEqual(7);
      expect(report.window.days).toBeLessThanOrEqual(7 + 2 / 86_400);
      expect(report.tx).toBe(paid.length);
      expect(report.daily.map((d) => d.date)).toContain("2026-11-05");
    } finally {
      analytics.close();
    }
  }, 120_000);
});
