import type { Screen } from "./screen.ts";
import { THRESHOLDS } from "./thresholds.ts";

/**
 * ring: funds cycle back. Within the window, the merchant sent the payer (directly, by x402 payment or
 * transfer, or through one intermediate wallet that is not a hub) at least half of what the payer paid it.
 *
 * Rationale: a cycle returns the money that made the volume, so the same dollars can be counted again.
 * Two merchants paying each other (reciprocal x402 payments) are both flagged.
 * Hubs (wallets that send to `hubMinRecipients` or more wallets, such as exchanges) are not followed:
 * almost every merchant and buyer shares one, so the report's `exchange_flow_note` mentions those paths instead.
 * Known false positives: refunds of half or more of a customer's spend; two agents that genuinely
 * trade services both ways.
 */
export const ring: Screen = {
  kind: "ring",
  summary: "Money paid to the merchant came back to the payer, directly or through one other wallet.",
  pair: `payer <> pay_to AND returned >= ${THRESHOLDS.ringMinReturnShare} * amount`,
  payment: "true",
};
