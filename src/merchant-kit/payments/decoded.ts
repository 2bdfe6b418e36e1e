/**
 * A `PAYMENT-SIGNATURE` header decoded once for the kit's several readers of one request (the malformed check,
 * the payment id, the ledger's key), not once each: base64 and JSON of a payment are about 0.1 ms a decoding,
 * 4% of a voucher's CPU when done three times (docs/benchmarks-log.md, issue 66). The SDK's middleware decodes its
 * own copy. Kept by the header's text for the few requests in flight; what is given back is shared and never
 * changed by a reader.
 */
import { decodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";

/** Headers remembered: more than a host's requests in flight at once, each a few kilobytes. */
const KEPT = 256;

/** A header that does not decode: its error, thrown again to each reader. */
class Undecodable {
  constructor(readonly error: unknown) {}
}

const recent = new Map<string, PaymentPayload | Undecodable>();

/** `decodePaymentSignatureHeader(header)`, its answer or its error the same for the same text. */
export function decodedPayment(header: string): PaymentPayload {
  let decoded = recent.get(header);
  if (decoded === undefined) {
    try {
      decoded = decodePaymentSignatureHeader(header);
    } catch (error) {
      decoded = new Undecodable(error);
    }
    if (recent.size >= KEPT) recent.delete(recent.keys().next().value as string);
    recent.set(header, decoded);
  }
  if (decoded instanceof Undecodable) throw decoded.error;
  return decoded;
}
