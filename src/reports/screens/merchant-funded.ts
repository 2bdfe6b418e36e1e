import type { Screen } from "./screen.ts";

/**
 * merchant_funded: the payer received USDC from the merchant (a plain transfer, in the window or in
 * the 28 days before it), and paid after that transfer.
 *
 * Rationale: payments made with the merchant's own money are the merchant paying itself through a
 * second wallet. Payments made before the first funding transfer are left to the other screens.
 * Known false positives: operators that fund their users' or their monitoring wallets (the funded
 * wallet's payments are still the operator's money); a merchant that pays a contractor who is also a customer.
 */
export const merchantFunded: Screen = {
  kind: "merchant_funded",
  summary: "The payer received USDC from the merchant before paying it.",
  pair: "funded_from IS NOT NULL",
  payment: "after_funding",
};
