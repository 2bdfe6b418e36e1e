import type { Screen } from "./screen.ts";

/**
 * merchant_funded: the payment was paid with the merchant's own money. Each wallet's USDC is attributed
 * to where it came from, first in first out (`../provenance/provenance-ledger.ts`), through any number of wallets
 * and at any age the data holds; a wallet that paid out more than the data saw it receive, with no balance in
 * the data, passes the visible money on at the visible share (a haircut). A payment is flagged when the
 * merchant's money in it, with what the pair's earlier payments carried unflagged, is half of it or more. Hubs
 * are not followed only where the data holds a balance covering all they sent, or they are listed, or the data
 * cannot see their money (they paid out more than they were seen to receive), so a buyer who withdrew from the
 * exchange the merchant deposits to stays real. What a merchant sends back to a wallet, up to what the wallet
 * paid it and was not yet given back, is a refund: the customer's own money, not funding.
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
