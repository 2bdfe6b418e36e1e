/**
 * How a buyer asks for its channel's money back: a cooperative refund (x402 spec, "Cooperative refund flow"),
 * as the SDK client's `refundChannel(url, {amount})` sends it: a GET of a route that offers
 * `batch-settlement`, first unpaid (the 402 gives the channel's terms), then with a zero-charge voucher of
 * type `refund` and, for a partial refund, its amount. The SDK's server scheme answers it without running
 * the route (its verify and settle hooks, the escrow's `refundWithSignature` through the facilitator): all
 * the unclaimed balance goes back, or the amount asked, and what was charged is claimed in the same
 * transaction. Any GET route of the host that offers channels takes it; `GET /channels/refund` exists for
 * hosts whose paid routes are POSTs or need input (the inference API), and takes nothing else.
 */
import { decodePaymentSignatureHeader } from "@x402/core/http";
import { isBatchSettlementRefundPayload } from "@x402/evm";
import type { MiddlewareHandler } from "hono";
import { BadInputError, NotFoundError } from "../../common/errors.ts";

/**
 * Whether the way a host is paid now offers channels: its payments' fronts (payments/fronts.ts), given by the
 * host (app.ts) because channels/ imports nothing of the kit around it.
 */
export interface RefundFronts {
  pick(): Promise<{ channels: boolean }>;
}

/**
 * In front of the refund route's payment middleware: 404 while the host offers no channels, and a 400 for a
 * payment that is not a refund (a voucher or a deposit would pay for nothing here). `paymentHeader` is where
 * the host's payments read a request's payment (payments/ledger/payment-key.ts), given for the same reason.
 */
export function refundOnly(
  fronts: RefundFronts,
  paymentHeader: (request: Request) => string | undefined,
): MiddlewareHandler {
  return async function refundOnly(c, next) {
    const front = await fronts.pick().catch(() => undefined);
    // The facilitator cannot be asked: the payment middleware answers as it does on every paid route.
    if (front && !front.channels)
      throw new NotFoundError(`${c.req.path}: this host offers no payment channels`);
    const header = paymentHeader(c.req.raw);
    if (header !== undefined && !isRefund(header)) {
      throw new BadInputError(
        "this route takes a cooperative refund of a payment channel only (a batch-settlement payload of type refund): pay for calls on the calls' own routes",
        "refund_only",
      );
    }
    return next();
  };
}

/** Reached only if the payment middleware let a non-refund payment through, which `refundOnly` prevents. */
export const refundHandled: MiddlewareHandler = async () => {
  throw new Error("a refund route's payment reached its handler");
};

function isRefund(header: string): boolean {
  try {
    const payload = decodePaymentSignatureHeader(header);
    return payload.accepted?.scheme === "batch-settlement" && isBatchSettlementRefundPayload(payload.payload);
  } catch {
    // Not a payment at all: the kit's malformed-payment check answers it.
    return true;
  }
}
