/**
 * A screen marks payments that match a pattern in public chain data. It is two SQL conditions, see
 * `../sql.ts`: `pair` decides whether a (payer, merchant) pair is suspect at all, `payment` which of
 * its payments are flagged (true: all of them). Each flagged payment belongs to the first screen in
 * `SCREENS` order that matches it.
 */
export interface Screen {
  kind: string;
  /** One line for people: shown on the merchant page beside the flag. */
  summary: string;
  /**
   * Over the pair table: payer, pay_to, tx, amount, tiny_tx, tiny_mode_tx, payer_merchants,
   * payer_light_merchants (both NULL for payers of fewer than `proberMinMerchants` merchants), in_ring
   * (the pair is on a cycle, `cycles.ts`), funded_from (the block where the merchant's money first
   * reached the payer, or NULL). A NULL condition is false.
   */
  pair: string;
  /**
   * Over a group of the pair's payments that no screen can tell apart: amount, day (0 is the window's
   * first date), after_funding (made at or after funded_from) and tiny_max (the merchant's largest
   * tiny amount, `tiny-repeat.ts`).
   */
  payment: string;
}
