import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_USDC_AMOUNT } from "../../src/chain/base.ts";
import type { Devnet, DevnetAccount } from "../../src/chain/devnet/index.ts";
import { derive } from "../../src/chain/devnet/index.ts";
import { FacilitatorRegistry } from "../../src/chain/facilitators.ts";
import { listCandidates } from "../../src/indexer/candidates.ts";
import { type IndexerEvent, runIndexer } from "../../src/indexer/index.ts";
import { JsonReporter } from "../../src/indexer/progress.ts";
import { ReportService } from "../../src/reports/index.ts";
import { GENESIS, openTempAnalytics, startTestDevnet } from "../helpers/indexer.ts";
import { type Paid, rpc, Settler, sendTransfer } from "../helpers/settle.ts";

/**
 * Amounts above MAX_USDC_AMOUNT on chain: the indexer cannot refuse them, so it skips them (no payment,
 * candidate or transfer row) and says so; amounts at the bound are stored, and their sums report.
 */
let devnet: Devnet;
let registry: FacilitatorRegistry;
let head: number;
const merchant = derive(61).address.toLowerCase();
let huge: Paid;
let bounded: Paid;
let small: Paid;
let hugeTransfer: string;
let smallTransfer: string;

beforeAll(async () => {
  // Buyers rich enough to move 2^63 units (an amount only a wrong contract or a broken RPC could show).
  devnet = await startTestDevnet({ buyers: 2, buyerUsdc: 2n ** 64n });
  registry = FacilitatorRegistry.base().withSigners([devnet.facilitatorAccount.address]);
  const [b0, b1] = devnet.buyers as DevnetAccount[];
  [huge, bounded, small] = (await new Settler(devnet, devnet.facilitatorAccount).settle([
    { buyer: b0 as DevnetAccount, payTo: merchant as `0x${string}`, amount: 2n ** 63n - 1n },
    { buyer: b1 as DevnetAccount, payTo: merchant as `0x${string}`, amount: MAX_USDC_AMOUNT },
    { buyer: b0 as DevnetAccount, payTo: merchant as `0x${string}`, amount: 1_000_000n },
  ])) as [Paid, Paid, Paid];
  await devnet.mine(1);
  // Plain transfers into a paid wallet: kept as funding edges, unless above the bound.
  hugeTransfer = await sendTransfer(
    devnet,
    b1 as DevnetAccount,
    merchant as `0x${string}`,
    MAX_USDC_AMOUNT + 1n,
  );
  smallTransfer = await sendTransfer(devnet, b1 as DevnetAccount, merchant as `0x${string}`, 5n);
  await devnet.mine(3);
  head = Number(await rpc(devnet.rpc, "eth_blockNumber"));
});
afterAll(() => devnet?.stop());

describe("amounts above the bound on chain", () => {
  it("are skipped with a warning, the rest is stored, and the merchant's report adds up", async () => {
    const analytics = await openTempAnalytics();
    try {
      const events: IndexerEvent[] = [];
      await runIndexer({
        analytics,
        rpc: { url: devnet.rpc },
        registry,
        fromBlock: GENESIS + 1,
        toBlock: head,
        reorgDepth: 4,
        onEvent: (e) => events.push(e),
      });
      expect(await analytics.all("SELECT tx_hash, amount FROM payments ORDER BY amount")).toEqual([
        { tx_hash: small.tx, amount: 1_000_000n },
        { tx_hash: bounded.tx, amount: MAX_USDC_AMOUNT },
      ]);
      expect(
        await analytics.all("SELECT tx_hash, amount FROM transfers WHERE to_address = $1", [merchant]),
      ).toEqual([{ tx_hash: smallTransfer, amount: 5n }]);
      expect(await analytics.one("SELECT count(*) AS n FROM facilitator_candidates")).toEqual({ n: 0n });
      // The buyers' own mints of 2^64 are above the bound too.
      const skipped = events.filter((e) => e.type === "skipped");
      expect(skipped.every((e) => BigInt(e.amount) > MAX_USDC_AMOUNT)).toBe(true);
      expect(
        skipped.filter((e) => e.tx === huge.tx || e.tx === hugeTransfer).map((e) => [e.tx, e.amount]),
      ).toEqual([
        [huge.tx, "9223372036854775807"],
        [hugeTransfer, "10000000000000001"],
      ]);

      const { report, details } = await new ReportService(analytics, { publicUrl: "https://r.test" }).report(
        merchant,
      );
      expect(report).toMatchObject({ tx: 2, usd: 10_000_000_001, buyers: 2 });
      expect(details.exact?.amount).toBe(String(MAX_USDC_AMOUNT + 1_000_000n));
    } finally {
      analytics.close();
    }
  });

  it("are skipped in the funding history too, read below the first indexed block", async () => {
    // Indexed from the first settlement on, the buyers' mints of 2^64 lie below: the history reads them.
    const receipt = await rpc<{ blockNumber: string }>(devnet.rpc, "eth_getTransactionReceipt", [huge.tx]);
    const analytics = await openTempAnalytics();
    try {
      const events: IndexerEvent[] = [];
      const summary = await runIndexer({
        analytics,
        rpc: { url: devnet.rpc },
        registry,
        fromBlock: Number(receipt.blockNumber),
        toBlock: head,
        reorgDepth: 4,
        onEvent: (e) => events.push(e),
      });
      expect(summary.payments).toBe(2);
      const mints = events.filter((e) => e.type === "skipped" && e.amount === String(2n ** 64n));
      expect(mints).toHaveLength(2);
      expect(await analytics.one("SELECT max(amount) AS most FROM transfers")).toEqual({ most: 5n });
    } finally {
      analytics.close();
    }
  });

  it("writes one warning line for each, naming the log and the bound", () => {
    const lines: string[] = [];
    const reporter = new JsonReporter({
      write: (line: string) => lines.push(line),
    } as unknown as NodeJS.WritableStream);
    reporter.onEvent({ type: "skipped", tx: huge.tx, logIndex: 3, block: 12, amount: "9223372036854775807" });
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      {
        level: "warn",
        msg: "skipped a USDC transfer above the amount bound: not an x402 payment, not stored",
        tx: huge.tx,
        log_index: 3,
        block: 12,
        amount: "9223372036854775807",
        bound: "10000000000000000",
      },
    ]);
  });
});

describe("facilitator candidates", () => {
  it("sum their amounts past 2^63", async () => {
    const analytics = await openTempAnalytics();
    try {
      // 1,000 settlements at the bound from one unknown sender: 10^19 units.
      await analytics.run(
        `INSERT INTO facilitator_candidates SELECT 'base', printf('0x%064x', i), 1, 1000 + i, TIMESTAMP '2026-11-20',
           $sender, $payer, $payee, $amount, 'unknown_sender' FROM range(1000) t(i)`,
        {
          sender: "0x00000000000000000000000000000000000000aa",
          payer: "0x00000000000000000000000000000000000000bb",
          payee: "0x00000000000000000000000000000000000000cc",
          amount: MAX_USDC_AMOUNT,
        },
      );
      const [summary] = await listCandidates(analytics, FacilitatorRegistry.base());
      expect(summary).toMatchObject({ settlements: 1_000, usdc: "10000000000000.000000" });
    } finally {
      analytics.close();
    }
  });
});
