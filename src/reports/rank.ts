/** What ranking needs to know of a merchant in one window. */
export interface RankInput {
  address: string;
  realAmount: bigint;
  frozen: boolean;
}

/** Real revenue that rounds to at least $0.01: below it a rank would stand beside "$0.00". */
export const MIN_RANKED_AMOUNT = 5_000n;

/**
 * `rank_by_real_revenue`: merchants with real revenue (at least $0.01 once rounded) that are not
 * frozen, by real revenue descending (exact atomic amounts). Equal revenue shares a rank (1, 2, 2, 4).
 * Everyone else is unranked (null).
 */
export function rankByRealRevenue(merchants: readonly RankInput[]): Map<string, number | null> {
  const ranks = new Map<string, number | null>();
  const ranked = merchants
    .filter((m) => m.realAmount >= MIN_RANKED_AMOUNT && !m.frozen)
    .sort((a, b) =>
      a.realAmount === b.realAmount
        ? a.address.localeCompare(b.address)
        : a.realAmount > b.realAmount
          ? -1
          : 1,
    );
  ranked.forEach((m, i) => {
    const previous = ranked[i - 1];
    ranks.set(
      m.address,
      previous && previous.realAmount === m.realAmount ? (ranks.get(previous.address) ?? i + 1) : i + 1,
    );
  });
  for (const m of merchants) if (!ranks.has(m.address)) ranks.set(m.address, null);
  return ranks;
}
