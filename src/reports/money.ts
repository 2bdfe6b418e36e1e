/**
 * Exact money arithmetic on atomic USDC units (bigint, 6 decimals). Reports round only at the end,
 * half up, and the flags' dollar figures are apportioned so they add up exactly to usd - real_usd.
 */

const CENT = 10_000n;

/** Atomic units to whole cents, rounded half up. */
export function toCents(atomic: bigint): bigint {
  return (atomic + CENT / 2n) / CENT;
}

/** The same rounding in SQL, for an integer expression of atomic units: BIGINT whole cents. */
export function sqlCents(atomic: string): string {
  return `(((${atomic}) + ${CENT / 2n}) // ${CENT})::BIGINT`;
}

export function centsToUsd(cents: bigint): number {
  return Number(cents) / 100;
}

/** Atomic units to dollars rounded to 2 decimals. */
export function usd2(atomic: bigint): number {
  return centsToUsd(toCents(atomic));
}

/** Atomic units (possibly fractional, e.g. an interpolated quantile) to dollars at USDC precision. */
export function usd6(atomic: number): number {
  return Math.round(atomic) / 1_000_000;
}

/** `part / whole` rounded half up to `decimals` places; 0 when `whole` is 0. */
export function ratio(part: bigint, whole: bigint, decimals: number): number {
  if (whole === 0n) return 0;
  const scale = 10n ** BigInt(decimals);
  return Number((part * scale * 2n + whole) / (whole * 2n)) / Number(scale);
}

/**
 * Splits `totalCents` over parts given in atomic units by the largest-remainder method: each part gets
 * its cents rounded down, and the cents left go to the largest remainders. With `totalCents` equal to
 * toCents(usd) - toCents(real_usd) the rounded parts always sum to it exactly.
 */
export function apportionCents(parts: readonly bigint[], totalCents: bigint): bigint[] {
  const floors = parts.map((p) => p / CENT);
  let left = totalCents - floors.reduce((a, b) => a + b, 0n);
  const order = parts
    .map((p, i) => ({ i, remainder: p % CENT }))
    .filter((x) => x.remainder > 0n)
    .sort((a, b) => (a.remainder === b.remainder ? a.i - b.i : a.remainder > b.remainder ? -1 : 1));
  const result = [...floors];
  for (const { i } of order) {
    if (left <= 0n) break;
    result[i] = (result[i] ?? 0n) + 1n;
    left -= 1n;
  }
  return result;
}
