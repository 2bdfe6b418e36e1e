import type { Screen } from "./screen.ts";
import { THRESHOLDS } from "./thresholds.ts";

/**
 * prober: a wallet that pays many different merchants once to three times each, with small amounts:
 * crawlers and directory testers. Real money, but not demand for this merchant's service, and often
 * a new merchant's first payer.
 *
 * Rule: the payer's cluster (`provenance/clusters.ts`: a crawler split over wallets is one) paid at
 * least `proberMinMerchants` merchants in the window, paid at least `proberLightShare` of them no more
 * than `proberMaxPaymentsPerMerchant` times, paid this merchant no more than that, and each flagged
 * payment is at most `proberMaxAmount`.
 * Known false positives: a genuine agent that samples many services lightly; a marketplace's health checker.
 */
export const prober: Screen = {
  kind: "prober",
  summary: "The payer paid many different merchants once or a few times each with small amounts.",
  pair: `payer_merchants >= ${THRESHOLDS.proberMinMerchants}
    AND payer_light_merchants >= ${THRESHOLDS.proberLightShare} * payer_merchants
    AND cluster_tx <= ${THRESHOLDS.proberMaxPaymentsPerMerchant}`,
  payment: `amount <= ${THRESHOLDS.proberMaxAmount}`,
};
