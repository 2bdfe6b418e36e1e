export { networkFunds } from "./funds.ts";
export { paymentHeader, paymentOf } from "./payment-key.ts";
export type { FundsReader, Outcome, PaymentKey } from "./payment-ledger.ts";
export { PaymentLedger, UNPAID_LIMIT, UNPAID_WINDOW_SECONDS } from "./payment-ledger.ts";
export { foreignSource, settlementOf } from "./svm-funds.ts";
export { openWriteUnit } from "./write-unit.ts";
