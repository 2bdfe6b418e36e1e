import type { MiddlewareHandler } from "hono";
import { BadInputError } from "../../common/errors.ts";
import { type LogLimit, type LogWriter, limitedLog } from "../../common/log.ts";
import type { MerchantEnv } from "../merchant-env.ts";
import { decodedPayment } from "./decoded.ts";

/**
 * Refusals of malformed headers logged per process window: enough to see that a client is broken, never
 * a log that grows with an attacker's request rate.
 */
export const MALFORMED_LOG_LIMIT: LogLimit = { lines: 10, perMs: 60_000 };

/** One budget for every host of the process (the demo serves twenty shops). */
const warnOfMalformed = limitedLog(MALFORMED_LOG_LIMIT);

/** Why a `PAYMENT-SIGNATURE` value cannot be a payment, or undefined when it decodes to a JSON object. */
export function malformedPayment(header: string): string | undefined {
  let payload: unknown;
  try {
    payload = decodedPayment(header);
  } catch (error) {
    // The SDK's own decoder, so "malformed" here is exactly what it would fail on.
    return error instanceof SyntaxError ? "its base64 does not decode to JSON" : "it is not base64";
  }
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) {
    return "it decodes to JSON that is not an object";
  }
  return undefined;
}

/**
 * Answers a request whose `PAYMENT-SIGNATURE` header cannot be a payment with 400
 * `invalid_payment_signature` (x402's HTTP transport maps a malformed payload to 400), before
 * `@x402/core` reads it: the SDK would print the decoding error's whole stack with `console.warn` (11
 * lines, about 1 KB, per request) and then answer as if nothing had been sent (402, body `{}`). The log
 * gets one line per refusal, at most `MALFORMED_LOG_LIMIT.lines` per window. A payload that decodes to an
 * object goes on to the SDK, which checks it against the route's requirements.
 *
 * The answer has no `PAYMENT-REQUIRED`: building it needs the facilitator's supported kinds, which the
 * payment middleware may still be fetching on a host's first request; an unpaid request gets them.
 */
export function refuseMalformedPayment(warn: LogWriter = warnOfMalformed): MiddlewareHandler<MerchantEnv> {
  return async function refuseMalformedPayment(c, next) {
    const header = c.req.header("payment-signature");
    const reason = header ? malformedPayment(header) : undefined;
    if (!reason) return next();
    warn("warn", "refused a malformed PAYMENT-SIGNATURE header", {
      path: c.req.path,
      reason,
      bytes: header?.length,
    });
    throw new BadInputError(
      `the PAYMENT-SIGNATURE header is not an x402 payment: ${reason} (expected a base64-encoded JSON PaymentPayload); ask without it to get the payment requirements`,
      "invalid_payment_signature",
    );
  };
}
