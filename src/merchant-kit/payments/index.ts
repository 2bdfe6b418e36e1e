/**
 * How a paid call is guarded (docs/platform.md, "The payment ledger"): one run per payment, funds
 * reserved for calls that write or cost upstream, writes committed with their settlement.
 */
export { chainFunds } from "./funds.ts";
export { paidHandler, settleAndRecord } from "./paid-handler.ts";
export { paymentHeader, paymentKeyOf } from "./payment-key.ts";
export {
  type Funds,
  type FundsReader,
  type Outcome,
  type PaymentKey,
  PaymentLedger,
} from "./payment-ledger.ts";
export { PublicUrlResourceServer, paymentRequiredHeaders } from "./resource-server.ts";
export { type StreamEnding, Streamed, type StreamedInit } from "./streamed.ts";
export { openWriteUnit, type WriteUnit } from "./write-unit.ts";
