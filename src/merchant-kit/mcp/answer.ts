/**
 * A route's HTTP answer as the tool's result, following x402's MCP transport:
 * - a refusal carrying `PAYMENT-REQUIRED` (402: pay; 409 `payment_in_use`, 412, 402 `insufficient_funds`:
 *   the payment sent was refused) is the spec's payment result, `isError` with the `PaymentRequired`, its
 *   `error` saying why, and the route's own refusal after it; so is a settlement that failed once the
 *   route had run (the route's answer is dropped, never the tool's content);
 * - any other refusal (bad input, a limit, an upstream away) is `isError` with the route's error JSON:
 *   nothing was charged, as over HTTP;
 * - an answer is the tool's content (JSON as text and, when an object, as `structuredContent`; text;
 *   images and audio as MCP's own content; other bytes as an embedded resource), and its settlement
 *   (`PAYMENT-RESPONSE`) goes in `_meta["x402/payment-response"]`.
 * A settled payment's receipt is passed on whatever the status (a write that failed after settling answers
 * 500 with it), so a client always learns what it was charged.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import { PAYMENT_RESPONSE_META_KEY, paymentRequiredResult } from "./meta.ts";

/** A JSON object, or undefined for anything else (an array, a value, text that is not JSON). */
function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The code of a refusal in either dialect (`{"error": {"code"}}`), for a `PaymentRequired` without `error`. */
function errorCode(body: Record<string, unknown> | undefined): string | undefined {
  const code = (body?.error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}

function isTextual(type: string): boolean {
  return (
    type === "" ||
    type.startsWith("text/") ||
    /^application\/(?:[\w.+-]+\+)?(?:json|xml|x-ndjson|javascript)\b/.test(type) ||
    type.startsWith("image/svg+xml")
  );
}

/** A successful answer's content, by its media type. */
async function contentOf(
  response: Response,
  resource: string,
): Promise<Pick<CallToolResult, "content" | "structuredContent">> {
  const type = (response.headers.get("content-type") ?? "").toLowerCase();
  if (isTextual(type)) {
    const text = await response.text();
    const object = type.startsWith("application/json") ? jsonObject(text) : undefined;
    return { content: [{ type: "text", text }], ...(object && { structuredContent: object }) };
  }
  const mimeType = response.headers.get("content-type") as string;
  const data = Buffer.from(await response.arrayBuffer()).toString("base64");
  if (type.startsWith("image/")) return { content: [{ type: "image", data, mimeType }] };
  if (type.startsWith("audio/")) return { content: [{ type: "audio", data, mimeType }] };
  return { content: [{ type: "resource", resource: { uri: resource, mimeType, blob: data } }] };
}

/**
 * The tool result of `response`, the answer of a tool's route; `resource` names a file answer (the
 * route's URL). `unpaid` asks the route again without the payment, for what it asks for: the
 * `PaymentRequired` a failed settlement is answered with (x402's HTTP transport says that failure in
 * `PAYMENT-RESPONSE` alone).
 */
export async function toolResult(
  response: Response,
  resource: string,
  unpaid: () => Promise<Response>,
): Promise<CallToolResult> {
  const receipt = response.headers.get("payment-response");
  const settlement = receipt ? decodePaymentResponseHeader(receipt) : undefined;
  const meta = settlement ? { _meta: { [PAYMENT_RESPONSE_META_KEY]: settlement } } : {};
  if (response.status < 400) return { ...(await contentOf(response, resource)), ...meta };
  const text = await response.text();
  const body = jsonObject(text);
  const required = response.headers.get("payment-required");
  if (required) {
    const asked = decodePaymentRequiredHeader(required);
    const why = asked.error ?? errorCode(body);
    // The route's own refusal after it (its code): not an unpaid 402's body, which is the same requirements in
    // x402 v1's form (payments/v1/), its error a string.
    return paymentRequiredResult(why ? { ...asked, error: why } : asked, errorCode(body) ? [text] : []);
  }
  if (settlement && !settlement.success) {
    // Like x402's own MCP server, the failure's receipt is left out: a client must not take it for a payment.
    const again = await unpaid();
    const header = again.headers.get("payment-required");
    await again.body?.cancel();
    if (header) {
      const reason = settlement.errorMessage ?? settlement.errorReason ?? "unknown";
      return paymentRequiredResult({
        ...decodePaymentRequiredHeader(header),
        error: `Payment settlement failed: ${reason}`,
      });
    }
  }
  return {
    isError: true,
    content: [{ type: "text", text: text || `HTTP ${response.status}` }],
    ...(body && { structuredContent: body }),
    ...meta,
  };
}
