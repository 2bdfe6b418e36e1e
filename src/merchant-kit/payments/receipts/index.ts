export type { HashedRequest } from "./charge.ts";
export { requestHash } from "./charge.ts";
export { RECEIPT_KEY, readReceiptKey, storedReceiptKey } from "./key.ts";
export { declareReceipts, inReceiptRequest, receiptKid, receiptsExtension } from "./receipts.ts";
export type { VerifiedReceipt } from "./verify.ts";
export { ReceiptError, verifyReceipt } from "./verify.ts";
