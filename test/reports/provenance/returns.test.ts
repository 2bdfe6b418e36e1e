import { describe, expect, it } from "vitest";
import { type HubMove, readPair, repeated, returnWeight } from "../../../src/reports/provenance/returns.ts";
import { THRESHOLDS } from "../../../src/reports/screens/thresholds.ts";
import { rng } from "../../helpers/scenarios.ts";

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/** The window: a week from day 0; the moves may start a day before. */
const WINDOW = { from: 10 * DAY, to: 17 * DAY };

let block = 0;
const move = (kind: number, at: number, usd: number, wallet: string, fresh = false): HubMove => ({
  merchant: "m",
  hub: "h",
  kind,
  wallet,
  tx: `0x${(++block).toString(16)}`,
  pos: 0,
  block: Math.round(at / 1000),
  at,
  amount: BigInt(usd * 1_000_000),
  fresh,
});
const deposit = (at: number, usd: number) => move(0, at, usd, "m");
const payout = (at: number, usd: number, wallet: string, fresh = false) => move(1, at, usd, wallet, fresh);
const inOrder = (moves: HubMove[]) => moves.sort((a, b) => a.at - b.at);
const usd = (shares: { amount: bigint }[]) => shares.reduce((s, x) => s + Number(x.amount), 0) / 1e6;

/** The merchant's buyers withdrawing at their own times, any hour: `n` payouts of $5-25, not their first. */
function customers(n: number, seed: number, hours: [number, number] = [0, 24]) {
  const next = rng(seed);
  return Array.from({ length: n }, (_, i) => {
    const day = WINDOW.from - DAY + next(8) * DAY;
    const at = day + hours[0] * HOUR + next((hours[1] - hours[0]) * 60) * MIN;
    return payout(at, 5 + next(21), `customer-${i % 20}`);
  });
}

describe("money read back out of a hub", () => {
  it("reads a deposit a day followed within minutes by fresh wallets, less the customers' rate, carried by those wallets", () => {
    const farm = Array.from({ length: 7 }, (_, d) => [
      deposit(WINDOW.from + d * DAY + 3 * HOUR, 20),
      payout(WINDOW.from + d * DAY + 3 * HOUR + 4 * MIN, 9.95, `farm-${d}-0`, true),
      payout(WINDOW.from + d * DAY + 3 * HOUR + 6 * MIN, 9.95, `farm-${d}-1`, true),
    ]).flat();
    const shares = readPair(inOrder([...farm, ...customers(60, 1)]), WINDOW);
    // All of it but what the customers' rate puts in the spans, and only the farm's wallets carry it.
    expect(usd(shares)).toBeGreaterThan(0.97 * 139.3);
    expect(usd(shares)).toBeLessThanOrEqual(139.3);
    expect(shares.every((s) => s.payout.wallet.startsWith("farm-"))).toBe(true);
    // Each deposit gives at most what it held.
    const byDeposit = new Map<string, number>();
    for (const s of shares)
      byDeposit.set(s.deposit.tx, (byDeposit.get(s.deposit.tx) ?? 0) + Number(s.amount));
    for (const given of byDeposit.values()) expect(given).toBeLessThanOrEqual(20_000_000);
    expect(shares[0]?.chance).toBeLessThan(THRESHOLDS.returnStrongChance);
  });

  it("reads nothing of one deposit followed by a burst of its customers' withdrawals: one day is no repetition", () => {
    const burst = Array.from({ length: 30 }, (_, i) =>
      payout(WINDOW.from + 2 * DAY + 10_000 + i * 1000, 20, `burst-${i}`, true),
    );
    const moves = inOrder([deposit(WINDOW.from + 2 * DAY, 30), ...burst, ...customers(60, 2)]);
    expect(readPair(moves, WINDOW)).toEqual([]);
  });

  it("reads nothing where the deposits and the customers' withdrawals share the hours of the day, hourly in office hours", () => {
    const deposits = Array.from({ length: 7 }, (_, d) =>
      Array.from({ length: 10 }, (_, h) => deposit(WINDOW.from + d * DAY + (8 + h) * HOUR, 20)),
    ).flat();
    const moves = inOrder([...deposits, ...customers(300, 3, [8, 18])]);
    expect(readPair(moves, WINDOW)).toEqual([]);
  });

  it("reads nothing of customers who withdraw at their own times, some of them minutes after the deposits", () => {
    const deposits = Array.from({ length: 8 }, (_, d) => deposit(WINDOW.from - DAY + d * DAY + 3 * HOUR, 20));
    const lucky = [1, 3, 4].map((d) =>
      payout(WINDOW.from + d * DAY + 3 * HOUR + 3 * MIN, 15, `lucky-${d}`, true),
    );
    expect(readPair(inOrder([...deposits, ...lucky, ...customers(90, 4)]), WINDOW)).toEqual([]);
  });
});

describe("how surely", () => {
  it("weighs a read from nothing at the weak chance to all of it at the strong, by the logarithm", () => {
    const t = THRESHOLDS;
    expect(returnWeight(t.returnWeakChance)).toBe(0);
    expect(returnWeight(t.returnStrongChance)).toBe(1);
    expect(returnWeight(Math.sqrt(t.returnWeakChance * t.returnStrongChance))).toBeCloseTo(0.5, 6);
  });

  it("counts days followed against their chances, the number chosen after seeing them", () => {
    expect(repeated([])).toBe(1);
    expect(repeated([1, 1, 1])).toBe(1);
    // Seven days each followed at a chance of 1%: 1e-14, times the seven counts tried.
    expect(repeated(Array(7).fill(0.01))).toBeCloseTo(7e-14, 15);
    // One day at one in a thousand among seven: about 7e-3, times seven.
    expect(repeated([0.001, 1, 1, 1, 1, 1, 1])).toBeCloseTo(7 * (1 - 0.999 ** 7), 4);
  });
});
