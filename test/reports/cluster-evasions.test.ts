/**
 * The clusters against someone who has read docs/screens.md (issue 54): farms that split their funding,
 * top up from an exchange or withdraw in a burst, each beside genuine demand; the genuine look-alikes of
 * each; and imports that hold an exchange's withdrawals but not its deposits. Real revenue within 5% of
 * the truth either way.
 */
import { describe, expect, it } from "vitest";
import { THRESHOLDS } from "../../src/reports/screens/index.ts";
import { ReportService } from "../../src/reports/serve/service.ts";
import { addr, analyticsWith, END, END_TIME, payment, START, transfer } from "../helpers/data.ts";
import { expectNearTruth, genuine, payers, rng, WEEK, wallets } from "../helpers/scenarios.ts";

const prices = [10_000, 20_000, 50_000];

/** An exchange: a hub by its depositors, 50 wallets each withdrawn from a source of its own. */
function exchange(label: string) {
  const wallet = addr(label);
  const records = wallets(`${label}-depositor`, THRESHOLDS.hubMinSenders).flatMap((w, i) => [
    transfer(addr(`${label}-own-${i}`), w, 2_000_000, START - 4 * WEEK + i),
    transfer(w, wallet, 1_000_000, START - 4 * WEEK + 100 + i),
  ]);
  return { wallet, records };
}

/** A farm's tiny charges: amounts that vary from 100 to 2,000 atomic units, never one twice in a row. */
function tinyFarm(m: string, farm: readonly string[], seed: number) {
  const next = rng(seed);
  return payers(m, farm, 150, () => 100 + next(1_900));
}

/** The report and the evidence of `m` over `records`. */
async function reportAndEvidence(records: readonly object[], m: string) {
  const analytics = await analyticsWith(records);
  try {
    const service = new ReportService(analytics, {
      publicUrl: "https://reports.test",
      now: () => new Date(END_TIME * 1000 + 3_600_000),
    });
    return { report: (await service.report(m, END)).report, evidence: await service.evidence(m, END) };
  } finally {
    analytics.close();
  }
}

describe("farms that split their funding", () => {
  const m = addr("cluster-evasion-merchant");

  it("counts a farm funded a third each by three of its owner's wallets as one buyer (funding by cluster)", async () => {
    const base = genuine(m, prices, 30, 21);
    const owner = addr("thirds-owner");
    const feeders = wallets("thirds-feeder", 3);
    const farm = wallets("thirds-farm", 12);
    const records = [
      ...base.records,
      ...feeders.map((f, i) => transfer(owner, f, 100_000_000, START - 3 * WEEK + i)),
      // Days apart, so that no burst joins them: the funding rule alone must.
      ...farm.flatMap((w, i) =>
        feeders.map((f, j) => transfer(f, w, 3_000_000, START - 2 * WEEK + i * 40_000 + j)),
      ),
      ...tinyFarm(m, farm, 31),
    ];
    const { report, evidence } = await reportAndEvidence(records, m);
    expect(Math.abs(report.real_usd - base.truthUsd) / base.truthUsd).toBeLessThanOrEqual(0.05);
    expect(report.flags.tiny_repeat?.tx).toBe(12 * 150);
    const cluster = evidence.flags.find((f) => f.kind === "tiny_repeat")?.wallets[0]?.cluster;
    expect(cluster?.wallets).toBe(16);
    expect(cluster?.links.filter((l) => l.rule === "funding" && l.strong)).toHaveLength(15);
  });

  it("counts a farm its owner tops up with less than the exchange withdrawals beside it as one buyer", async () => {
    const base = genuine(m, prices, 30, 22);
    const cex = exchange("topup-exchange");
    const owner = addr("topup-owner");
    const farm = wallets("topup-farm", 12);
    const records = [
      ...base.records,
      ...cex.records,
      // 40% from the owner, 60% withdrawn from the exchange: no sender gives half of everything.
      ...farm.flatMap((w, i) => [
        transfer(owner, w, 2_000_000, START - 2 * WEEK + i * 40_000),
        transfer(cex.wallet, w, 3_000_000, START - 2 * WEEK + i * 40_000 + 50),
      ]),
      ...tinyFarm(m, farm, 32),
    ];
    const report = await expectNearTruth(records, m, base.truthUsd);
    expect(report.flags.tiny_repeat?.tx).toBe(12 * 150);
  });

  it("counts a farm funded by exchange withdrawals alone, within minutes, behaving alike, as one buyer", async () => {
    const base = genuine(m, prices, 30, 23);
    const cex = exchange("burst-exchange");
    const farm = wallets("burst-farm", 12);
    const records = [
      ...base.records,
      ...cex.records,
      // Each a few blocks after the last: twelve withdrawals in under a minute.
      ...farm.map((w, i) => transfer(cex.wallet, w, 5_000_000, START - WEEK + i * 3)),
      ...tinyFarm(m, farm, 33),
    ];
    const { report, evidence } = await reportAndEvidence(records, m);
    expect(Math.abs(report.real_usd - base.truthUsd) / base.truthUsd).toBeLessThanOrEqual(0.05);
    expect(report.flags.tiny_repeat?.tx).toBe(12 * 150);
    const links = evidence.flags.find((f) => f.kind === "tiny_repeat")?.wallets[0]?.cluster?.links ?? [];
    expect(links).toHaveLength(11);
    expect(links.every((l) => l.rule === "behaviour" && l.strong && (l.chance ?? 1) < 1e-9)).toBe(true);
  });
});

describe("bursts one level further and across exchanges (issue 84)", () => {
  const m = addr("burst-evasion-merchant");

  it("counts a farm whose feeders were withdrawn in one burst, each funding two farm wallets, as one buyer", async () => {
    const base = genuine(m, prices, 30, 27);
    const cex = exchange("feeder-burst-exchange");
    const feeders = wallets("burst-feeder", 10);
    const farm = wallets("burst-fed-farm", 20);
    const records = [
      ...base.records,
      ...cex.records,
      // Ten feeders withdrawn in under a minute; no feeder ever pays the merchant.
      ...feeders.map((f, i) => transfer(cex.wallet, f, 10_000_000, START - 2 * WEEK + i * 3)),
      // Each feeder funds two farm wallets, days apart: only the feeders' burst ties the farm together.
      ...farm.map((w, i) => transfer(feeders[i >> 1] as string, w, 5_000_000, START - WEEK - i * 20_000)),
      ...tinyFarm(m, farm, 34),
    ];
    const { report, evidence } = await reportAndEvidence(records, m);
    expect(Math.abs(report.real_usd - base.truthUsd) / base.truthUsd).toBeLessThanOrEqual(0.05);
    expect(report.flags.tiny_repeat?.tx).toBe(20 * 150);
    const cluster = evidence.flags.find((f) => f.kind === "tiny_repeat")?.wallets[0]?.cluster;
    // The ten feeders' clusters (a feeder and its two wallets each) joined by behaviour.
    expect(cluster?.wallets).toBe(30);
    expect(cluster?.links.filter((l) => l.rule === "behaviour" && l.strong)).toHaveLength(9);
  });

  it("counts a farm withdrawn in one burst split over three exchanges, four wallets from each, as one buyer", async () => {
    const base = genuine(m, prices, 30, 28);
    const exchanges = ["split-exchange-a", "split-exchange-b", "split-exchange-c"].map(exchange);
    const farm = wallets("split-burst-farm", 12);
    const records = [
      ...base.records,
      ...exchanges.flatMap((x) => x.records),
      // The same minutes, taking turns: each exchange pays four, under the group's five.
      ...farm.map((w, i) => transfer(exchanges[i % 3]?.wallet as string, w, 5_000_000, START - WEEK + i * 3)),
      ...tinyFarm(m, farm, 35),
    ];
    const { report, evidence } = await reportAndEvidence(records, m);
    expect(Math.abs(report.real_usd - base.truthUsd) / base.truthUsd).toBeLessThanOrEqual(0.05);
    expect(report.flags.tiny_repeat?.tx).toBe(12 * 150);
    const links = evidence.flags.find((f) => f.kind === "tiny_repeat")?.wallets[0]?.cluster?.links ?? [];
    expect(links).toHaveLength(11);
    expect(links.every((l) => l.rule === "behaviour" && l.strong)).toBe(true);
  });
});

describe("genuine look-alikes of the new rules", () => {
  const m = addr("cluster-lookalike-merchant");

  it("keeps apart customers who withdraw from an exchange and are topped up by friends, a different one each", async () => {
    const base = genuine(m, prices, 30, 24);
    const cex = exchange("friends-exchange");
    const buyers = [...new Set(base.records.map((r) => (r as { payer: string }).payer))];
    const records = [
      ...base.records,
      ...cex.records,
      ...buyers.flatMap((w, i) => [
        transfer(cex.wallet, w, 40_000_000, START - 2 * WEEK + i * 5_000),
        // A friend's small top-up beside the withdrawal, or half of everything for every third buyer.
        transfer(addr(`friend-${i}`), w, i % 3 === 0 ? 40_000_000 : 4_000_000, START - WEEK + i * 5_000),
      ]),
    ];
    const { report, evidence } = await reportAndEvidence(records, m);
    expect(report.flags).toEqual({});
    expect(report.real_usd).toBeCloseTo(base.truthUsd, 6);
    expect(evidence.flags).toEqual([]);
  });

  it("leaves genuine buyers of one on-ramp in the same hour, buying the same metered API, each a buyer", async () => {
    const cex = exchange("onramp-exchange");
    const next = rng(25);
    const hour = wallets("onramp-hour-buyer", 20);
    const others = wallets("onramp-other-buyer", 20);
    const metered = [...hour, ...others].flatMap((w, k) =>
      payers(m, [w], 5 + next(20), () => 200 + next(8_000)).map((p) => ({
        ...p,
        block: START + 100 + next(290_000) + k,
      })),
    );
    const truth = metered.reduce((sum, p) => sum + Number(p.amount), 0) / 1e6;
    const records = [
      ...cex.records,
      // All twenty withdrawn within the hour (1,800 blocks).
      ...hour.map((w, i) => transfer(cex.wallet, w, 5_000_000, START - WEEK + i * 90)),
      ...others.map((w, i) => transfer(addr(`own-wallet-${i}`), w, 5_000_000, START - WEEK + i * 20_000)),
      ...metered,
    ];
    const report = await expectNearTruth(records, m, truth);
    expect(report.flags).toEqual({});
  });
});

describe("imports that hold an exchange's withdrawals but not its deposits", () => {
  it("does not make a crawler one buyer with the customers the exchange paid, so its probes stay flagged", async () => {
    const cex = addr("import-exchange");
    const merchants = wallets("small-merchant", 60);
    const crawler = addr("import-crawler");
    const records = merchants.flatMap((s, j) => {
      const customers = wallets(`small-customer-${j}`, 2);
      return [
        ...customers.map((c, i) => transfer(cex, c, 2_000_000, START - WEEK + j * 10 + i)),
        ...payers(s, customers, 6, () => 10_000),
        payment({ payer: crawler, payTo: s, amount: 10_000, block: START + 1_000 + j }),
      ];
    });
    records.push(transfer(cex, crawler, 5_000_000, START - WEEK - 1));
    const { report, evidence } = await reportAndEvidence(records, merchants[0] as string);
    expect(report.flags).toEqual({ prober: { tx: 1, usd: 0.01 } });
    expect(evidence.flags[0]?.wallets[0]?.cluster).toBeUndefined();
  });

  it("does not call a merchant's revenue its own money where it deposits its takings at its customers' exchange", async () => {
    const m = addr("depositing-merchant");
    const cex = addr("takings-exchange");
    const customers = wallets("takings-customer", 40);
    const others = wallets("other-merchant", 12);
    const next = rng(26);
    let truth = 0;
    const records: object[] = [
      // The exchange also pays out to customers of twelve other merchants, four each.
      ...others.flatMap((o, j) => {
        const theirs = wallets(`other-customer-${j}`, 4);
        return [
          ...theirs.map((c, i) => transfer(cex, c, 2_000_000, START - WEEK + j * 10 + i)),
          ...payers(o, theirs, 3, () => 20_000),
        ];
      }),
    ];
    // Each customer withdraws $5 twice (before and after the merchant's deposits) and spends it all at m.
    customers.forEach((c, i) => {
      records.push(
        transfer(cex, c, 5_000_000, START + 1_000 + i),
        transfer(cex, c, 5_000_000, START + 150_000 + i),
      );
      const payments = payers(m, [c], 20, () => 500_000);
      records.push(...payments);
      truth += 10;
      next(1);
    });
    // The merchant deposits its takings at the exchange mid-week, before the customers' second withdrawals.
    records.push(transfer(m, cex, 150_000_000, START + 140_000));
    const report = await expectNearTruth(records, m, truth);
    expect(report.flags).toEqual({});
  });
});
