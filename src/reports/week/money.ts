/**
 * Exact money arithmetic on atomic USDC units (6 decimals), as SQL expressions: the reports are
 * assembled in DuckDB (see aggregates.ts). Sums stay in integers; reports round only at the end, half up,
 * and the flags' dollar figures are apportioned so they add up exactly to usd - real_usd (report.ts).
 * Sums and cents are HUGEINT, never cast down: a sum of bounded payments can pass 2^63 (aggregates.ts),
 * and its cents can too, past 9.2 million payments of the bound.
 */

/** Atomic units in a cent. */
export const CENT = 10_000n;

/** Atomic units to whole cents, rounded half up: HUGEINT. */
export function sqlCents(atomic: string): string {
  return `(((${atomic})::HUGEINT + ${CENT / 2n}) // ${CENT})`;
}

/**
 * SQL, in a query over the rows that share a total: each row's whole cents by largest remainder. Every
 * row of a `partition` gets its `amount` (atomic) in cents rounded down, and the cents left to reach
 * `totalCents` go one each to the rows with the largest remainders (rows matching `prefer` first, then
 * `tieBreak`), so the rows add up to `totalCents` exactly. `totalCents` is at most the partition's
 * amounts rounded half up, which leaves no more cents than rows with a remainder.
 */
export function sqlApportionedCents(p: {
  amount: string;
  totalCents: string;
  partition: string;
  tieBreak: string;
  prefer?: string;
}): string {
  const rest = `(${p.amount}) % ${CENT}`;
  const order = [`${rest} > 0 DESC`, ...(p.prefer ? [`${p.prefer} DESC`] : []), `${rest} DESC`, p.tieBreak];
  return `((${p.amount}) // ${CENT} + CASE WHEN ${rest} > 0 AND row_number() OVER (
      PARTITION BY ${p.partition} ORDER BY ${order.join(", ")}
    ) <= ${p.totalCents} - sum((${p.amount}) // ${CENT}) OVER (PARTITION BY ${p.partition}) THEN 1 ELSE 0 END)::HUGEINT`;
}

/** Whole cents to dollars: a DOUBLE, the same number as JavaScript's `cents / 100`. */
export function sqlUsd(cents: string): string {
  return `((${cents}) / 100)`;
}

/** Whole cents (>= 0) as dollars with exactly two decimals and no separators: "1244.06". */
export function sqlUsdText(cents: string): string {
  return `printf('%d.%02d', (${cents}) // 100, (${cents}) % 100)`;
}

/** Atomic units, possibly fractional (an interpolated quantile, >= 0), to dollars at USDC precision. */
export function sqlUsd6(atomic: string): string {
  return `(round(${atomic}) / 1000000)`;
}

/** `part / whole` (integers >= 0) rounded half up to `decimals` places, exactly; 0 when `whole` is 0. */
export function sqlRatio(part: string, whole: string, decimals: number): string {
  const scale = 10 ** decimals;
  return `CASE WHEN (${whole}) = 0 THEN 0::DOUBLE
    ELSE (((${part})::HUGEINT * ${2 * scale} + (${whole})) // ((${whole})::HUGEINT * 2))::DOUBLE / ${scale} END`;
}

/**
 * The real share as a whole percent, the one number the claim, the pages, the leaderboard and the badge
 * show (docs/report.md, "Claim"): the published real_usd divided by the published usd, rounded half up; 0 without
 * payments. Computed on whole cents, so it is exact and SQL (`sqlRealPercent`) gives the same number.
 * @example realPercent({ usd: 0.09, real_usd: 0.08 }) // 89
 */
export function realPercent(report: { usd: number; real_usd: number }): number {
  const cents = Math.round(report.usd * 100);
  const realCents = Math.round(report.real_usd * 100);
  return cents === 0 ? 0 : Math.floor((realCents * 200 + cents) / (cents * 2));
}

/** `realPercent` in SQL, from whole cents (integer expressions): INTEGER (at most 100). */
export function sqlRealPercent(realCents: string, cents: string): string {
  return `CASE WHEN (${cents}) = 0 THEN 0 ELSE (((${realCents})::HUGEINT * 200 + (${cents})) // ((${cents})::HUGEINT * 2))::INTEGER END`;
}
