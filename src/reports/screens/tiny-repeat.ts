import type { Screen } from "./screen.ts";

/**
 * tiny_repeat: many payments far below anything the merchant charges, from one buyer (a cluster of
 * wallets, `provenance/clusters.ts`): leaderboard farming, which buys transaction counts for fractions of
 * a cent.
 *
 * Rule: a payment is tiny when it is at most the merchant's price / `tinyPriceDivisor`, the price being
 * the lowest of its listed prices (Bazaar, catalogues, imports) and of what its independent buyers pay:
 * the lowest band of amounts (a power of two wide) that at least `tinyPricePayers` clusters, and at least
 * `tinyPricePayerShare` of its clusters, paid it in the window; a merchant with neither falls back to
 * `tinyFallbackMax`. Of a cluster's k tiny payments to the merchant in the window, whatever their amounts,
 * the share k / `tinyRepeatMinPayments` (all of them from that count on) is flagged, the earliest first
 * (`../week/aggregates.ts`, `rw_tiny_n`): a count is no step that one payment fewer steps past.
 * So a merchant whose price really is $0.001 is never hit by payments of $0.001, and metered (upto)
 * charges from independent buyers make the price they are measured against.
 * Known false positives: an unlisted price far below the listed ones that fewer than `tinyPricePayers`
 * clusters (or that share of them) use heavily.
 */
export const tinyRepeat: Screen = {
  kind: "tiny_repeat",
  summary: "Many payments from one buyer, far below the merchant's prices.",
  pair: "tiny_n > 0",
  payment: "tiny_part",
};
