import type { Screen } from "./screen.ts";
import { THRESHOLDS } from "./thresholds.ts";

/**
 * tiny_repeat: many identical payments from one wallet, far below anything the merchant charges:
 * leaderboard farming, which buys transaction counts for fractions of a cent.
 *
 * Rule: a payment is tiny when it is at most the merchant's price / `tinyPriceDivisor`, the price being
 * the lowest of its listed prices (Bazaar, catalogues, imports) and of the amounts that at least
 * `tinyPricePayers` distinct wallets, and at least `tinyPricePayerShare` of its payers, paid it in the
 * window (an amount many of its buyers pay is a price, even unlisted); a merchant with neither falls back
 * to `tinyFallbackMax`. A pair is flagged with at least
 * `tinyRepeatMinPayments` tiny payments in the window, at least `tinyRepeatUniformShare` of them of one
 * amount; those tiny payments are flagged.
 * So a merchant whose price really is $0.001 is never hit by payments of $0.001, and metered (upto)
 * charges far below the price vary with usage and fail the uniformity test.
 * Known false positives: an unlisted price far below the listed ones that fewer than
 * `tinyPricePayers` wallets (or that share of the payers) use, heavily and always for the same amount.
 */
export const tinyRepeat: Screen = {
  kind: "tiny_repeat",
  summary: "Many identical payments from one wallet, far below the merchant's prices.",
  pair: `tiny_tx >= ${THRESHOLDS.tinyRepeatMinPayments} AND tiny_mode_tx >= ${THRESHOLDS.tinyRepeatUniformShare} * tiny_tx`,
  payment: "amount <= tiny_max",
};
