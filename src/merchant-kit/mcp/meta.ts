/**
 * x402's MCP transport (`specs/transports-v2/mcp.md` in the x402 repository), the parts both sides read:
 * the `_meta` keys a payment and its settlement travel in, and the tool result that asks for a payment.
 * A paid tool called without a payment answers `isError: true` with the `PaymentRequired` as
 * `structuredContent` and, for clients that read text only, as the JSON of `content[0].text`; the client
 * pays by calling again with a `PaymentPayload` in `_meta["x402/payment"]`, and the result carries the
 * settlement in `_meta["x402/payment-response"]`.
 */

import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { PaymentRequired, SettleResponse } from "@x402/core/types";

/** Where a call's `PaymentPayload` travels: the request's `params._meta`. */
export const PAYMENT_META_KEY = "x402/payment";

/** Where a result's `SettlementResponse` travels: the result's `_meta`. */
export const PAYMENT_RESPONSE_META_KEY = "x402/payment-response";

/**
 * The result that asks for a payment, or refuses one (the reason in `error`): `structuredContent` and
 * `content[0].text` carry the same `PaymentRequired`. `also` adds text after it (the refusal's own JSON,
 * e.g. why a payment is in use), which the spec's clients, reading `content[0]`, never mistake for it.
 */
export function paymentRequiredResult(
  required: PaymentRequired,
  also: readonly string[] = [],
): CallToolResult {
  return {
    isError: true,
    structuredContent: required as unknown as Record<string, unknown>,
    content: [
      { type: "text", text: JSON.stringify(required) },
      ...also.map((text) => ({ type: "text" as const, text })),
    ],
  };
}

/** Whether a value is a `PaymentRequired` as the spec's clients recognise one: `x402Version` and `accepts`. */
function isPaymentRequired(value: unknown): value is PaymentRequired {
  return (
    typeof value === "object" &&
    value !== null &&
    "x402Version" in value &&
    Array.isArray((value as { accepts?: unknown }).accepts)
  );
}

/**
 * The `PaymentRequired` a tool result asks for, read as the spec tells clients to: an error result's
 * `structuredContent`, else the JSON of its `content[0].text`; undefined for any other result.
 */
export function paymentRequiredOf(result: Pick<CallToolResult, "isError" | "structuredContent" | "content">) {
  if (!result.isError) return undefined;
  if (isPaymentRequired(result.structuredContent)) return result.structuredContent;
  const first = result.content?.[0];
  if (first?.type !== "text") return undefined;
  try {
    const parsed: unknown = JSON.parse(first.text);
    return isPaymentRequired(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The settlement a tool result carries in `_meta["x402/payment-response"]`, if any. */
export function settlementOf(result: Pick<CallToolResult, "_meta">): SettleResponse | undefined {
  const response = result._meta?.[PAYMENT_RESPONSE_META_KEY];
  return typeof response === "object" && response !== null && "success" in response
    ? (response as SettleResponse)
    : undefined;
}
