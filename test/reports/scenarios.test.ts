/**
 * Whole-merchant scenarios, shaped like chain data rather than like one screen's rule: genuine buyers
 * at listed prices, plus one pattern. The goal of issue 15: real_usd within 5% of the truth, and a
 * merchant with only genuine demand loses less than 2% to the screens.
 */
import { describe, expect, it } from "vitest";
import { THRESHOLDS } from "../../src/reports/screens/index.ts";
import { addr, balance, payment, START, transfer } from "../helpers/data.ts";
import { SideBySide } from "../helpers/reports.ts";
import { DAY, expectReportNearTruth, genuine, listing } from "../helpers/scenarios.ts";

// Each scenario's world is built beside the others in one store and one build (`SideBySide`), each on wallets
// of its own: the reports `reportOf` gives each alone (SIDE_BY_SIDE_ALONE=1 checks), for a fraction of the CPU.
const worlds = new SideBySide();

describe("tiny repeats against the merchant's own prices", () => {
  const m = addr("tiny-merchant");
  const prices = [10_000, 20_000, 50_000];

  const listings = prices.map((p, i) => listing(m, `e${i}`, p / 1e6));
  const regularBase = genuine(m, prices);
  const regular = worlds.world([
    ...regularBase.records,
    ...[0, 1, 2].flatMap((w) =>
      Array.from({ length: 300 }, (_, i) =>
        payment({ payer: addr(`farm-${w}`), payTo: m, amount: 1_000, block: START + 100 + i * 1_000 + w }),
      ),
    ),
    ...listings,
  ]);
  it("flags wallets paying a tenth of the cheapest listed price at a regular interval", async () => {
    const report = expectReportNearTruth((await regular(m)).report, regularBase.truthUsd);
    expect(report.flags.tiny_repeat?.tx).toBe(900);
  });

  const wideBase = genuine(m, prices);
  const wideFarm = Array.from({ length: 6 }, (_, w) =>
    Array.from({ length: 150 }, (_, i) =>
      payment({
        payer: addr(`wide-farm-${w}`),
        payTo: m,
        amount: 1_000,
        block: START + 100 + i * 2_000 + w,
      }),
    ),
  ).flat();
  // Listed prices, and the same without listings: the farm's amount is not a price either way.
  const wide = [listings, []].map((extra) => worlds.world([...wideBase.records, ...wideFarm, ...extra]));
  it("is not fooled by a farm of enough wallets to look like a price", async () => {
    for (const world of wide) {
      const report = expectReportNearTruth((await world(m)).report, wideBase.truthUsd);
      expect(report.flags.tiny_repeat?.tx).toBe(900);
    }
  });

  const unlistedBase = genuine(m, prices);
  const unlisted = worlds.world([
    ...unlistedBase.records,
    ...Array.from({ length: 400 }, (_, i) =>
      payment({ payer: addr("farm"), payTo: m, amount: 2_000, block: START + 100 + i * 700 }),
    ),
  ]);
  it("takes the price from what many wallets pay when nothing is listed", async () => {
    const report = expectReportNearTruth((await unlisted(m)).report, unlistedBase.truthUsd);
    expect(report.flags.tiny_repeat?.tx).toBe(400);
  });

  const cheap = worlds.world([
    ...genuine(m, [1_000], 3).records,
    ...Array.from({ length: 600 }, (_, i) =>
      payment({ payer: addr("integration"), payTo: m, amount: 1_000, block: START + 100 + i * 500 }),
    ),
    listing(m, "cheap", 0.001),
  ]);
  it("leaves a merchant whose listed price really is $0.001 alone", async () => {
    const { report } = await cheap(m);
    expect(report.flags).toEqual({});
  });

  const uuid = worlds.world([
    ...Array.from({ length: 600 }, (_, i) =>
      payment({ payer: addr("integration"), payTo: m, amount: 100, block: START + 100 + i * 500 }),
    ),
    listing(m, "uuid", 0.0001),
    listing(m, "big", 0.05),
  ]);
  it("leaves a listed $0.0001 price alone, used heavily by one wallet", async () => {
    const { report } = await uuid(m);
    expect(report.flags).toEqual({});
  });
});

describe("funding through private wallets", () => {
  const m = addr("funding-merchant");
  const prices = [10_000, 50_000, 100_000];

  const hopsBase = genuine(m, prices);
  const [a, b, c] = ["hop-a", "hop-b", "hop-c"].map(addr) as [string, string, string];
  const sybils = Array.from({ length: 8 }, (_, i) => addr(`sybil-${i}`));
  const hops = worlds.world([
    ...hopsBase.records,
    transfer(m, a, 500_000_000, START - 6 * 7 * DAY),
    transfer(a, b, 490_000_000, START - 5 * 7 * DAY),
    transfer(b, c, 480_000_000, START - 4 * 7 * DAY),
    ...sybils.map((w, i) => transfer(c, w, 50_000_000, START - 3 * 7 * DAY + i)),
    ...sybils.flatMap((w, i) =>
      Array.from({ length: 40 }, (_, k) =>
        payment({ payer: w, payTo: m, amount: 100_000, block: START + 50 + k * 7_000 + i }),
      ),
    ),
  ]);
  it("follows the merchant's money through three wallets, weeks before the window", async () => {
    const report = expectReportNearTruth((await hops(m)).report, hopsBase.truthUsd);
    expect(report.flags.merchant_funded?.tx).toBe(320);
  });

  const [x, y] = ["o-x", "o-y"].map(addr) as [string, string];
  const late = addr("late-buyer");
  const outOfOrder = worlds.world([
    // y passed money to the buyer before it received the merchant's.
    transfer(m, x, 10_000_000, START - 3 * DAY),
    transfer(y, late, 5_000_000, START - 2 * DAY),
    transfer(x, y, 9_000_000, START - DAY),
    payment({ payer: late, payTo: m, amount: 1_000_000 }),
  ]);
  it("does not follow a path out of order in time", async () => {
    const { report } = await outOfOrder(m);
    expect(report.flags).toEqual({});
  });

  /**
   * The merchant sweeps $200 to an exchange that pays its 30 buyers $20 each, with what the indexer keeps of it:
   * `depositors` unrelated wallets paying in, and its balance before it paid out, where given.
   */
  function exchangeWeek(label: string, seed: number, depositors: number, held?: number) {
    const base = genuine(m, prices, 30, seed);
    const exchange = addr(label);
    const records: object[] = [
      ...base.records,
      ...Array.from({ length: depositors }, (_, i) =>
        transfer(addr(`${label}-depositor-${i}`), exchange, 5_000_000, START - 6 * DAY + i),
      ),
      transfer(m, exchange, 200_000_000, START - 5 * DAY),
      ...(held === undefined ? [] : [balance(exchange, held, START - 3 * DAY - 1)]),
      ...Array.from({ length: 30 }, (_, b) =>
        transfer(exchange, addr(`${m}-buyer-${b}`), 20_000_000, START - 3 * DAY),
      ),
    ];
    const world = worlds.world(records);
    return async () => {
      const { report } = await world(m);
      expect(report.flags).toEqual({});
      expect(report.real_usd).toBeCloseTo(base.truthUsd, 6);
    };
  }

  it(
    "keeps buyers who withdrew from the exchange the merchant deposits to, its depositors in the data",
    // A hub by its senders, and no balance to follow it by.
    exchangeWeek("exchange", 3, THRESHOLDS.hubMinSenders),
  );

  it(
    "keeps buyers of an exchange whose balance, beyond what the data saw, covers all it was seen to pay out",
    // A hub left out: its millions come first in its queue.
    exchangeWeek("big-exchange", 6, THRESHOLDS.hubMinSenders, 2_000_000_000_000),
  );

  it(
    "keeps buyers who withdrew from an exchange whose balance the data holds, however few of its depositors it shows",
    // No hub (one depositor), followed: its balance puts the money the data did not see first.
    exchangeWeek("thin-exchange", 5, 1, 2_000_000_000_000),
  );

  const refundedBase = genuine(m, prices, 30, 4);
  const refunded = worlds.world([
    ...refundedBase.records,
    ...[0, 3, 7, 11].map((b) => transfer(m, addr(`${m}-buyer-${b}`), 10_000, START + 3 * DAY)),
  ]);
  it("keeps buyers the merchant refunds, before or after they pay again: only refunded dollars spent again count once", async () => {
    const base = refundedBase;
    const { report } = await refunded(m);
    // A refund spent again on the merchant is the same dollars paid twice: at most the refunds, $0.04.
    expect(Object.keys(report.flags).filter((k) => k !== "ring")).toEqual([]);
    expect(report.flags.ring?.usd ?? 0).toBeLessThanOrEqual(0.04);
    expect(base.truthUsd - report.real_usd).toBeLessThanOrEqual(0.04 + 1e-9);
  });
});

describe("rings of any length", () => {
  const ringOf = (n: number) => Array.from({ length: n }, (_, i) => addr(`ring-merchant-${i}`));

  const members = ringOf(5);
  const ringBase = members.map((m, i) => genuine(m, [20_000, 50_000], 20, 10 + i));
  const rounds = 60;
  const ring = worlds.world([
    ...ringBase.flatMap((b) => b.records),
    ...Array.from({ length: rounds }, (_, r) =>
      members.map((m, i) =>
        payment({
          payer: m,
          payTo: members[(i + 1) % 5] as string,
          amount: 1_000_000,
          block: START + 100 + r * 4_000 + i,
        }),
      ),
    ).flat(),
  ]);
  it("flags five merchants paying the next one round and round, and nothing of their customers", async () => {
    for (const [i, m] of members.entries()) {
      const { report } = await ring(m);
      expectReportNearTruth(report, (ringBase[i] as { truthUsd: number }).truthUsd);
      // Once a round has carried a merchant's own money back to it, that is merchant_funded (it comes first).
      expect((report.flags.ring?.tx ?? 0) + (report.flags.merchant_funded?.tx ?? 0)).toBe(rounds);
      expect(report.flags.ring?.tx).toBeGreaterThan(0);
    }
  });

  const relayMerchant = addr("relay-merchant");
  const relayBase = genuine(relayMerchant, [50_000], 30, 20);
  const relayed = (() => {
    const m = relayMerchant;
    const relays = ["r1", "r2", "r3"].map(addr);
    const buyer = addr("ring-buyer");
    const records: object[] = [...relayBase.records];
    for (let r = 0; r < 20; r++) {
      const at = START + 100 + r * 10_000;
      records.push(payment({ payer: buyer, payTo: m, amount: 5_000_000, block: at }));
      const path = [m, ...relays, buyer];
      for (let h = 0; h + 1 < path.length; h++)
        records.push(transfer(path[h] as string, path[h + 1] as string, 5_000_000, at + 10 + h));
    }
    return worlds.world(records);
  })();
  it("flags a merchant's money coming back to a buyer through a chain of wallets, repeatedly", async () => {
    const report = expectReportNearTruth((await relayed(relayMerchant)).report, relayBase.truthUsd);
    // The first payment is a ring's; the later ones were also made with the merchant's money, which came first.
    expect(report.flags).toEqual({ merchant_funded: { tx: 19, usd: 95 }, ring: { tx: 1, usd: 5 } });
  });

  const refundMerchant = addr("refund-merchant");
  const customer = addr("refunded");
  const refundedInFull = worlds.world([
    ...genuine(refundMerchant, [50_000], 30, 30).records,
    ...Array.from({ length: 10 }, (_, i) =>
      payment({ payer: customer, payTo: refundMerchant, amount: 50_000, block: START + 100 + i * 100 }),
    ),
    transfer(refundMerchant, customer, 500_000, START + 5_000),
  ]);
  it("leaves a customer refunded in full after its last payment alone", async () => {
    const { report } = await refundedInFull(refundMerchant);
    expect(report.flags).toEqual({});
  });
});
