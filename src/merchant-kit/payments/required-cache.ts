/**
 * A route's payment-required answer, made once (issue 66 item 3; docs/platform.md, "The 402"). The SDK builds
 * a route's 402 whole for every request, paid ones too: each option's requirements from the facilitators'
 * `/supported`, the Bazaar declaration enriched with the method, every extension's declaration, and a
 * header that is the JSON of all of it in base64, encoded a byte at a time (`@x402/core`'s
 * `safeBase64Encode`). Per route, and per resource server (one per generation of the facilitators' support:
 * payments/fronts.ts), all of it is the same but for:
 *
 * - the resource URL, the requested one on the merchant's public URL, query included;
 * - what an extension makes per 402 (`enrichPaymentRequiredResponse`): the signed offers (kept for reuse a
 *   while: receipts.ts) and the sign-in challenge, whose nonce and times must be fresh in every 402 (siwx.ts);
 * - on a route with path parameters, the Bazaar declaration, which names their values.
 *
 * So the rest is built once, when the route is first asked for on a resource server that has read its
 * facilitators' support, and kept as JSON text; each 402 is that text around its URL and its fresh parts, which
 * the SDK's own hooks still make. The answer is the SDK's byte for byte, those parts apart
 * (test/merchant-kit/payments/required-cache.test.ts compares every route of every merchant). A browser's
 * paywall page, a route with a request hook, and a request that carries a payment are the SDK's to answer.
 */
import type {
  HTTPProcessResult,
  HTTPRequestContext,
  RouteConfig,
  x402HTTPResourceServer,
  x402ResourceServer,
} from "@x402/core/server";
import type { PaymentRequired, PaymentRequirements } from "@x402/core/types";

/** The `error` of a 402 asked without a payment (the SDK's words). */
const UNPAID = "Payment required";

/** What the SDK's HTTP server keeps private and the cache asks it: which route a request is, its hooks. */
export interface HttpInternals {
  getRouteConfig?(
    path: string,
    method: string,
    decodedPath?: string,
  ): { config: RouteConfig; pattern: string } | undefined;
  getProtectedRequestHooks?(config: RouteConfig): readonly unknown[];
  normalizePaymentOptions?(
    config: RouteConfig,
  ): Parameters<x402ResourceServer["buildPaymentRequirementsFromOptions"]>[0];
}

/** One extension of a route's 402: its JSON when the same in every 402, else made per request. */
type Piece = { key: string; json: string } | { key: string; json?: undefined };

/** What a route's 402 is made of, once its facilitators' support is known. */
interface RouteAnswer {
  config: RouteConfig;
  requirements: PaymentRequirements[];
  /** The resource's fields after its URL, and that JSON's tail: `,"description":...}`. */
  resource: Omit<PaymentRequired["resource"], "url">;
  resourceTail: string;
  accepts: string;
  /** The declarations as enriched for every request, where they are the same for each (no path parameter). */
  declared?: Record<string, unknown>;
  /** Whether the 402 has extensions (the SDK leaves the field out when the route declares none). */
  hasExtensions: boolean;
  pieces: readonly Piece[];
}

/**
 * A route's path names values (`:id`, `[id]`, `*`): the Bazaar's declaration is enriched with them, per
 * request (`@x402/extensions/bazaar`'s `enrichDeclaration`).
 */
export const PATH_DEPENDENT = /[:[*]/;

/** The 402s of one HTTP resource server's routes, each made once. */
export class UnpaidAnswers {
  private readonly routes = new Map<RouteConfig, Promise<RouteAnswer>>();

  constructor(private readonly http: x402HTTPResourceServer) {}

  /**
   * The 402 of `context` (its URL already the public one), as the SDK's `processHTTPRequest` answers it, with
   * `error`; undefined where the SDK must answer it itself.
   */
  async answer(context: HTTPRequestContext, error = UNPAID): Promise<HTTPProcessResult | undefined> {
    const found = await this.unpaid(context);
    if (!found) return undefined;
    const { route, request, url } = found;
    const header = Buffer.from(await this.json(route, request, url, error), "utf8").toString("base64");
    return {
      type: "payment-error",
      response: {
        // As the SDK answers (`createHTTPResponse`): 412 asks for a Permit2 allowance.
        status: error === "permit2_allowance_required" ? 412 : 402,
        headers: {
          "Content-Type": "application/json",
          "PAYMENT-REQUIRED": header,
          "Cache-Control": "no-store",
        },
        body: {},
      },
    };
  }

  /** The route's made parts and the request as the SDK's hooks see it; undefined where the SDK answers. */
  private async unpaid(context: HTTPRequestContext) {
    const { adapter } = context;
    // The SDK reads this header alone for a payment (`extractPayment`), and answers a browser with a page.
    if (adapter.getHeader("payment-signature") || adapter.getHeader("PAYMENT-SIGNATURE")) return undefined;
    if (adapter.getAcceptHeader().includes("text/html") && adapter.getUserAgent().includes("Mozilla"))
      return undefined;
    const internals = this.http as unknown as HttpInternals;
    if (
      !internals.getRouteConfig ||
      !internals.getProtectedRequestHooks ||
      !internals.normalizePaymentOptions
    )
      return undefined;
    const method = context.method || adapter.getMethod();
    const match = internals.getRouteConfig(context.path, method, context.decodedPath);
    if (!match) return undefined;
    const { config, pattern } = match;
    if (
      config.resource !== undefined ||
      config.unpaidResponseBody !== undefined ||
      internals.getProtectedRequestHooks(config).length > 0
    )
      return undefined;
    const request = { ...context, method, routePattern: pattern };
    let made = this.routes.get(config);
    if (!made) {
      made = this.make(config, request, internals);
      this.routes.set(config, made);
      // Not kept when it failed (the facilitators' support not read): the SDK says why, and the next asks again.
      made.catch(() => this.routes.delete(config));
    }
    const route = await made.catch(() => undefined);
    return route && { route, request, url: adapter.getUrl() };
  }

  private async make(
    config: RouteConfig,
    request: HTTPRequestContext & { routePattern: string },
    internals: HttpInternals,
  ): Promise<RouteAnswer> {
    const server = this.http.server;
    const options = (internals.normalizePaymentOptions as Required<HttpInternals>["normalizePaymentOptions"])(
      config,
    );
    if (options.some((o) => typeof o.price === "function" || typeof o.payTo === "function"))
      throw new Error("a route whose price or wallet is asked per request is the SDK's to answer");
    const requirements = await server.buildPaymentRequirementsFromOptions(options, request);
    const resource = {
      description: config.description || "",
      mimeType: config.mimeType || "",
      ...(config.serviceName !== undefined && { serviceName: config.serviceName }),
      ...(config.tags !== undefined && { tags: config.tags }),
      ...(config.iconUrl !== undefined && { iconUrl: config.iconUrl }),
    };
    const pathDependent = PATH_DEPENDENT.test(request.routePattern);
    const declared = config.extensions && server.enrichExtensions(config.extensions, request);
    const extensions = new Map(server.getExtensions().map((e) => [e.key, e]));
    const pieces = Object.entries(declared ?? {}).map(([key, value]): Piece => {
      const extension = extensions.get(key);
      const fresh =
        extension?.enrichPaymentRequiredResponse !== undefined ||
        (pathDependent && extension?.enrichDeclaration !== undefined);
      return fresh ? { key } : { key, json: JSON.stringify(value) };
    });
    return {
      config,
      requirements,
      resource,
      resourceTail: `,${JSON.stringify(resource).slice(1)}`,
      // The SDK's 402 lists copies of the requirements, the same JSON.
      accepts: JSON.stringify(requirements),
      declared: pathDependent ? undefined : declared,
      hasExtensions: declared !== undefined && Object.keys(declared).length > 0,
      pieces,
    };
  }

  /**
   * The 402's JSON, as the SDK's `createPaymentRequiredResponse` makes it and `JSON.stringify` writes it: the
   * fresh extensions made by the SDK itself, in the declared order, beside the kept text of the others.
   */
  private async json(
    route: RouteAnswer,
    request: HTTPRequestContext & { routePattern: string },
    url: string,
    error: string,
  ): Promise<string> {
    const resource = { url, ...route.resource };
    let fresh: Record<string, unknown> = {};
    if (route.pieces.some((p) => p.json === undefined)) {
      const declared =
        route.declared ?? this.http.server.enrichExtensions(route.config.extensions ?? {}, request);
      const asked = Object.fromEntries(
        route.pieces.flatMap((p) => (p.json === undefined ? [[p.key, declared[p.key]]] : [])),
      );
      const made = await this.http.server.createPaymentRequiredResponse(
        route.requirements,
        resource,
        error,
        asked,
        { request },
      );
      fresh = made.extensions ?? {};
    }
    // A value JSON cannot write (undefined) is left out, as `JSON.stringify` leaves it out of the SDK's.
    const extensions = route.pieces.flatMap((p) => {
      const json = p.json ?? JSON.stringify(fresh[p.key]);
      return json === undefined ? [] : [`${JSON.stringify(p.key)}:${json}`];
    });
    const tail = route.hasExtensions ? `,"extensions":{${extensions.join(",")}}` : "";
    return `{"x402Version":2,"error":${JSON.stringify(error)},"resource":{"url":${JSON.stringify(url)}${route.resourceTail},"accepts":${route.accepts}${tail}}`;
  }
}
