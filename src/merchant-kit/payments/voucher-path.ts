/**
 * A voucher through an open channel, decided by the kit instead of `@x402/hono`'s middleware (issue 66, item 4).
 *
 * Why: a voucher needs no chain and no facilitator, so what the middleware adds around the SDK's verdicts is a
 * share of its cost worth removing: it decodes the payment a second time (the kit's readers decoded it once,
 * payments/decoded.ts), finds the route by regular expression, wraps the request in an adapter, and copies the
 * answer as it settles (docs/benchmarks-log.md, "Paid requests": `@x402/core` was about a tenth of a voucher's CPU).
 *
 * The verdicts stay the SDK's: this runs the SDK's own steps in its order, through the resource servers'
 * methods (and the private ones required-cache.ts reads too): the route and its hooks, the route's
 * requirements, the 402 the payment answers, the match, the extensions' echo, the verification (the native
 * voucher check and the reservation: channels/), the handler, the settlement (the charge, one conditional
 * `UPDATE`) and its `PAYMENT-RESPONSE`; each answer written as the middleware writes it. Anything else goes to
 * the middleware untouched: a payment that is not a channel's voucher, a request outside the kit's paid chain
 * (no `ChannelRequest`: the refund route), and whatever the SDK would refuse or answer before verifying (no
 * route, a hook on protected requests, no matching requirement, an extension's echo changed, a failure), which
 * has changed nothing yet. test/merchant-kit/payments/voucher-path.test.ts sends the same payloads both ways.
 */
import {
  FacilitatorResponseError,
  type HTTPProcessResult,
  type HTTPRequestContext,
  type HTTPResponseInstructions,
  type HTTPTransportContext,
  type PaymentCancellationDispatcher,
  SETTLEMENT_OVERRIDES_HEADER,
  withPrivateCacheControl,
} from "@x402/core/server";
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { isBatchSettlementVoucherPayload } from "@x402/evm";
import { HonoAdapter } from "@x402/hono";
import type { Context, MiddlewareHandler, Next } from "hono";
import { basePath } from "hono/route";
import { log } from "../../common/log.ts";
import { channelRequest } from "../channels/index.ts";
import { CHANNEL_SCHEME } from "../endpoint.ts";
import type { MerchantEnv } from "../merchant-env.ts";
import { decodedPayment } from "./decoded.ts";
import type { HttpInternals } from "./required-cache.ts";
import type { PublicUrlResourceServer } from "./resource-server.ts";

/** The SDK's HTTP server's private steps this path takes as they are. */
type Internals = Required<HttpInternals> & {
  createHTTPResponse(required: PaymentRequired, isWebBrowser: boolean): HTTPResponseInstructions;
  processSkipHandlerSettlement(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    extensions: Record<string, unknown> | undefined,
    transport: HTTPTransportContext,
    skip: unknown,
  ): Promise<HTTPProcessResult>;
};

/** A voucher matched to its route's requirement, not yet verified: nothing has been changed for it. */
interface Prepared {
  payload: PaymentPayload;
  /** The request as the middleware gives it to the settlement, already named publicly as the kit's server would. */
  context: HTTPRequestContext;
  requirements: PaymentRequirements[];
  resource: PaymentRequired["resource"];
  extensions: Record<string, unknown> | undefined;
  transport: HTTPTransportContext;
  matching: PaymentRequirements;
}

/** A verified voucher, with its reservation made: the handler may run. */
interface Verified extends Prepared {
  cancel: PaymentCancellationDispatcher;
}

/** `sdk` (the payment middleware of `server`), with channel vouchers decided here. */
export function directVouchers(
  server: PublicUrlResourceServer,
  sdk: MiddlewareHandler<MerchantEnv>,
): MiddlewareHandler<MerchantEnv> {
  const internals = server as unknown as Partial<Internals>;
  const able =
    internals.getRouteConfig !== undefined &&
    internals.getProtectedRequestHooks !== undefined &&
    internals.normalizePaymentOptions !== undefined &&
    internals.createHTTPResponse !== undefined &&
    internals.processSkipHandlerSettlement !== undefined;
  // An SDK whose internals moved: everything goes its way.
  if (!able) return sdk;
  return async function directVoucher(c, next) {
    const payload = voucherOf(c);
    const prepared = payload && (await prepare(server, c, payload).catch(() => undefined));
    if (!prepared) return sdk(c, next);
    let decided: { verified: Verified } | { answer: HTTPResponseInstructions };
    try {
      decided = await verify(server, prepared);
    } catch (error) {
      // The middleware's answers to an error of `processHTTPRequest`.
      if (error instanceof FacilitatorResponseError) return c.json({ error: error.message }, 502);
      return internalError(c, error);
    }
    if ("answer" in decided) return write(c, decided.answer);
    return run(server, c, next, decided.verified);
  };
}

/** The request's payment when it is a channel's voucher, in the kit's paid chain; its own copy. */
function voucherOf(c: Context<MerchantEnv>): PaymentPayload | undefined {
  if (!channelRequest()) return undefined;
  // The one header the SDK reads a payment from (`extractPayment`).
  const header = c.req.header("payment-signature");
  if (!header) return undefined;
  try {
    const payload = decodedPayment(header);
    const accepted = payload?.accepted as { scheme?: unknown } | undefined;
    if (payload?.x402Version !== 2 || accepted?.scheme !== CHANNEL_SCHEME) return undefined;
    if (!isBatchSettlementVoucherPayload(payload.payload)) return undefined;
    // The decoded payment is shared by the requests with the same header: the SDK keeps what it remembers
    // of a request by the payload object it is given, so each request gets one of its own.
    return { ...payload };
  } catch {
    return undefined;
  }
}

/** `processHTTPRequest` up to its verification; undefined where the SDK answers otherwise. */
async function prepare(
  server: PublicUrlResourceServer,
  c: Context<MerchantEnv>,
  payload: PaymentPayload,
): Promise<Prepared | undefined> {
  const internals = server as unknown as Internals;
  const context: HTTPRequestContext = {
    adapter: new HonoAdapter(c),
    path: c.req.path,
    decodedPath: decodedRoutePath(c),
    method: c.req.method,
    paymentHeader: c.req.header("payment-signature"),
  };
  const request = server.publicContext(context);
  const match = internals.getRouteConfig(request.path, c.req.method, request.decodedPath);
  if (!match) return undefined;
  const { config, pattern } = match;
  if (internals.getProtectedRequestHooks(config).length > 0) return undefined;
  const enriched = { ...request, routePattern: pattern };
  const resource = {
    url: config.resource || enriched.adapter.getUrl(),
    description: config.description || "",
    mimeType: config.mimeType || "",
    ...(config.serviceName !== undefined && { serviceName: config.serviceName }),
    ...(config.tags !== undefined && { tags: config.tags }),
    ...(config.iconUrl !== undefined && { iconUrl: config.iconUrl }),
  };
  const sdk = server.server;
  const options = internals.normalizePaymentOptions(config);
  const requirements = await sdk.buildPaymentRequirementsFromOptions(options, enriched);
  const extensions = config.extensions && sdk.enrichExtensions(config.extensions, enriched);
  const transport = { request: enriched };
  const required = await sdk.createPaymentRequiredResponse(
    requirements,
    resource,
    undefined,
    extensions,
    transport,
  );
  const matching = sdk.findMatchingRequirements(required.accepts, payload);
  if (!matching || !sdk.validateExtensions(required, payload).valid) return undefined;
  // A channel's voucher is verified before its handler and settled after (the `authorization` flow).
  if (sdk.getPaymentFlow(payload, matching) !== "authorization") return undefined;
  return { payload, context: request, requirements, resource, extensions, transport, matching };
}

/** The verification and what follows it in `processHTTPRequest`, its refusals as it makes them. */
async function verify(
  server: PublicUrlResourceServer,
  p: Prepared,
): Promise<{ verified: Verified } | { answer: HTTPResponseInstructions }> {
  const internals = server as unknown as Internals;
  const sdk = server.server;
  const refusal = async (reason: string, payload?: PaymentPayload) => {
    const required = await sdk.createPaymentRequiredResponse(
      p.requirements,
      p.resource,
      reason,
      p.extensions,
      p.transport,
      payload,
    );
    return { answer: internals.createHTTPResponse(required, false) };
  };
  try {
    const result = await sdk.verifyPayment(p.payload, p.matching, p.extensions, p.transport);
    if (!result.isValid) return await refusal(result.invalidReason as string, p.payload);
    if (result.skipHandler) {
      const skipped = await internals.processSkipHandlerSettlement(
        p.payload,
        p.matching,
        p.extensions,
        p.transport,
        result.skipHandler,
      );
      return { answer: (skipped as Extract<HTTPProcessResult, { type: "payment-error" }>).response };
    }
    const cancel = sdk.createPaymentCancellationDispatcher(
      p.payload,
      p.matching,
      p.extensions,
      p.transport,
      [],
    );
    return { verified: { ...p, cancel } };
  } catch (error) {
    if (error instanceof FacilitatorResponseError) throw error;
    return refusal(error instanceof Error ? error.message : "Payment verification failed");
  }
}

/** A `payment-error` answer, as the middleware writes it. */
function write(c: Context<MerchantEnv>, response: HTTPResponseInstructions): Response {
  for (const [name, value] of Object.entries(response.headers)) c.header(name, value);
  if (response.isHtml) return c.html(response.body as string, response.status as 402);
  return c.json(response.body || {}, response.status as 402);
}

/** The middleware's answer to an error it did not expect. */
function internalError(c: Context<MerchantEnv>, error: unknown): Response {
  log("error", "a voucher's payment failed unexpectedly", { path: c.req.path, error });
  return c.json({ error: "Internal Server Error" }, 500);
}

/** The handler, then the charge and its `PAYMENT-RESPONSE`, or the reservation given back: the middleware's. */
async function run(
  server: PublicUrlResourceServer,
  c: Context<MerchantEnv>,
  next: Next,
  v: Verified,
): Promise<void> {
  const failureHeaders = (response: Response, cancelled: Awaited<ReturnType<typeof v.cancel.cancel>>) => {
    const headers = server.createFailurePathSettlementHeaders(
      cancelled,
      undefined,
      v.payload,
      response.headers.get("Cache-Control"),
    );
    for (const [name, value] of Object.entries(headers ?? {})) response.headers.set(name, value);
  };
  try {
    await next();
  } catch (error) {
    const cancelled = await v.cancel.cancel({ reason: "handler_threw", error });
    if (!cancelled) throw error;
    const response = internalError(c, error);
    failureHeaders(response, cancelled);
    c.res = response;
    return;
  }
  let res = c.res;
  if (res.status >= 400) {
    const cancelled = await v.cancel.cancel({ reason: "handler_failed", responseStatus: res.status });
    res.headers.delete(SETTLEMENT_OVERRIDES_HEADER);
    failureHeaders(res, cancelled);
    return;
  }
  c.res = undefined;
  try {
    const body = Buffer.from(await res.arrayBuffer());
    const headers: Record<string, string> = {};
    res.headers.forEach((value, key) => {
      headers[key] = value;
    });
    const settled = await server.processSettlement(v.payload, v.matching, v.extensions, {
      request: v.context,
      responseBody: body,
      responseHeaders: headers,
    });
    if (!settled.success) {
      const { response } = settled;
      const text = response.isHtml ? String(response.body ?? "") : JSON.stringify(response.body ?? {});
      res = new Response(text, { status: response.status, headers: response.headers });
    } else {
      res = new Response(body, { status: res.status, headers: res.headers });
      res.headers.delete("transfer-encoding");
      for (const [name, value] of Object.entries(settled.headers)) res.headers.set(name, value);
      res.headers.set("Cache-Control", withPrivateCacheControl(res.headers.get("Cache-Control")));
      res.headers.delete(SETTLEMENT_OVERRIDES_HEADER);
    }
  } catch (error) {
    if (error instanceof FacilitatorResponseError) {
      c.res = c.json({ error: error.message }, 502);
      return;
    }
    log("error", "a voucher's settlement failed unexpectedly", { path: c.req.path, error });
    res = c.json({}, 402);
  }
  c.res = res;
}

/** The request's path below the app's base path, decoded: `@x402/hono`'s `decodedRoutePath`. */
function decodedRoutePath(c: Context<MerchantEnv>): string {
  let path: string;
  try {
    path = decodeURIComponent(c.req.path);
  } catch {
    path = c.req.path;
  }
  let root = "";
  try {
    root = basePath(c);
  } catch {
    return path;
  }
  if (!root || root === "/" || !path.startsWith(root)) return path;
  if (path === root) return "";
  if (path[root.length] === "/") return path.slice(root.length);
  return path;
}
