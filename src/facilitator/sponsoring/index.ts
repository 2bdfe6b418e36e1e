/**
 * Gas sponsoring: x402's `eip2612GasSponsoring` and `erc20ApprovalGasSponsoring`, which let a wallet holding
 * only the token pay through Permit2 (exact's Permit2 transfer, upto), this facilitator giving Permit2 the
 * allowance in the payment's stead, at its gas and only for that payment (docs/facilitator.md, "Gas
 * sponsoring").
 */
export { sponsoringFields } from "./extension.ts";
export { createSponsoring, type Sponsoring } from "./sponsor.ts";
