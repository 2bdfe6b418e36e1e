import type { Screen } from "./screen.ts";

/**
 * ring: funds go round. The payer and the merchant lie on a cycle of money moves in the window
 * (x402 payments and plain transfers, of any length, hubs excluded), what came back to the payer from
 * that cycle is at least `ringMinReturnShare` of what it sent into it, and the money came back while it
 * was still paying (plain transfers from the merchant after the last payment, of no more than was paid,
 * are a refund). The graph work is in `cycles.ts`.
 *
 * Rationale: a cycle returns the money that made the volume, so the same dollars can be counted again
 * and again: two merchants paying each other, five merchants paying the next in a circle, a merchant's
 * money routed back to a buyer through private wallets. Hubs (see `hubMinCounterparties`) are not
 * followed: almost every merchant and buyer shares one, so the report's `exchange_flow_note` mentions
 * those paths instead.
 * Known false positives: two agents that genuinely buy each other's services for similar sums; a
 * customer refunded half or more of its spend who goes on buying.
 */
export const ring: Screen = {
  kind: "ring",
  summary: "Money paid to the merchant went round a cycle of wallets back to the payer.",
  pair: "in_ring",
  payment: "true",
};
