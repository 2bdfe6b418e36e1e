import type { Screen } from "./screen.ts";

/**
 * merchant_funded: the merchant's money reached the payer before it paid: by plain transfers, directly
 * or through up to three private wallets (`fundingMaxHops` transfers, each no earlier than the one
 * before it), starting in the window or in the 8 weeks before it (`fundingLookbackBlocks`). Hubs are
 * not followed, so a buyer who withdrew from the exchange the merchant deposits to stays real. A
 * transfer from the merchant that gives back no more than the wallet had already paid it in the window
 * is a refund, not funding.
 *
 * Rationale: payments made with the merchant's own money are the merchant paying itself through other
 * wallets. Payments made before the money arrived are left to the other screens.
 * Known false positives: operators that fund their users' or their monitoring wallets (the funded
 * wallet's payments are still the operator's money); a merchant's supplier or employee who is also a
 * customer, paid through private wallets.
 */
export const merchantFunded: Screen = {
  kind: "merchant_funded",
  summary: "The merchant's money reached the payer, directly or through other wallets, before it paid.",
  pair: "funded_from IS NOT NULL",
  payment: "after_funding",
};
