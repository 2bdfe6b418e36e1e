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
  const { report } = await reportOf(records, m);
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
