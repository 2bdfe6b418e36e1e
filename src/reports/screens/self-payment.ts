import type { Screen } from "./screen.ts";

/**
 * self_payment: the payer is the merchant's own wallet.
 *
 * Rationale: money that leaves and returns to the same wallet is not revenue, whatever it buys.
 * Known false positives: none as revenue; a merchant testing its own endpoint trips it, which is the point.
 */
export const selfPayment: Screen = {
  kind: "self_payment",
  summary: "The payer is the merchant's own wallet.",
  pair: "payer = pay_to",
  payment: "true",
};
