/**
 * x402 over MCP for merchant hosts: every host answers MCP at `/mcp` with its catalogue's tools, a paid
 * call dispatched to its own route so that the payment meets the same ledger, guards and limits as over
 * HTTP. See README.md beside this file and docs/mcp.md.
 */
export { toolResult } from "./answer.ts";
export {
  PAYMENT_META_KEY,
  PAYMENT_RESPONSE_META_KEY,
  paymentRequiredOf,
  paymentRequiredResult,
  settlementOf,
} from "./meta.ts";
export { toolRequest } from "./request.ts";
export { type Dispatch, MerchantMcp } from "./server.ts";
export { type MerchantTool, merchantTools, toolNameOf } from "./tools.ts";
