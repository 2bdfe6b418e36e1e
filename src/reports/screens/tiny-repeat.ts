import type { Screen } from "./screen.ts";
import { THRESHOLDS } from "./thresholds.ts";

/**
 * tiny_repeat: many tiny, identical payments from one wallet to one merchant: leaderboard farming,
 * which buys transaction counts for fractions of a cent.
 *
 * Rule: at least `tinyRepeatMinPayments` payments below `tinyAmount` from the payer to the merchant in
 * the window, at least `tinyRepeatUniformShare` of them of one amount; those tiny payments are flagged.
 * A steady integration paying a listed price of $0.001 or more is not tiny and passes; metered (upto)
 * charges below $0.001 vary with usage and so fail the uniformity test.
 * Known false positives: a service priced below $0.001 per call and used heavily by one wallet.
 */
export const tinyRepeat: Screen = {
  kind: "tiny_repeat",
  summary: "Many tiny payments of the same amount from one wallet.",
  pair: `tiny_tx >= ${THRESHOLDS.tinyRepeatMinPayments} AND tiny_mode_tx >= ${THRESHOLDS.tinyRepeatUniformShare} * tiny_tx`,
  payment: `amount < ${THRESHOLDS.tinyAmount}`,
};
