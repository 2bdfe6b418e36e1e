import { describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import { importNdjson } from "../../src/analytics/import.ts";
import { bumpDataVersion } from "../../src/analytics/migrations.ts";
import { SEALS_PER_COMMIT, unsealAbove, usableDays } from "../../src/analytics/payment-days.ts";
import { BASE_USDC } from "../../src/chain/base.ts";
import { BASE_RECORD } from "../../src/chain/chains.ts";
import { BatchWriter } from "../../src/indexer/writer.ts";
import { ReportService } from "../../src/reports/index.ts";
import {
  addr,
  analyticsWith,
  END,
  ndjsonFile,
  payment,
  START,
  tempAnalytics,
  timeOf,
  transfer,
  txHash,
} from "../helpers/data.ts";

const DAY_BLOCKS = 43_200;
/** The first block of each date of the window: END is 2026-11-22T00:00:00Z, START 2026-11-15T00:00:00Z. */
const dayStart = (date: number) => START + (date - 15) * DAY_BLOCKS;

const merchants = ["m1", "m2", "m3"].map(addr);
const buyers = Array.from({ length: 6 }, (_, i) => addr(`b${i}`));

/** A week with a payment every few hours from each buyer, a self payment and a funded buyer. */
function week(): object[] {
  const records: object[] = [];
  let k = 0;
  for (let block = START - 2_000; block <= END; block += 3_001) {
    const payer = buyers[k % buyers.length] as string;
    const payTo = merchants[k % merchants.length] as string;
    records.push(payment({ payer, payTo, amount: 1_000 + (k % 4) * 500, block }));
    k++;
  }
  const m1 = merchants[0] as string;
  records.push(payment({ payer: m1, payTo: m1, amount: 20_000, block: dayStart(17) + 5 }));
  records.push(transfer(m1, addr("funded"), 5_000_000, dayStart(16)));
  for (let i = 0; i < 12; i++) {
    records.push(
      payment({ payer: addr("funded"), payTo: m1, amount: 10_000, block: dayStart(16) - 100 + i * 997 }),
    );
  }
  return records;
}

/** Every merchant's documents, the time of their making left out. */
async function documents(analytics: Analytics): Promise<unknown> {
  const service = new ReportService(analytics, { publicUrl: "https://r.test", now: () => new Date(0) });
  const merchants = [];
  for await (const batch of (await service.readMerchants(END)).batches) merchants.push(...batch);
  return merchants;
}

/** The same documents from the payments table alone: the day groups dropped. */
async function fromPayments(analytics: Analytics): Promise<unknown> {
  await analytics.run("DELETE FROM payment_days");
  await analytics.run("DELETE FROM sealed_days");
  await bumpDataVersion(analytics);
  return documents(analytics);
}

async function sealed(analytics: Analytics): Promise<Record<string, number>> {
  const rows = await analytics.all<{ day: string; payments: bigint }>(
    "SELECT strftime(day, '%Y-%m-%d') AS day, payments FROM sealed_days ORDER BY day",
  );
  return Object.fromEntries(rows.map((r) => [r.day, Number(r.payments)]));
}

async function paymentsOn(analytics: Analytics, day: string): Promise<number> {
  const row = await analytics.one<{ n: bigint }>(
    "SELECT count(*) AS n FROM payments WHERE block_time::DATE = $day::DATE",
    { day },
  );
  return Number(row?.n ?? 0n);
}

const tx = (docs: unknown, address: string) =>
  (docs as { report: { address: string; tx: number } }[]).find((d) => d.report.address === address)?.report
    .tx;

describe("payment days: the reports' day groups kept as payments are written", () => {
  it("seals an imported week up to its last day, and the reports read from them equal those from the payments", async () => {
    const analytics = await analyticsWith(week());
    try {
      const days = await sealed(analytics);
      expect(Object.keys(days)).toEqual([
        "2026-11-14",
        "2026-11-15",
        "2026-11-16",
        "2026-11-17",
        "2026-11-18",
        "2026-11-19",
        "2026-11-20",
        "2026-11-21",
      ]);
      for (const [day, n] of Object.entries(days)) expect(n).toBe(await paymentsOn(analytics, day));
      // 11-14 holds payments before the window: its payments are grouped from the table instead.
      expect(
        await usableDays(analytics, BASE_RECORD, { start: START, end: END, first: "2026-11-15" }),
      ).toEqual([{ from: "2026-11-15", to: "2026-11-21" }]);
      const cached = await documents(analytics);
      expect(tx(cached, merchants[0] as string)).toBeGreaterThan(0);
      expect(cached).toEqual(await fromPayments(analytics));
    } finally {
      analytics.close();
    }
  });

  it("uses no day of a window that holds only part of it", async () => {
    const analytics = await analyticsWith(week());
    try {
      const end = dayStart(19) + 100;
      const runs = await usableDays(analytics, BASE_RECORD, {
        start: end - 302_400,
        end,
        first: "2026-11-12",
      });
      expect(runs).toEqual([{ from: "2026-11-14", to: "2026-11-18" }]);
      const service = new ReportService(analytics, { publicUrl: "https://r.test", now: () => new Date(0) });
      const cached = (await service.reports(end)).reports;
      await analytics.run("DELETE FROM payment_days");
      await analytics.run("DELETE FROM sealed_days");
      await bumpDataVersion(analytics);
      expect(cached).toEqual((await service.reports(end)).reports);
    } finally {
      analytics.close();
    }
  });

  it("unseals a day a later import adds to, and seals it again with the new payment", async () => {
    const analytics = await analyticsWith(week());
    try {
      const before = await sealed(analytics);
      const m2 = merchants[1] as string;
      const txBefore = tx(await documents(analytics), m2) ?? 0;
      await importNdjson(
        analytics,
        ndjsonFile([payment({ payer: addr("late"), payTo: m2, amount: 7_000, block: dayStart(18) + 1 })]),
      );
      const after = await sealed(analytics);
      expect(after["2026-11-18"]).toBe((before["2026-11-18"] ?? 0) + 1);
      expect(after["2026-11-18"]).toBe(await paymentsOn(analytics, "2026-11-18"));
      const cached = await documents(analytics);
      expect(tx(cached, m2)).toBe(txBefore + 1);
      expect(cached).toEqual(await fromPayments(analytics));
    } finally {
      analytics.close();
    }
  });

  it("never reads a sealed day the payments table no longer agrees with (a write that raced the seal)", async () => {
    const analytics = await analyticsWith(week());
    try {
      const m3 = merchants[2] as string;
      const txBefore = tx(await documents(analytics), m3) ?? 0;
      // Written past every writer, as another connection's import could land between a seal's read and its commit.
      await analytics.run(
        `INSERT INTO payments VALUES ('base', $tx, 0, $block, to_timestamp($time)::TIMESTAMP, $f, $payer, $payTo, 9000, $usdc, NULL, NULL, NULL, NULL, NULL, NULL)`,
        {
          tx: txHash(),
          block: dayStart(19) + 7,
          time: timeOf(dayStart(19) + 7),
          f: addr("facilitator"),
          payer: addr("racer"),
          payTo: m3,
          usdc: BASE_USDC,
        },
      );
      await bumpDataVersion(analytics);
      expect(
        await usableDays(analytics, BASE_RECORD, { start: START, end: END, first: "2026-11-15" }),
      ).toEqual([]);
      const cached = await documents(analytics);
      expect(tx(cached, m3)).toBe(txBefore + 1);
      expect(cached).toEqual(await fromPayments(analytics));
    } finally {
      analytics.close();
    }
  });

  it("unseals the days a rewind deletes payments from", async () => {
    const analytics = await analyticsWith(week());
    try {
      await unsealAbove(analytics, BASE_RECORD, dayStart(20) + 10);
      expect(Object.keys(await sealed(analytics)).at(-1)).toBe("2026-11-19");
      const left = await analytics.one<{ n: bigint }>(
        "SELECT count(*) AS n FROM payment_days WHERE day >= '2026-11-20'",
      );
      expect(left?.n).toBe(0n);
    } finally {
      analytics.close();
    }
  });

  it("seals a few past days per indexer commit, and a commit into a sealed day unseals it", async () => {
    const analytics = await tempAnalytics();
    try {
      const writer = new BatchWriter(analytics);
      const row = (block: number, payer: string) => ({
        tx: txHash(),
        logIndex: 0,
        block,
        time: timeOf(block),
        facilitator: addr("facilitator"),
        payer,
        payTo: merchants[0] as string,
        amount: 1_000n,
        scheme: "exact" as const,
        method: "eip3009" as const,
      });
      const commit = async (from: number, to: number, blocks: number[], previous?: number) =>
        writer.commit(
          {
            from,
            to,
            end: { block: to, hash: `0x${to.toString(16).padStart(64, "0")}`, time: timeOf(to) },
            payments: blocks.map((b) => row(b, buyers[b % buyers.length] as string)),
            candidates: [],
            transfers: [],
            hashes: [],
          },
          {
            startBlock: START,
            reorgDepth: 64,
            previous:
              previous === undefined
                ? undefined
                : {
                    block: previous,
                    hash: `0x${previous.toString(16).padStart(64, "0")}`,
                    time: timeOf(previous),
                  },
          },
        );
      // Five days of payments in one batch: two of its four past days are sealed now, the rest by later commits.
      const first = [15, 16, 17, 18, 19].map((d) => dayStart(d) + 11);
      await commit(START + 1, dayStart(19) + 20, first);
      expect(Object.keys(await sealed(analytics))).toHaveLength(SEALS_PER_COMMIT);
      await commit(dayStart(19) + 21, dayStart(19) + 40, [dayStart(19) + 30], dayStart(19) + 20);
      await commit(dayStart(19) + 41, dayStart(19) + 60, [dayStart(19) + 50], dayStart(19) + 40);
      expect(Object.keys(await sealed(analytics))).toEqual([
        "2026-11-15",
        "2026-11-16",
        "2026-11-17",
        "2026-11-18",
      ]);
      // The head's day is never sealed while it grows; a batch that reaches a new day seals the one before.
      await commit(dayStart(19) + 61, dayStart(20) + 5, [dayStart(20) + 1], dayStart(19) + 60);
      expect((await sealed(analytics))["2026-11-19"]).toBe(3);
    } finally {
      analytics.close();
    }
  });
});
