/**
 * x402 v1 beside v2 on a paid route (docs/platform.md, "x402 v1 clients"). `@x402/core`'s server speaks v2 only:
 * its 402 says what to pay in the `PAYMENT-REQUIRED` header over a body of `{}`, and it reads a payment from
 * `PAYMENT-SIGNATURE` alone. v1 clients (`x402-fetch`, `x402-axios`, still the most installed) read the 402's JSON
 * body and pay with `X-PAYMENT`, and found nothing to read. This front, before the payment's checks:
 *
 * - makes a v1 payment the v2 one it is (payment.ts), in the request's `PAYMENT-SIGNATURE`, so that it is
 *   verified, settled, recorded and charged once as any v2 payment is, and adds to its answer the receipt v1
 *   clients read (`X-PAYMENT-RESPONSE`);
 * - has the SDK's 402s of an unpaid request, whoever asks (a v2 client reads the header first, which is
 *   unchanged), and of a v1 payment carry the v1 body (required.ts; `v1Bodies`); a v2 payment's answers stay the
 *   SDK's, and so do the kit's own refusals (their `{"error": {"code", "message"}}`) and a browser's paywall page.
 */
import { encodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { x402HTTPResourceServer } from "@x402/core/server";
import type { PaymentRequired } from "@x402/core/types";
import type { Context, MiddlewareHandler } from "hono";
import { AppError } from "../../../common/errors.ts";
import { scopeSlot } from "../../../common/request-scope.ts";
import type { AnyEndpoint } from "../../endpoint.ts";
import type { MerchantEnv } from "../../merchant-env.ts";
import { type AnswerHook, unpaidAnswer } from "../resource-server.ts";
import { v1NetworkOf } from "./networks.ts";
import { asV2Payment, describeV1Payment, v1PaymentOf } from "./payment.ts";
import { type V1PaymentRequired, v1OutputSchema, v1PaymentRequired } from "./required.ts";

/**
 * What the front needs of the host: the payment front of this moment (payments/fronts.ts), whose route's unpaid
 * 402 says what the route asks for now.
 */
export interface V1Host {
  pick(): Promise<{ httpServer: x402HTTPResourceServer }>;
}

/** What the 402 of a route whose answer is a v1 client's (or anyone's unpaid) says to v1. */
interface V1Route {
  outputSchema(): Record<string, unknown>;
  /** Why a v1 payment is never taken here. */
  closed?: string;
  /** Its v1 bodies by their `PAYMENT-REQUIRED`: the same request asked again is answered the same. */
  bodies: Map<string, V1PaymentRequired>;
}

/** The route of the request under way, when its 402 is to speak v1 (`v1Bodies`). */
const inV1Route = scopeSlot<V1Route>("v1 route");

/** v1 bodies kept per route: more than the URLs a client asks again and again, each a few kilobytes. */
const KEPT = 64;

/** The front of one endpoint's route. */
export function v1Front(endpoint: AnyEndpoint, host: V1Host): MiddlewareHandler<MerchantEnv> {
  let schema: Record<string, unknown> | undefined;
  const route: V1Route = {
    // Made when first asked for: it converts the catalogue's schemas.
    outputSchema: () => {
      schema ??= v1OutputSchema(endpoint);
      return schema;
    },
    // v1 has no payment id (the payment-identifier extension is v2's): a route that requires one cannot take v1.
    ...(endpoint.paymentId === "required" && {
      closed:
        "it requires a payment id (x402's payment-identifier extension), which v1 payments cannot carry",
    }),
    bodies: new Map(),
  };
  return async function v1Front(c, next) {
    // A v2 payment is answered as v2: its client reads the headers.
    if (c.req.header("payment-signature") !== undefined) return next();
    const v1 = c.req.header("x-payment");
    const required = v1 !== undefined ? await asV2(c, v1, host) : undefined;
    await inV1Route.run(route, next);
    if (v1 === undefined) return;
    await settleRefusalInV1(c, route, required);
    addV1Receipt(c);
  };
}

/**
 * A v1 payment refused at its settlement (the payer's funds gone meanwhile, the facilitator's refusal) in the v1
 * body, as x402 v1 answers a failed settlement: the SDK answers it after the handler, past `v1Bodies`, with `{}`
 * and the failed `PAYMENT-RESPONSE`, and a v1 client reads the body (`x402-fetch` fails on `{}` reading
 * `accepts`). Its `error` is the settlement's reason; its `accepts`, what the route asked the payment for.
 */
async function settleRefusalInV1(
  c: Context<MerchantEnv>,
  route: V1Route,
  required: PaymentRequired | undefined,
): Promise<void> {
  if (c.res.status !== 402 || !c.res.headers.get("content-type")?.startsWith("application/json")) return;
  const header = c.res.headers.get("PAYMENT-REQUIRED") ?? settleRefusal(c, required);
  if (!header) return;
  const text = await c.res.clone().text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return;
  }
  if (!isEmpty(body)) return;
  const headers = new Headers(c.res.headers);
  headers.delete("content-length");
  c.res = new Response(JSON.stringify(v1BodyOf(route, header)), { status: 402, headers });
}

/**
 * The SDK's 402 (`{}` under `PAYMENT-REQUIRED`) with the v1 body instead, on the route of a request its front let
 * through as a v1 client's or unpaid; anything else as it is: a browser's page, a v2 payment's refusal, the kit's
 * own refusals (thrown, never the SDK's answer), a HEAD's 402 (asked before the front). Set where the SDK decides
 * the body (payments/resource-server.ts), so that the answer is written once, as the SDK writes it.
 */
export const v1Bodies: AnswerHook = (_request, result) => {
  const route = inV1Route.get();
  if (!route || result.type !== "payment-error") return result;
  const { response } = result;
  const header = response.headers["PAYMENT-REQUIRED"];
  if (response.status !== 402 || response.isHtml || typeof header !== "string" || !isEmpty(response.body))
    return result;
  return { ...result, response: { ...response, body: v1BodyOf(route, header) } };
};

function isEmpty(body: unknown): boolean {
  return body === undefined || (typeof body === "object" && body !== null && Object.keys(body).length === 0);
}

/** The route's v1 body for its v2 `PAYMENT-REQUIRED` header, made once for the same header. */
function v1BodyOf(route: V1Route, header: string): V1PaymentRequired {
  let body = route.bodies.get(header);
  if (!body) {
    const required = JSON.parse(Buffer.from(header, "base64").toString("utf8")) as PaymentRequired;
    body = v1PaymentRequired(required, route.outputSchema(), route.closed);
    if (route.bodies.size >= KEPT) route.bodies.delete(route.bodies.keys().next().value as string);
    route.bodies.set(header, body);
  }
  return body;
}

/**
 * Puts the v2 payment that `header` (a v1 payment) is in the request's `PAYMENT-SIGNATURE`, in place of its
 * `X-PAYMENT`: every later reader of the request (the kit's ledger and payment ids, the SDK's middleware) sees a
 * v2 payment. The request's headers are changed where they are, as the node server and undici let them be: a
 * new request could not be made, its body having been read by the input's check.
 */
async function asV2(
  c: Context<MerchantEnv>,
  header: string,
  host: V1Host,
): Promise<PaymentRequired | undefined> {
  const payment = v1PaymentOf(header);
  // The facilitators' support not read: the request goes on as it came, and the payment middleware says why.
  const front = await host.pick().catch(() => undefined);
  if (!front) return undefined;
  // What the route asks for now, as its unpaid 402 says it; nothing (a signed-in period's call): as it came.
  const required = await unpaidAnswer(front.httpServer, c);
  if (!required) return undefined;
  const paid = asV2Payment(payment, required);
  if (!paid) {
    const error = "no_matching_requirements";
    throw new AppError(
      402,
      error,
      `the X-PAYMENT pays ${describeV1Payment(payment)}, which is none of the ways this route takes from x402 v1 clients (exact by EIP-3009 or on Solana, its price, its wallet, its networks): ask without it to get them. Nothing was charged`,
      { headers: { "PAYMENT-REQUIRED": encodePaymentRequiredHeader({ ...required, error }) } },
    );
  }
  c.req.raw.headers.set("PAYMENT-SIGNATURE", encodePaymentSignatureHeader(paid));
  c.req.raw.headers.delete("X-PAYMENT");
  return required;
}

/** The route's requirements as a `PAYMENT-REQUIRED` whose error is the failed settlement's reason. */
function settleRefusal(c: Context<MerchantEnv>, required: PaymentRequired | undefined): string | undefined {
  const receipt = c.res.headers.get("PAYMENT-RESPONSE");
  if (!required || !receipt) return undefined;
  const settled = JSON.parse(Buffer.from(receipt, "base64").toString("utf8")) as { errorReason?: string };
  return encodePaymentRequiredHeader({ ...required, error: settled.errorReason ?? "settlement_failed" });
}

/** `X-PAYMENT-RESPONSE`, the settlement as v1 clients decode it (x402's `decodeXPaymentResponse`), beside v2's. */
function addV1Receipt(c: Context<MerchantEnv>): void {
  const receipt = c.res.headers.get("PAYMENT-RESPONSE");
  if (!receipt) return;
  const settled = JSON.parse(Buffer.from(receipt, "base64").toString("utf8")) as {
    success: boolean;
    errorReason?: string;
    payer?: string;
    transaction: string;
    network: string;
  };
  const v1 = {
    success: settled.success,
    ...(settled.errorReason !== undefined && { errorReason: settled.errorReason }),
    transaction: settled.transaction,
    network: v1NetworkOf(settled.network) ?? settled.network,
    ...(settled.payer !== undefined && { payer: settled.payer }),
  };
  c.header("X-PAYMENT-RESPONSE", Buffer.from(JSON.stringify(v1), "utf8").toString("base64"));
}
