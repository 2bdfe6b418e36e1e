import type { Screen } from "./screen.ts";

/**
 * merchant_funded: the payment was paid with the merchant's own money. Each wallet's USDC is attributed
 * to where it came from, first in first out (`../provenance/provenance-ledger.ts`), through any number of wallets
 * and at any age the data holds; a payment paid mostly (half or more) with money that had been in the
 * merchant's wallet is flagged. Hubs fed by many independent wallets (`hubMinSenders` clusters) are not
 * followed unless the data holds their balance, so a buyer who withdrew from the exchange the merchant
 * deposits to stays real. What a merchant sends back to a wallet, up to what the wallet paid it and was
 * not yet given back, is a refund: the customer's own money, not funding.
 *
 * Rationale: payments made with the merchant's own money are the merchant paying itself through other
 * wallets. Known false positives: operators that fund their users' or their monitoring wallets (the funded
 * wallet's payments are still the operator's money); a merchant's supplier or employee who is also a
 * customer and pays with what the merchant paid it.
 */
export const merchantFunded: Screen = {
  kind: "merchant_funded",
  summary: "The payer paid with money that came from the merchant's own wallet.",
  pair: "funded_from IS NOT NULL",
  payment: "after_funding",
};
