import {
  decodePaymentRequiredHeader,
  decodePaymentSignatureHeader,
  encodePaymentRequiredHeader,
} from "@x402/core/http";
import type { RouteConfig } from "@x402/core/server";
import {
  type HTTPAdapter,
  type HTTPProcessResult,
  type HTTPRequestContext,
  type PaywallConfig,
  x402HTTPResourceServer,
  x402ResourceServer,
} from "@x402/core/server";
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { OFFER_RECEIPT } from "@x402/extensions/offer-receipt";
import { HonoAdapter } from "@x402/hono";
import type { Context } from "hono";
import { channelRequest } from "../channels/index.ts";
import { PATH_DEPENDENT, UnpaidAnswers } from "./required-cache.ts";
import type { StreamSettle } from "./streamed.ts";

/**
 * The longest query a 402's resource URL carries. A GET's query is its input (`/api/qr`'s `data` reaches 7,089
 * characters): in the 402 it travels base64 in a header beside the signed offers and the declarations, and a
 * client reads 16 KiB of a response's headers (Node's fetch: more is an error, not a 402). Past this the resource
 * is named without its query, as the signed offers and receipts always name it (receipts.ts); the request's
 * hash binds the input where a payment must (payment ids, charges).
 */
export const RESOURCE_QUERY_MAX = 2048;

/**
 * What a host makes of the answer the SDK's middleware is about to send (the x402 v1 body of a 402:
 * payments/v1/), given the request as the resource server saw it.
 */
export type AnswerHook = (request: HTTPRequestContext, result: HTTPProcessResult) => HTTPProcessResult;

/**
 * `@x402/core`'s HTTP resource server, answering with the resource as buyers reach it: the merchant's
 * public URL, the request's path and its query string (`https://api.example/api/calc?expr=2%2B2`), not
 * the address this process listens on (a query longer than `RESOURCE_QUERY_MAX` left out). A buyer comparing
 * the 402's `resource.url` with what it asked for sees the same URL, less the `secretParams` (a caller's session cookies): the resource travels to
 * the facilitator and into discovery catalogues, which must never learn them. A request without a payment
 * is answered its route's 402 made once (required-cache.ts), the SDK's all the same.
 */
export class PublicUrlResourceServer extends x402HTTPResourceServer {
  private readonly unpaid = new UnpaidAnswers(this);

  constructor(
    server: x402ResourceServer,
    routes: Record<string, RouteConfig>,
    private readonly publicUrl: string,
    private readonly secretParams: ReadonlySet<string> = new Set(),
    private readonly answered: AnswerHook = (_request, result) => result,
  ) {
    super(server, routes);
  }

  override async processHTTPRequest(
    context: HTTPRequestContext,
    paywallConfig?: PaywallConfig,
  ): Promise<HTTPProcessResult> {
    const request = this.publicContext(context);
    const result =
      (await this.unpaid.answer(request)) ?? (await super.processHTTPRequest(request, paywallConfig));
    return this.answered(request, result);
  }

  /** The settlement sees the public URL too: a signed receipt names the resource the offer named. */
  override processSettlement(
    ...[payload, requirements, declared, transport, ...rest]: Parameters<
      x402HTTPResourceServer["processSettlement"]
    >
  ): ReturnType<x402HTTPResourceServer["processSettlement"]> {
    const request = transport && { ...transport, request: this.publicContext(transport.request) };
    return super.processSettlement(payload, requirements, declared, request, ...rest);
  }

  /**
   * `PAYMENT-RESPONSE` encoded as the SDK's `encodePaymentResponseHeader` encodes it, the same bytes, by `Buffer`:
   * the SDK builds a string a character per byte first, a tenth of a millisecond of a voucher's CPU.
   */
  override createSettlementHeaders(settleResponse: SettleResponse): Record<string, string> {
    const buyerFacing: Partial<SettleResponse> = { ...settleResponse };
    delete buyerFacing.extensionResponses;
    return { "PAYMENT-RESPONSE": Buffer.from(JSON.stringify(buyerFacing), "utf8").toString("base64") };
  }

  /**
   * The request as its resource is named to buyers and extensions (the public URL, no secret parameter). A
   * context made here is given back as it is: the settlement then names the resource the verification did, not
   * parsed again.
   */
  publicContext(context: HTTPRequestContext): HTTPRequestContext {
    if (publicContexts.has(context)) return context;
    const { adapter } = context;
    const asked = new URL(adapter.getUrl());
    // Rewritten only when it holds a secret: rewriting re-encodes the rest (a space's %20 becomes +).
    for (const name of this.secretParams) if (asked.searchParams.has(name)) asked.searchParams.delete(name);
    const search = asked.search.length <= RESOURCE_QUERY_MAX ? asked.search : "";
    const url = `${this.publicUrl}${context.path}${search}`;
    const publicAdapter: HTTPAdapter = Object.assign(Object.create(adapter) as HTTPAdapter, {
      getUrl: () => url,
    });
    const made = { ...context, adapter: publicAdapter };
    publicContexts.add(made);
    return made;
  }
}

/** The contexts `publicContext` made. */
const publicContexts = new WeakSet<HTTPRequestContext>();

/**
 * `@x402/core`'s resource server, matching an `exact` payment to the option of its own transfer method
 * (`extra.assetTransferMethod`, EIP-3009 when absent). The SDK takes the first option whose `extra` the
 * payment's `accepted` contains, and a Permit2 payment's (`{name, version, assetTransferMethod}`) contains
 * the EIP-3009 option's (`{name, version}`), listed before it: the facilitator would be asked to verify and
 * settle a Permit2 payload against requirements that do not ask for Permit2.
 */
export class MerchantResourceServer extends x402ResourceServer {
  /**
   * Each route's requirements, by its options: the SDK builds them for every request, paid ones too, and they
   * change only with the facilitators' support, which a new resource server reads (payments/fronts.ts).
   */
  private readonly requirements = new WeakMap<
    object,
    { options: readonly object[]; built: PaymentRequirements[] }
  >();
  /** Each route's declarations as enriched, by its declarations and then its method and pattern. */
  private readonly enriched = new WeakMap<object, Map<string, Record<string, unknown>>>();

  override async buildPaymentRequirementsFromOptions(
    ...[options, context]: Parameters<x402ResourceServer["buildPaymentRequirementsFromOptions"]>
  ): Promise<PaymentRequirements[]> {
    const first = options[0];
    if (!first || options.some((o) => typeof o.price === "function" || typeof o.payTo === "function"))
      return super.buildPaymentRequirementsFromOptions(options, context);
    const known = this.requirements.get(first);
    // A copy of the list: the SDK's 402 copies each requirement before its hooks may add to it.
    if (known && known.options.length === options.length && known.options.every((o, i) => o === options[i]))
      return [...known.built];
    const built = await super.buildPaymentRequirementsFromOptions(options, context);
    this.requirements.set(first, { options: [...options], built: [...built] });
    return built;
  }

  /**
   * The declarations as the SDK enriches them for a request: the same for each request of a route whose path
   * names no value (the Bazaar's adds the method). A copy: the SDK's 402 puts its extensions' data in it.
   */
  override enrichExtensions(
    declared: Record<string, unknown>,
    transportContext: unknown,
  ): Record<string, unknown> {
    const request = transportContext as Partial<HTTPRequestContext & { routePattern: string }> | null;
    const { method, routePattern } = request ?? {};
    if (!request?.adapter || !method || !routePattern || PATH_DEPENDENT.test(routePattern))
      return super.enrichExtensions(declared, transportContext);
    const byRoute = this.enriched.get(declared) ?? new Map<string, Record<string, unknown>>();
    this.enriched.set(declared, byRoute);
    const route = `${method} ${routePattern}`;
    let enriched = byRoute.get(route);
    if (!enriched) {
      enriched = super.enrichExtensions(declared, transportContext);
      byRoute.set(route, enriched);
    }
    return { ...enriched };
  }

  override findMatchingRequirements(
    available: PaymentRequirements[],
    payload: PaymentPayload,
  ): PaymentRequirements | undefined {
    const accepted = payload.accepted as PaymentRequirements | undefined;
    if (accepted?.scheme !== "exact") return super.findMatchingRequirements(available, payload);
    const method = transferMethodOf(accepted);
    return super.findMatchingRequirements(
      available.filter((r) => r.scheme !== "exact" || transferMethodOf(r) === method),
      payload,
    );
  }
}

/** How an `exact` option moves the token: its `extra.assetTransferMethod`, EIP-3009 by default. */
function transferMethodOf(requirements: PaymentRequirements): unknown {
  return requirements.extra?.assetTransferMethod ?? "eip3009";
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
  const required = await unpaidAnswer(server, c);
  if (!required) return {};
  return { "PAYMENT-REQUIRED": encodePaymentRequiredHeader({ ...required, error }) };
}

/**
 * How the payment of this request, which the middleware verified, is settled later (a streamed answer's,
 * payments/streamed.ts): against the requirements it matched, found as the middleware found them among
 * those the route asks for, through the same resource server and facilitator; the receipt is what the
 * `PAYMENT-RESPONSE` header would carry. An amount settles an `upto` payment for that much.
 */
export async function laterSettlement(
  server: x402HTTPResourceServer,
  c: Context,
): Promise<StreamSettle & { release(): Promise<void> }> {
  const header = c.req.header("payment-signature") ?? c.req.header("x-payment");
  if (!header) throw new Error(`${c.req.path}: no payment to settle`);
  const payload = decodePaymentSignatureHeader(header);
  const accepts = (await unpaidAnswer(server, c))?.accepts ?? [];
  const requirements = server.server.findMatchingRequirements(accepts, payload);
  if (!requirements)
    throw new Error(`${c.req.path}: the verified payment matches none of the route's requirements`);
  const request = { adapter: new HonoAdapter(c), path: c.req.path, method: c.req.method };
  // The stream has ended: from now on a failed settlement gives a channel's reservation back, as the
  // middleware's would (channels/scheme.ts). The stream runs in the request's context (streamed.ts).
  const streamEnded = () => {
    const channel = channelRequest();
    if (channel) channel.handedOff = false;
  };
  // The route's signed receipt, as the middleware's settlement gives it (payments/receipts/receipts.ts).
  const receipts = routeExtensions(server, c)?.[OFFER_RECEIPT];
  const declared = receipts === undefined ? undefined : { [OFFER_RECEIPT]: receipts };
  const settle = async (amount: bigint | undefined) => {
    streamEnded();
    const result = await server.processSettlement(
      payload,
      requirements,
      declared,
      { request },
      amount === undefined ? undefined : { amount: amount.toString() },
    );
    return { success: result.success, paymentResponse: result.headers["PAYMENT-RESPONSE"] };
  };
  /** Nothing to charge: the schemes that hold something for the payment (a channel) let it go. */
  const release = async () => {
    streamEnded();
    await server.server
      .createPaymentCancellationDispatcher(payload, requirements)
      .cancel({ reason: "handler_failed" });
  };
  return Object.assign(settle, { release });
}

/** The extensions the request's route declares (routes.ts keys them by method and path pattern). */
function routeExtensions(server: x402HTTPResourceServer, c: Context): Record<string, unknown> | undefined {
  const routes = server.routes as Record<string, RouteConfig | undefined>;
  return routes[`${c.req.method} ${c.req.routePath}`]?.extensions;
}

/** What the route asks for: the `PAYMENT-REQUIRED` it answers the request without its payment. */
export async function unpaidAnswer(
  server: x402HTTPResourceServer,
  c: Context,
): Promise<PaymentRequired | undefined> {
  const adapter = new HonoAdapter(c);
  const unpaid: HTTPAdapter = Object.assign(Object.create(adapter) as HTTPAdapter, {
    getHeader: (name: string) =>
      PAYMENT_HEADERS.has(name.toLowerCase()) ? undefined : adapter.getHeader(name),
  });
  const result = await server.processHTTPRequest({ adapter: unpaid, path: c.req.path, method: c.req.method });
  if (result.type !== "payment-error") return undefined;
  const header = result.response.headers["PAYMENT-REQUIRED"];
  return header ? decodePaymentRequiredHeader(header) : undefined;
}
