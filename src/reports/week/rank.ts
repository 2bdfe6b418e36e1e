/** Real revenue that rounds to at least $0.01: below it a rank would stand beside "$0.00". */
export const MIN_RANKED_AMOUNT = 5_000n;

/**
 * SQL, over one row per merchant of a window with `real_amount` (atomic units) and `held`:
 * `rank_by_real_revenue`. Merchants with real revenue of at least $0.01 once rounded that are not
 * held by the operator, by real revenue descending (exact amounts); equal revenue shares a rank (1, 2, 2, 4).
 * Everyone else is unranked (NULL).
 */
export function sqlRank(): string {
  const ranked = `(NOT held AND real_amount >= ${MIN_RANKED_AMOUNT})`;
  return `CASE WHEN ${ranked} THEN rank() OVER (PARTITION BY ${ranked} ORDER BY real_amount DESC) END`;
}
