import { decodePaymentRequiredHeader, encodePaymentRequiredHeader } from "@x402/core/http";
import type { RouteConfig } from "@x402/core/server";
import {
  type HTTPAdapter,
  type HTTPProcessResult,
  type HTTPRequestContext,
  type PaywallConfig,
  x402HTTPResourceServer,
  type x402ResourceServer,
} from "@x402/core/server";
import { HonoAdapter } from "@x402/hono";
import type { Context } from "hono";

/**
 * `@x402/core`'s HTTP resource server, answering with the resource as buyers reach it: the merchant's
 * public URL, the request's path and its query string (`https://api.example/api/calc?expr=2%2B2`), not
 * the address this process listens on. A buyer comparing the 402's `resource.url` with what it asked
 * for sees the same URL, less the `secretParams` (a caller's session cookies): the resource travels to
 * the facilitator and into discovery catalogues, which must never learn them.
 */
export class PublicUrlResourceServer extends x402HTTPResourceServer {
  constructor(
    server: x402ResourceServer,
    routes: Record<string, RouteConfig>,
    private readonly publicUrl: string,
    private readonly secretParams: ReadonlySet<string> = new Set(),
  ) {
    super(server, routes);
  }

  override processHTTPRequest(
    context: HTTPRequestContext,
    paywallConfig?: PaywallConfig,
  ): Promise<HTTPProcessResult> {
    const { adapter } = context;
    const asked = new URL(adapter.getUrl());
    // Rewritten only when it holds a secret: rewriting re-encodes the rest (a space's %20 becomes +).
    for (const name of this.secretParams) if (asked.searchParams.has(name)) asked.searchParams.delete(name);
    const search = asked.search;
    const url = `${this.publicUrl}${context.path}${search}`;
    const publicAdapter: HTTPAdapter = Object.assign(Object.create(adapter) as HTTPAdapter, {
      getUrl: () => url,
    });
    return super.processHTTPRequest({ ...context, adapter: publicAdapter }, paywallConfig);
  }
}

/** Where a buyer's payment travels: v2's header and v1's. */
const PAYMENT_HEADERS = new Set(["payment-signature", "x-payment"]);

/**
 * The `PAYMENT-REQUIRED` header a request's route answers unpaid, with `error` set: for refusals after
 * the payment was verified (409 `payment_in_use`, 402 `insufficient_funds`), so a client sees what to
 * pay with a fresh signature.
 */
export async function paymentRequiredHeaders(
  server: x402HTTPResourceServer,
  c: Context,
  error: string,
): Promise<Record<string, string>> {
  // Asked as the unpaid request: without its payment, the server answers with what to pay.
  const adapter = new HonoAdapter(c);
  const unpaid: HTTPAdapter = Object.assign(Object.create(adapter) as HTTPAdapter, {
    getHeader: (name: string) =>
      PAYMENT_HEADERS.has(name.toLowerCase()) ? undefined : adapter.getHeader(name),
  });
  const result = await server.processHTTPRequest({ adapter: unpaid, path: c.req.path, method: c.req.method });
  if (result.type !== "payment-error") return {};
  const header = result.response.headers["PAYMENT-REQUIRED"];
  if (!header) return {};
  return {
    "PAYMENT-REQUIRED": encodePaymentRequiredHeader({ ...decodePaymentRequiredHeader(header), error }),
  };
}
