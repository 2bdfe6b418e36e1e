/**
 * Sweeps of the hub rules and of the haircut (issue 63, items 2 and 4): a gamer's knob turned across its
 * range on a week with genuine demand, each value on a copy of the week of its own, every report built. Asserted at
 * every value: the farm's flagged share never falls more than 10 points between neighbouring values;
 * wherever the farm escapes fully, the gamer spent (money that left its control: purchases at other
 * merchants' prices, independent money put in) at least half of what it hid; and the genuine look-alikes
 * (a treasury's agents, customers topped up by friends, an exchange's customers) lose under 2% of their
 * real revenue. The curves are printed (`SWEEP` lines) and written into docs/screens.md.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import { BASE_RECORD } from "../../src/chain/chains.ts";
import { KNOWN_HUBS } from "../../src/chain/hubs.ts";
import { ReportService } from "../../src/reports/serve/service.ts";
import { aggregateWindow, dropWindowTables } from "../../src/reports/week/aggregates.ts";
import {
  addr,
  analyticsWith,
  END,
  END_TIME,
  payment,
  START,
  transfer,
  WINDOW_BOUNDS,
} from "../helpers/data.ts";
import {
  DAY,
  exchangeCustomers,
  genuine,
  HOUR,
  MINUTE,
  payers,
  type RoundTrip,
  rng,
  roundTrip,
  WEEK,
  wallets,
} from "../helpers/scenarios.ts";
import {
  dispose,
  type Replica,
  removeSweepStores,
  SharedStore,
  sweepPoints,
  sweepStores,
} from "../helpers/window-flags.ts";

const KNOB = [0, 5, 10, 20, 35, 50, 75, 100];
const prices = [10_000, 20_000, 50_000];
const usd = (atomic: number) => atomic / 1e6;

/** The gamer's merchant, with genuine buyers, and the merchant whose buyers are genuine look-alikes. */
const m = addr("sweep-merchant");
const m2 = addr("sweep-lookalike-merchant");

interface Week {
  records: object[];
  /** Real revenue of m (its genuine buyers) and of m2 (the look-alikes), in USD. */
  truth: number;
  truth2: number;
  /** What the farm paid m, in USD, and what the gamer spent to hide it (money gone from its control). */
  farm: number;
  spent: number;
}

interface Point {
  knob: number;
  flagged: number;
  lost: number;
  hidden: number;
  spent: number;
  /** m's `exchange_flow_note`: how the report marks figures the screens could not trace. */
  note: string | null;
}

/**
 * Every report of the week built once, and for each point of the batch, on its copy of the week (`Replica`),
 * the farm's flagged share and the look-alikes' loss read from its merchants' reports.
 */
async function measure(
  analytics: Analytics,
  batch: readonly (readonly [Replica, Week & { knob: number }])[],
): Promise<Point[]> {
  const service = new ReportService(analytics, {
    publicUrl: "https://reports.test",
    now: () => new Date(END_TIME * 1000 + 3_600_000),
  });
  const { reports } = await service.reports(END);
  return batch.map(([replica, week]) => {
    const reportOf = (w: string) => reports.find((r) => r.address === replica.address(w));
    const real = (w: string) => reportOf(w)?.real_usd ?? 0;
    const hidden = Math.max(0, real(m) - week.truth);
    return {
      knob: week.knob,
      flagged: Math.min(1, Math.max(0, 1 - hidden / week.farm)),
      lost: (week.truth2 - real(m2)) / week.truth2,
      hidden,
      spent: week.spent,
      note: reportOf(m)?.exchange_flow_note ?? null,
    };
  });
}

// Each point's week is thousands of shared records and its knob's tens to hundreds: the shared ones are
// imported once, and most of a point's time is the build's fixed cost, so `REPLICAS` points share one build,
// each on a copy of the shared records of its own (test/helpers/window-flags.ts, `sweepPoints`). Each
// sweep's points came out the same both ways (SWEEPS_ALONE=1 and SWEEPS_DUMP, docs/benchmarks-log.md). Eight, a
// sweep's every point (`KNOB`), since 2026-11-29: one build and one alone check a sweep instead of two of each,
// 34.3 -> 29.6 CPU-s for the file at load 22, every batch's last point still the same alone.
const REPLICAS = 8;

/** Each knob's week measured, `REPLICAS` at a time, over stores of the records all of them share (`common`). */
async function sweep(
  common: readonly object[],
  knobs: readonly number[],
  weekAt: (knob: number) => Week,
): Promise<Point[]> {
  const stores = await sweepStores(common, REPLICAS);
  try {
    return await sweepPoints(
      stores,
      knobs.map((knob) => ({ knob, ...weekAt(knob) })),
      measure,
    );
  } finally {
    removeSweepStores(stores);
  }
}

/** The three assertions over a sweep's points, and its curve printed for the docs. */
function expectSmooth(name: string, points: readonly Point[]) {
  const curve = points.map((p) => `${p.knob}:${Math.round(p.flagged * 100)}%/${(p.lost * 100).toFixed(2)}%`);
  console.log(`SWEEP ${name} (knob:farm flagged/look-alikes lost) ${curve.join(" ")}`);
  for (let i = 1; i < points.length; i++)
    expect((points[i - 1] as Point).flagged - (points[i] as Point).flagged).toBeLessThanOrEqual(0.1);
  for (const p of points) {
    if (p.flagged === 0) expect(p.spent).toBeGreaterThanOrEqual(p.hidden / 2);
    expect(p.lost).toBeLessThan(0.02);
  }
}

/**
 * m2's look-alikes: 15 agents of one treasury, 10 customers each withdrawing $8 from a listed exchange
 * and topped up $2 by a friend of their own, and 30 customers of an exchange fed by 60 depositors, the
 * merchant depositing its takings there. All pay m2 listed prices.
 */
function lookAlikes(label: string): { records: object[]; truth: number } {
  const records: object[] = [];
  let truth = 0;
  const pay = (buyers: readonly string[], calls: number) => {
    records.push(...payers(m2, buyers, calls, (i) => prices[i % 3] as number));
    truth +=
      buyers.length *
      Array.from({ length: calls }, (_, i) => usd(prices[i % 3] as number)).reduce((a, b) => a + b);
  };
  const agents = wallets(`${label}-agent`, 15);
  records.push(...agents.map((w, i) => transfer(addr(`${label}-treasury`), w, 20_000_000, START - WEEK + i)));
  pay(agents, 25);
  const topped = wallets(`${label}-topped`, 10);
  const hub = KNOWN_HUBS[0]?.address as string;
  topped.forEach((w, i) => {
    records.push(
      transfer(hub, w, 8_000_000, START - WEEK + i),
      transfer(addr(`${label}-friend-${i}`), w, 2_000_000, START - WEEK + 20 + i),
    );
  });
  pay(topped, 20);
  const cex = addr(`${label}-cex`);
  records.push(
    ...wallets(`${label}-depositor`, 60).map((w, i) => transfer(w, cex, 10_000_000, START - 3 * WEEK + i)),
    transfer(m2, cex, 50_000_000, START - 2 * WEEK),
  );
  const customers = wallets(`${label}-cex-customer`, 30);
  records.push(...customers.map((w, i) => transfer(cex, w, 10_000_000, START - WEEK + 100 + i)));
  pay(customers, 30);
  return { records, truth };
}

/** The farm: m sends $300 to a distributor that pays 20 wallets $15 each, spent at m all week in $0.50s. */
function farmWeek(label: string, seed: number, distributor: string) {
  const base = genuine(m, prices, 30, seed);
  const alike = lookAlikes(label);
  const farm = wallets(`${label}-farm`, 20);
  const records = [
    ...base.records,
    ...alike.records,
    transfer(m, distributor, 300_000_000, START - 2 * WEEK),
    ...farm.map((w, i) => transfer(distributor, w, 15_000_000, START - WEEK + 1_000 + i)),
    ...payers(m, farm, 30, () => 500_000),
  ];
  return { records, truth: base.truthUsd, truth2: alike.truth, farm: 300 };
}

describe("hubs made to order (sweeps)", () => {
  it("tiny senders from 0 to 100, each its own cluster, paying $0.01 into the distributor", async () => {
    const d = addr("tiny-fed-distributor");
    const week = farmWeek("tiny", 41, d);
    const points = await sweep(week.records, KNOB, (n) => ({
      ...week,
      records: wallets("tiny-sender", n).flatMap((w, i) => [
        transfer(addr(`tiny-source-${i}`), w, 20_000, START - 3 * WEEK + i),
        transfer(w, d, 10_000, START - 3 * WEEK + 200 + i),
      ]),
      // The cents the tiny senders put in are the gamer's, and leave through the farm to m: spent, generously.
      spent: usd(n * 10_000),
    }));
    expectSmooth("tiny-senders", points);
  });

  it("cover wallets from 0 to 100 that the distributor funds with the gamer's own $1 each and that buy at 12 other merchants", async () => {
    const others = wallets("cover-merchant", 12);
    const d = addr("spread-distributor");
    const week = farmWeek("cover", 42, d);
    const common = [...week.records, ...others.flatMap((o) => genuine(o, prices, 3, 7).records)];
    const points = await sweep(common, KNOB, (c) => {
      const covers = wallets("cover", c);
      const records = [
        transfer(addr("cover-own-money"), d, c * 1_000_000, START - 2 * WEEK + 10),
        ...covers.map((w, i) => transfer(d, w, 1_000_000, START - WEEK + 2_000 + i)),
        // Each cover buys once at three of the twelve: no merchant paid by more than a quarter of them.
        ...covers.flatMap((w, i) =>
          [0, 1, 2].map((k) =>
            payment({
              payer: w,
              payTo: others[(i + k) % 12] as string,
              amount: 50_000,
              block: START + 500 + i * 3 + k,
            }),
          ),
        ),
      ];
      // Gone: the covers' purchases ($0.15 each); their funding stays in the gamer's wallets.
      return { ...week, records, spent: usd(c * 150_000) };
    });
    expectSmooth("cover-wallets", points);
  });
});

describe("a distributor fed by independent parties (the known limit, marked)", () => {
  it("parties from 0 to 100, each withdrawn from an exchange of its own and sending a fiftieth of the merchant's money", async () => {
    const d = addr("party-fed-distributor");
    const week = farmWeek("parties", 45, d);
    const points = await sweep(week.records, [0, 10, 25, 45, 50, 55, 75, 100], (k) => ({
      ...week,
      records: wallets("party", k).flatMap((w, i) => [
        transfer(addr(`party-source-${i}`), w, 6_000_000, START - 4 * WEEK + i),
        transfer(w, d, 6_000_000, START - 3 * WEEK + i),
      ]),
      // Independent money put in, as this file counts it: it pays for the farm in the merchant's stead.
      spent: usd(k * 6_000_000),
    }));
    const curve = points.map(
      (p) => `${p.knob}:${Math.round(p.flagged * 100)}%/${(p.lost * 100).toFixed(2)}%`,
    );
    console.log(`SWEEP fed-distributor (knob:farm flagged/look-alikes lost) ${curve.join(" ")}`);
    // Smooth in money: between neighbours the farm's flagged share falls by at most 10 points beyond what the
    // independent money put in between them pays for (FIFO: it leaves the distributor before the merchant's).
    for (let i = 1; i < points.length; i++) {
      const [a, b] = [points[i - 1] as Point, points[i] as Point];
      expect(a.flagged - b.flagged).toBeLessThanOrEqual(0.1 + (b.spent - a.spent) / 300 + 1e-9);
    }
    for (const p of points) {
      expect(p.lost).toBeLessThan(0.02);
      if (p.flagged === 0) expect(p.spent).toBeGreaterThanOrEqual(p.hidden / 2);
      // Where the distributor is a fed hub the data holds no balance of, the farm's wallets are named in the
      // merchant's report as passing buyers paid through a hub the merchant sent money to.
      if (p.flagged === 0)
        expect(p.note).toMatch(/^2\d passing buyer wallets received USDC that left this merchant/);
    }
    expect((points[0] as Point).flagged).toBe(1);
  });
});

/**
 * An unlabelled exchange whose deposits the data holds only in part: 300 depositors of $20 each, of which
 * the data holds `visible` percent (`visibleDeposits`, a point's own); m2 deposits $30 of its takings mid-week, and 30 of its customers
 * withdraw $20 each right after and spend it all at m2 (the pattern of the held-out set). The exchange pays
 * 270 other withdrawals of $20 around them.
 */
const PARTIAL_CEX = addr("partial-cex");
function partialExchange(): object[] {
  const cex = PARTIAL_CEX;
  const deposit = START + 100_000;
  const customers = wallets("partial-customer", 30);
  return [
    transfer(m2, cex, 30_000_000, deposit),
    ...wallets("partial-other", 270).map((w, i) =>
      transfer(cex, w, 20_000_000, i < 150 ? START + 10 + i * 600 : deposit + 1_000 + i * 600),
    ),
    ...customers.map((w, i) => transfer(cex, w, 20_000_000, deposit + 10 + i)),
    ...payers(m2, customers, 40, () => 500_000),
  ];
}

/** The part of the exchange's 300 deposits the data holds. */
const visibleDeposits = (visible: number) =>
  wallets("partial-depositor", Math.round((300 * visible) / 100)).map((w, i) =>
    transfer(w, PARTIAL_CEX, 20_000_000, START - 3 * WEEK + i),
  );

describe("the haircut (sweep)", () => {
  it("visible share of a wallet's inflow from 1% to 100%: an exchange's customers, and a farm's distributor", async () => {
    const base = genuine(m, prices, 30, 43);
    const alike = lookAlikes("haircut");
    const d = addr("partial-distributor");
    const farm = wallets("partial-farm", 20);
    // The farm: m's $300 and the gamer's own $300 (30 transfers, of which the data holds as many as it holds
    // of the exchange's deposits) pass through the distributor to 20 wallets that spend it at m.
    const common = [
      ...base.records,
      ...alike.records,
      ...partialExchange(),
      transfer(m, d, 300_000_000, START - 2 * WEEK),
      ...farm.map((w, i) => transfer(d, w, 30_000_000, START - WEEK + i)),
      ...payers(m, farm, 60, () => 500_000),
    ];
    const points = await sweep(common, [1, 5, 10, 20, 35, 50, 75, 100], (visible) => {
      const records = [
        ...visibleDeposits(visible),
        ...Array.from({ length: Math.round((30 * visible) / 100) }, (_, i) =>
          transfer(addr("gamer-savings"), d, 10_000_000, START - 2 * WEEK + 10 + i),
        ),
      ];
      // The farm's own $300 is real by the rules (the gamer's money, dollar for dollar): what it "hides" is
      // measured against m's genuine buyers alone, so half the farm is the most it can be flagged.
      return { records, truth: base.truthUsd, truth2: alike.truth + 600, farm: 600, spent: 300 };
    });
    expectSmooth("visible-share", points);
    for (const p of points) expect(p.flagged).toBeCloseTo(0.5, 1);
  });
});

describe("slivers of the merchant's money", () => {
  it("flags the payments of a wallet paid in many transfers, each a tenth the merchant's, as the merchant's money they held", async () => {
    const mm = addr("sliver-merchant");
    const base = genuine(mm, prices, 30, 44);
    const d = addr("sliver-distributor");
    const farm = wallets("sliver-farm", 10);
    // The data saw $20 of the distributor's $200 arrive, all the merchant's: each $1 payout holds $0.10 of it.
    const records = [
      ...base.records,
      transfer(mm, d, 20_000_000, START - WEEK),
      ...farm.flatMap((w, k) =>
        Array.from({ length: 20 }, (_, i) => transfer(d, w, 1_000_000, START + 1_000 + k * 1_000 + i * 40)),
      ),
      // Each payout spent at once: every payment holds one sliver, a tenth of it the merchant's.
      ...farm.flatMap((w, k) =>
        Array.from({ length: 20 }, (_, i) =>
          payment({ payer: w, payTo: mm, amount: 1_000_000, block: START + 1_000 + k * 1_000 + i * 40 + 1 }),
        ),
      ),
    ];
    const analytics = await analyticsWith(records);
    try {
      const service = new ReportService(analytics, {
        publicUrl: "https://reports.test",
        now: () => new Date(END_TIME * 1000 + 3_600_000),
      });
      const { report } = await service.report(mm, END);
      // $20 of the merchant's money was spent at it: $20 flagged, to within one payment per wallet.
      expect(report.flags.merchant_funded?.usd).toBeGreaterThanOrEqual(10);
      expect(report.flags.merchant_funded?.usd).toBeLessThanOrEqual(30);
    } finally {
      analytics.close();
    }
  });
});

/**
 * Money round an exchange (issue 84): m deposits $20 of its takings at a listed exchange every day from three
 * days before the window, and two fresh wallets withdraw what it deposited less the exchange's $0.10, after the
 * knob's delay, and spend it at m at $0.05 a call. Beside it, m's 30 buyers and 15 customers of the exchange
 * who spend what they withdraw there, at their own times; and three merchants of genuine look-alikes:
 * hub-sweeps' own (m2), one that deposits daily and whose buyers are 33 of the exchange's customers, three of
 * them withdrawing three minutes after its deposits, and a popular one (100 buyers and 100 of the exchange's
 * customers withdrawing all week) that deposits daily. Printed: m's farm flagged, the dollars it hid, the money gone (the fees), and the worst loss
 * of a look-alike.
 */
describe("money round an exchange (sweeps, issue 84)", () => {
  const hub = KNOWN_HUBS[0]?.address as string;
  const m3 = addr("round-sweep-customers");
  const m4 = addr("round-sweep-popular");

  function lookAlikeWeek() {
    const own = genuine(m, prices, 30, 84);
    const mine = exchangeCustomers(m, hub, { label: "round-sweep-m", buyers: 15, times: 3, seed: 84 });
    const alike = lookAlikes("round");
    const third = exchangeCustomers(m3, hub, { label: "round-sweep-m3", buyers: 30, times: 3, seed: 86 });
    const days = [2, 4, 5];
    const lucky = exchangeCustomers(m3, hub, {
      label: "round-sweep-lucky",
      buyers: 3,
      times: 1,
      seed: 86,
      when: () => START + (days.shift() as number) * DAY + 5_000 + 3 * MINUTE,
    });
    const fourth = genuine(m4, prices, 100, 87);
    const popular = exchangeCustomers(m4, hub, { label: "round-sweep-m4", buyers: 100, times: 4, seed: 87 });
    const records = [
      ...own.records,
      ...mine.records,
      ...alike.records,
      ...third.records,
      ...lucky.records,
      ...Array.from({ length: 8 }, (_, d) => transfer(m3, hub, 20_000_000, START - DAY + d * DAY + 5_000)),
      ...fourth.records,
      ...popular.records,
      ...Array.from({ length: 8 }, (_, d) => transfer(m4, hub, 200_000_000, START - DAY + d * DAY + 20_000)),
    ];
    return {
      records,
      truth: own.truthUsd + mine.truthUsd,
      truths: {
        m2: alike.truth,
        m3: third.truthUsd + lucky.truthUsd,
        m4: fourth.truthUsd + popular.truthUsd,
      },
    };
  }
  const WEEK_OF = lookAlikeWeek();
  // The look-alikes' week is every point's (24 of them) but for the gamer's round trips: imported once. Its
  // points are built one at a time: four to a build on copies of it (`sweepPoints`) came out the same as alone,
  // but the seven days' test took 99 s of wall against 42 s at load 15-23 (2026-11-29), near the time limit on a
  // loaded CI, for a CPU gain not shown in a paired run: this week is large (four merchants, 250 exchange customers).
  let weekStore: SharedStore | undefined;
  beforeAll(async () => {
    weekStore = await SharedStore.of(WEEK_OF.records);
  });
  afterAll(() => weekStore?.remove());

  interface RoundPoint {
    knob: string;
    flagged: number;
    hidden: number;
    gone: number;
    /** The largest share of their revenue any genuine buyers lost: m's own, or a look-alike merchant's. */
    lost: number;
  }

  /** Builds the week's window tables and reads what was flagged of the farm and of each genuine group. */
  async function measureTrip(knob: string, trip: RoundTrip): Promise<RoundPoint> {
    const analytics = await (weekStore as SharedStore).with(trip.records);
    try {
      await aggregateWindow(analytics, { chain: BASE_RECORD, ...WINDOW_BOUNDS });
      const rows = await analytics.all<{ payer: string; pay_to: string; amount: bigint }>(
        "SELECT payer, pay_to, sum(amount)::BIGINT AS amount FROM rw_wallets GROUP BY ALL",
      );
      await dropWindowTables(analytics);
      const farm = new Set(trip.farm);
      const flagged = (merchant: string, ofFarm: boolean) =>
        rows
          .filter((r) => r.pay_to === merchant && farm.has(r.payer) === ofFarm)
          .reduce((sum, r) => sum + Number(r.amount) / 1e6, 0);
      const paid = trip.paid / 1e6;
      const lost = Math.max(
        flagged(m, false) / WEEK_OF.truth,
        flagged(m2, false) / WEEK_OF.truths.m2,
        flagged(m3, false) / WEEK_OF.truths.m3,
        flagged(m4, false) / WEEK_OF.truths.m4,
      );
      const share = paid === 0 ? 1 : flagged(m, true) / paid;
      const hidden = Math.max(0, paid - flagged(m, true));
      const point = { knob, flagged: share, hidden, gone: trip.fees / 1e6, lost };
      console.log(
        `SWEEP round-trip | ${knob} | ${Math.round(share * 100)}% | $${point.hidden.toFixed(2)} of $${paid.toFixed(2)} | $${point.gone.toFixed(2)} | ${(lost * 100).toFixed(2)}% |`,
      );
      return point;
    } finally {
      dispose(analytics);
    }
  }

  /** The steady gamer: a deposit a day from three days before the window. */
  const gamer = (label: string, delay: (day: number, k: number) => number, share = 1) =>
    roundTrip(m, hub, { label, delay, share, firstDay: -3, days: 10 });

  const fixedDelay = (knob: string, delay: number) =>
    measureTrip(
      knob,
      gamer(`round-fixed-${knob}`, (_, k) => delay + 40 * k),
    );

  it("the delay between the deposit and the withdrawals, from a minute to an hour", async () => {
    const points: RoundPoint[] = [];
    for (const [knob, delay] of [
      ["1 min", MINUTE],
      ["10 min", 10 * MINUTE],
      ["30 min", 30 * MINUTE],
      ["1 h", HOUR],
    ] as [string, number][])
      points.push(await fixedDelay(knob, delay));
    for (const p of points) expect(p.lost, `genuine buyers at ${p.knob}`).toBeLessThan(0.02);
    // Within minutes, the escape the adversarial week found: flagged but for the buyers' base rate.
    for (const p of points.slice(0, 3)) expect(p.flagged, `at ${p.knob}`).toBeGreaterThan(0.9);
  });

  it("the delay between the deposit and the withdrawals, from two hours to a day and a half", async () => {
    const points: RoundPoint[] = [];
    for (const [knob, delay] of [
      ["2 h", 2 * HOUR],
      ["6 h", 6 * HOUR],
      ["12 h", 12 * HOUR],
      ["1.5 days", 36 * HOUR],
    ] as [string, number][])
      points.push(await fixedDelay(knob, delay));
    for (const p of points) expect(p.lost, `genuine buyers at ${p.knob}`).toBeLessThan(0.02);
    // From six hours on the gamer escapes: a known limit (docs/screens.md says why it stays). A change that
    // closes it fails here, and its curve must change in the docs.
    for (const p of points.slice(1)) expect(p.flagged, `at ${p.knob}`).toBeLessThan(0.05);
  });

  it("the delay drawn at random for each wallet, up to an hour, six hours, a day and three days", async () => {
    const points: RoundPoint[] = [];
    for (const [knob, most] of [
      ["0-1 h", HOUR],
      ["0-6 h", 6 * HOUR],
      ["0-1 day", DAY],
      ["0-3 days", 3 * DAY],
    ] as [string, number][]) {
      const next = rng(most);
      points.push(
        await measureTrip(
          `${knob} at random`,
          gamer(`round-random-${knob}`, () => 1 + next(most)),
        ),
      );
    }
    for (const p of points) expect(p.lost, `genuine buyers at ${p.knob}`).toBeLessThan(0.02);
    // Spread over six hours or more the withdrawals escape: the known limit above.
    for (const p of points.slice(1)) expect(p.flagged, `at ${p.knob}`).toBeLessThan(0.05);
  });

  it("the days of the week the money goes round, the week's $140 in as many deposits and 14 wallets, from seven to one", async () => {
    const points: RoundPoint[] = [];
    for (const days of [7, 6, 5, 4, 3, 2, 1]) {
      const trip = roundTrip(m, hub, {
        label: `round-days-${days}`,
        delay: (_, k) => 5 * MINUTE + 40 * k,
        days,
        perDay: Math.ceil(14 / days),
        deposit: Math.round(140_000_000 / days),
      });
      points.push(await measureTrip(`${days} days`, trip));
    }
    for (const p of points) expect(p.lost, `genuine buyers at ${p.knob}`).toBeLessThan(0.02);
    // Four days and more are repetition enough here; two or one are not (a known limit: one week's days).
    for (const p of points.slice(0, 4)) expect(p.flagged, `at ${p.knob}`).toBeGreaterThan(0.9);
    for (const p of points.slice(5)) expect(p.flagged, `at ${p.knob}`).toBe(0);
  });

  it("the share of each deposit withdrawn within minutes, from all of it to a tenth", async () => {
    const points: RoundPoint[] = [];
    for (const share of [1, 0.75, 0.5, 0.25, 0.1])
      points.push(
        await measureTrip(
          `${share * 100}%`,
          gamer(`round-share-${share}`, (_, k) => 5 * MINUTE + 40 * k, share),
        ),
      );
    for (const p of points) {
      expect(p.lost, `genuine buyers at ${p.knob}`).toBeLessThan(0.02);
      expect(p.flagged, `at ${p.knob}`).toBeGreaterThan(0.9);
    }
  });
});
