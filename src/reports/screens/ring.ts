import type { Screen } from "./screen.ts";

/**
 * ring: funds go round. The payer and the merchant lie on a cycle of money moves in the window (x402
 * payments and plain transfers, of any length, hubs excluded), and the money came back while the payer
 * was still paying (plain transfers from the merchant after the last payment, of no more than was paid,
 * are a refund). The graph work is in `cycles.ts`.
 *
 * In proportion, not all or nothing: of what the payer sent into its cycle, the share that came back to
 * it is money counted again; that share of the pair's payments is flagged, the earliest first (by day,
 * then amount), less what merchant_funded already took. A customer whom a merchant's unrelated spending
 * happens to reach again loses the little that came back, not its whole spend; a ring that returns
 * everything loses everything.
 *
 * Rationale: a cycle returns the money that made the volume, so the same dollars can be counted again
 * and again: two merchants paying each other, five merchants paying the next in a circle, a buyer's
 * money sent back to it through private wallets. Hubs are not followed: almost every merchant and buyer
 * shares one, so the report's `exchange_flow_note` mentions those paths instead.
 * Known false positives: two agents that genuinely buy each other's services; a customer refunded while
 * it goes on buying (the refunded share of its payments).
 */
export const ring: Screen = {
  kind: "ring",
  summary: "Money paid to the merchant went round a cycle of wallets back to the payer.",
  pair: "in_ring",
  payment: "ring_part",
};
