/**
 * A screen marks payments that match a pattern in public chain data. It is two SQL conditions, see
 * `../week/aggregates.ts`: `pair` decides whether a (payer, merchant) pair is suspect at all, `payment` which of
 * its payments are flagged (true: all of them). Each flagged payment belongs to the first screen in
 * `SCREENS` order that matches it.
 */
export interface Screen {
  kind: string;
  /** One line for people: shown on the merchant page beside the flag. */
  summary: string;
  /**
   * Over the pair table: payer, pay_to, tx, amount, tiny_tx (the payer's cluster's tiny payments to the
   * merchant), tiny_n (the pair's payments tiny_repeat's share flags), payer_merchants, payer_light_merchants and cluster_tx (of the payer's cluster; NULL for
   * clusters of fewer than `proberMinMerchants` merchants), in_ring (the pair is on a cycle, `cycles.ts`),
   * funded_from (the block of the pair's first payment paid with the merchant's money, or NULL). A NULL
   * condition is false.
   */
  pair: string;
  /**
   * Over a group of the pair's payments that no screen can tell apart: amount, day (0 is the window's
   * first date), after_funding (paid with the merchant's money, `../provenance/`), ring_part (the ring's
   * share of the pair's payments, `ring.ts`) and tiny_part (tiny_repeat's share of them, `tiny-repeat.ts`).
   */
  payment: string;
}
