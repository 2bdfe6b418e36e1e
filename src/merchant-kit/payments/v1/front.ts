/**
 * x402 v1 beside v2 on a paid route (docs/platform.md, "x402 v1 clients"). `@x402/core`'s server speaks v2 only:
 * its 402 says what to pay in the `PAYMENT-REQUIRED` header over a body of `{}`, and it reads a payment from
 * `PAYMENT-SIGNATURE` alone. v1 clients (`x402-fetch`, `x402-axios`, still the most installed) read the 402's JSON
 * body and pay with `X-PAYMENT`, and found nothing to read. This front, before the payment's checks:
 *
 * - makes a v1 payment the v2 one it is (payment.ts), in the request's `PAYMENT-SIGNATURE`, so that it is
 *   verified, settled, recorded and charged once as any v2 payment is, and adds to its answer the receipt v1
 *   clients read (`X-PAYMENT-RESPONSE`);
 * - writes the v1 body (required.ts) into the SDK's 402s of an unpaid request, whoever asks (a v2 client reads
 *   the header first, which is unchanged), and of a v1 payment; a v2 payment's answers stay the SDK's, and so do
 *   the kit's own refusals (their `{"error": {"code", "message"}}`) and a browser's paywall page.
 */
import {
  decodePaymentRequiredHeader,
  encodePaymentRequiredHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import type { x402HTTPResourceServer } from "@x402/core/server";
import type { PaymentRequired } from "@x402/core/types";
import type { Context, MiddlewareHandler } from "hono";
import { AppError } from "../../../common/errors.ts";
import type { AnyEndpoint } from "../../endpoint.ts";
import type { MerchantEnv } from "../../merchant-env.ts";
import { unpaidAnswer } from "../resource-server.ts";
import { v1NetworkOf } from "./networks.ts";
import { asV2Payment, v1PaymentOf } from "./payment.ts";
import { v1OutputSchema, v1PaymentRequired } from "./required.ts";

/**
 * What the front needs of the host: the payment front of this moment (payments/fronts.ts), whose route's unpaid
 * 402 says what the route asks for now.
 */
export interface V1Host {
  pick(): Promise<{ httpServer: x402HTTPResourceServer }>;
}

/** The front of one endpoint's route. */
export function v1Front(endpoint: AnyEndpoint, host: V1Host): MiddlewareHandler<MerchantEnv> {
  let schema: Record<string, unknown> | undefined;
  // Made when first asked for: most hosts answer few v1 clients, and it converts the catalogue's schemas.
  const outputSchema = () => {
    schema ??= v1OutputSchema(endpoint);
    return schema;
  };
  // v1 has no payment id (the payment-identifier extension is v2's): a route that requires one cannot take v1.
  const closed =
    endpoint.paymentId === "required"
      ? "it requires a payment id (x402's payment-identifier extension), which v1 payments cannot carry"
      : undefined;
  return async function v1Front(c, next) {
    const v2 = c.req.header("payment-signature");
    const v1 = v2 === undefined ? c.req.header("x-payment") : undefined;
    if (v1 !== undefined) await asV2(c, v1, host);
    await next();
    // A v2 payment is answered as v2 (its client reads the headers).
    if (v2 !== undefined) return;
    if (v1 !== undefined) addV1Receipt(c);
    await withV1Body(c, () => outputSchema(), closed);
  };
}

/**
 * Puts the v2 payment that `header` (a v1 payment) is in the request's `PAYMENT-SIGNATURE`, in place of its
 * `X-PAYMENT`: every later reader of the request (the kit's ledger and payment ids, the SDK's middleware) sees a
 * v2 payment. The request's headers are changed where they are, as the node server and undici let them be: a
 * new request could not be made, its body having been read by the input's check.
 */
async function asV2(c: Context<MerchantEnv>, header: string, host: V1Host): Promise<void> {
  const payment = v1PaymentOf(header);
  // What the route asks for now, as its unpaid 402 says it. Nothing to pay here now (a signed-in period's call),
  // or the facilitators not read: the request goes on as it came, and the payment middleware says so.
  const required: PaymentRequired | undefined = await host
    .pick()
    .then(({ httpServer }) => unpaidAnswer(httpServer, c))
    .catch(() => undefined);
  if (!required) return;
  const paid = asV2Payment(payment, required);
  if (!paid) {
    const error = "no_matching_requirements";
    throw new AppError(
      402,
      error,
      `the X-PAYMENT pays ${payment.payload.authorization.value} by ${payment.scheme} on ${payment.network} to ${payment.payload.authorization.to}, which is none of the ways this route takes from x402 v1 clients (exact by EIP-3009, its price, its wallet, its networks): ask without it to get them. Nothing was charged`,
      { headers: { "PAYMENT-REQUIRED": encodePaymentRequiredHeader({ ...required, error }) } },
    );
  }
  c.req.raw.headers.set("PAYMENT-SIGNATURE", encodePaymentSignatureHeader(paid));
  c.req.raw.headers.delete("X-PAYMENT");
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

/**
 * The SDK's 402 (a JSON `{}` under `PAYMENT-REQUIRED`) with the v1 body in place of `{}`. Anything else is left
 * as it is: a browser's page, the kit's refusals, a HEAD's answer (no body).
 */
async function withV1Body(
  c: Context<MerchantEnv>,
  outputSchema: () => Record<string, unknown>,
  closed: string | undefined,
): Promise<void> {
  const res = c.res;
  const header = res.headers.get("PAYMENT-REQUIRED");
  if (res.status !== 402 || !header || c.req.method === "HEAD") return;
  if (!(res.headers.get("content-type") ?? "").startsWith("application/json")) return;
  if ((await res.clone().text()) !== "{}") return;
  let required: PaymentRequired;
  try {
    required = decodePaymentRequiredHeader(header);
  } catch {
    return;
  }
  const body = JSON.stringify(v1PaymentRequired(required, outputSchema(), closed));
  const headers = new Headers(res.headers);
  headers.delete("content-length");
  // Unset first: Hono would copy the old answer's headers onto the new one, which has them already.
  c.res = undefined;
  c.res = new Response(body, { status: res.status, headers });
}
