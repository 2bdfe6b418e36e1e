/**
 * Whole-merchant scenarios for the screens' tests: genuine buyers at listed prices, to which a test adds
 * one pattern, and the check that real revenue lands within 5% of the truth.
 */
import { expect } from "vitest";
import { addr, END, payment, repeat, reportOf, START, transfer } from "./data.ts";

export const DAY = 43_200;
export const WEEK = 7 * DAY;

/** `n` deterministic wallets named from `label`. */
export const wallets = (label: string, n: number) =>
  Array.from({ length: n }, (_, i) => addr(`${label}-${i}`));

/** `wallets` each paying `m` `calls` times across the window, `amount(i)` for its i-th payment. */
export function payers(m: string, wallets: readonly string[], calls: number, amount: (i: number) => number) {
  return wallets.flatMap((w, k) =>
    Array.from({ length: calls }, (_, i) =>
      payment({
        payer: w,
        payTo: m,
        amount: amount(i),
        block: START + 100 + i * Math.floor(290_000 / calls) + k,
      }),
    ),
  );
}

/** A small deterministic generator, so every run builds the same week. */
export function rng(seed: number) {
  let x = seed >>> 0;
  return (n: number) => {
    x = (Math.imul(x, 1_664_525) + 1_013_904_223) >>> 0;
    return x % n;
  };
}

export const listing = (payTo: string, path: string, priceUsd: number) => ({
  type: "listing",
  pay_to: payTo,
  resource: `https://${payTo.slice(2, 10)}.example/${path}`,
  method: "GET",
  price_usd: priceUsd,
  description: `${path} endpoint`,
});

/** `buyers` wallets each paying one of `prices` (atomic) a few times a day all week; returns records and their sum. */
export function genuine(m: string, prices: readonly number[], buyers = 30, seed = 1) {
  const next = rng(seed);
  const records: object[] = [];
  let total = 0;
  for (let b = 0; b < buyers; b++) {
    const wallet = addr(`${m}-buyer-${b}`);
    for (let k = 3 + next(20); k > 0; k--) {
      const amount = prices[next(prices.length)] as number;
      records.push(payment({ payer: wallet, payTo: m, amount, block: START + 1 + next(END - START - 1) }));
      total += amount;
    }
  }
  return { records, truthUsd: total / 1e6 };
}

export async function expectNearTruth(records: readonly object[], m: string, truthUsd: number) {
  return expectReportNearTruth((await reportOf(records, m)).report, truthUsd);
}

/** `expectNearTruth` of a report already read (several merchants of one world: `withReports`, reports.ts). */
export function expectReportNearTruth<R extends { real_usd: number }>(report: R, truthUsd: number): R {
  expect(Math.abs(report.real_usd - truthUsd) / truthUsd).toBeLessThanOrEqual(0.05);
  return report;
}

/**
 * Four of the screens' patterns at merchant `m`, for tests of what the pages and feeds say of flags: the
 * merchant's money reaching `sybil` through two hops (merchant_funded), `tiny` paying tiny amounts
 * (tiny_repeat), the merchant paying itself (self_payment), and a ring of four through it.
 */
export function flaggedPatterns(
  m: string,
  w: { hopA: string; hopB: string; sybil: string; tiny: string; r1: string; r2: string; r3: string },
): object[] {
  return [
    transfer(m, w.hopA, 500_000_000, START - 6 * WEEK),
    transfer(w.hopA, w.hopB, 490_000_000, START - 5 * WEEK),
    transfer(w.hopB, w.sybil, 50_000_000, START + 50),
    ...repeat(15, { payer: w.sybil, payTo: m, amount: 10_000 }, START + 100, END),
    ...repeat(30, { payer: w.tiny, payTo: m, amount: 1_000 }),
    ...repeat(4, { payer: m, payTo: m, amount: 10_000 }),
    payment({ payer: w.r1, payTo: w.r2, amount: 1_000_000, block: START + 10 }),
    payment({ payer: w.r2, payTo: w.r3, amount: 1_000_000, block: START + 20 }),
    payment({ payer: w.r3, payTo: m, amount: 1_000_000, block: START + 30 }),
    payment({ payer: m, payTo: w.r1, amount: 1_000_000, block: START + 40 }),
  ];
}

/** Blocks of 2 s in an hour and in a minute. */
export const HOUR = 1_800;
export const MINUTE = 30;

export interface RoundTrip {
  records: object[];
  /** The fresh wallets that spent the deposits' money at the merchant. */
  farm: string[];
  /** What they paid the merchant (atomic) and the fees the gamer lost (atomic): money gone. */
  paid: number;
  fees: number;
}

/**
 * A merchant's takings round an exchange (issue 84): on each of `days` days (from day `firstDay` of the window)
 * the merchant deposits `deposit` at `hub`, at `at(d)` blocks into the day; `delay(d, k)` blocks later the k-th
 * of `perDay` fresh wallets withdraws its part of `share` of the deposit less the exchange's `fee`, and spends it
 * at the merchant in payments of `price`, one every five minutes, up to the window's end (`paid` counts those in
 * the window).
 */
export function roundTrip(
  m: string,
  hub: string,
  o: {
    label: string;
    delay: (day: number, k: number) => number;
    days?: number;
    firstDay?: number;
    perDay?: number;
    deposit?: number;
    share?: number;
    fee?: number;
    price?: number;
    at?: (day: number) => number;
  },
): RoundTrip {
  const { days = 7, firstDay = 0, perDay = 2, deposit = 20_000_000, share = 1, fee = 100_000 } = o;
  const price = o.price ?? 50_000;
  const at = o.at ?? (() => 3 * HOUR);
  const records: object[] = [];
  const farm: string[] = [];
  let paid = 0;
  let fees = 0;
  for (let d = firstDay; d < firstDay + days; d++) {
    const when = START + d * DAY + at(d);
    if (when > END) break;
    records.push(transfer(m, hub, deposit, when));
    const out = Math.floor(((deposit - fee) * share) / perDay);
    for (let k = 0; k < perDay; k++) {
      const withdrawn = when + o.delay(d, k);
      if (withdrawn >= END - MINUTE) continue;
      const w = addr(`${o.label}-${d}-${k}`);
      farm.push(w);
      fees += Math.round(fee / perDay);
      records.push(transfer(hub, w, out, withdrawn));
      for (let i = 0; i < Math.floor(out / price); i++) {
        const block = withdrawn + 10 + i * 150;
        if (block > END) break;
        records.push(payment({ payer: w, payTo: m, amount: price, block }));
        if (block > START) paid += price;
      }
    }
  }
  return { records, farm, paid, fees };
}

/**
 * An exchange's customers who are `m`'s buyers: each of `buyers` wallets withdraws from `hub`, `times` times at
 * `when(i)` (default: any time in the window and the day before it), $5 to $25, and spends nearly all of it at
 * `m` at the listed `prices`, one payment every ten minutes from a minute after: the look-alike a merchant's
 * money coming back resembles most. Returns the records and what they paid `m` in the window (USD).
 */
export function exchangeCustomers(
  m: string,
  hub: string,
  o: {
    label: string;
    buyers: number;
    times: number;
    seed: number;
    when?: (next: (n: number) => number) => number;
  },
) {
  const next = rng(o.seed);
  const when = o.when ?? ((n: (k: number) => number) => START - DAY + n(END - START + DAY - 1));
  const records: object[] = [];
  let truth = 0;
  for (const w of wallets(o.label, o.buyers))
    for (let t = 0; t < o.times; t++) {
      const at = when(next);
      const amount = (5 + next(21)) * 1_000_000;
      records.push(transfer(hub, w, amount, at));
      let left = amount;
      for (let block = at + MINUTE; block <= END; block += 20 * MINUTE) {
        const price = PRICES[next(PRICES.length)] as number;
        if (price > left) break;
        left -= price;
        records.push(payment({ payer: w, payTo: m, amount: price, block }));
        if (block > START) truth += price;
      }
    }
  return { records, truthUsd: truth / 1e6 };
}

/** The listed prices of the scenarios' merchants (atomic): $0.10, $0.25 and $0.50 a call. */
const PRICES = [100_000, 250_000, 500_000];
