/**
 * A screen marks payments that match a pattern in public chain data. It is two SQL conditions over
 * the window's pair table (one row per payer and merchant, see `../sql.ts`): `pair` decides whether a
 * pair is suspect at all, `payment` which of its payments are flagged (true: all of them).
 * Each flagged payment belongs to the first screen in `SCREENS` order that matches it.
 */
export interface Screen {
  kind: string;
  /** One line for people: shown on the merchant page beside the flag. */
  summary: string;
  pair: string;
  payment: string;
}
