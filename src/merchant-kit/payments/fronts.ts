/**
 * The payment middleware a merchant host answers with: the ways to pay its catalogue offers (each scheme, and
 * for `exact` each transfer method), less those its facilitators would not settle for it (payments/facilitators/offers.ts:
 * a signed probe of each at /verify, at start and whenever their `/supported` changes). Payment channels
 * (`batch-settlement`) also need a receiver authorizer, the key that authorises claims and refunds and that a
 * channel names for good (x402 spec): the merchant's own (`channelAuthorizer`), or one a facilitator lists
 * in `/supported` and, as the probe finds, will sign with for this merchant. What is left out, the 402s,
 * documents and MCP tools say nothing of (logged once at warn, with why); so with `X402M_CHANNELS=off`.
 *
 * One routes table per set of ways offered, over a resource server that has read the facilitators'
 * `/supported` (when the host is built, as the SDK's middleware does) and been probed; chosen per request.
 * When `/supported` changes, a new resource server is prepared beside the one serving, then takes over. The SDK validates every route against the facilitator when it starts and
 * refuses to serve any when one scheme is missing: the choice must be made here, before it.
 */
import type { FacilitatorClient, RouteConfig, x402ResourceServer } from "@x402/core/server";
import { paymentMiddlewareFromHTTPServer } from "@x402/hono";
import type { Context, MiddlewareHandler, Next } from "hono";
import { errorBody } from "../../common/errors.ts";
import { log } from "../../common/log.ts";
import type { ChannelSettings } from "../channels/index.ts";
import { CHANNEL_SCHEME, exactTransfersOf, type Merchant, schemesOf } from "../endpoint.ts";
import type { MerchantEnv } from "../merchant-env.ts";
import { type PaymentSettings, paymentNetworks, refundPaths, refundRoute, x402Routes } from "../routes.ts";
import { bazaarChecked } from "./bazaar-checked.ts";
import {
  FACILITATOR_RETRY_AFTER_S,
  networkWayOf,
  settleableWays,
  type Verdict,
  type WayToPay,
} from "./facilitators/index.ts";
import { PublicUrlResourceServer } from "./resource-server.ts";
import { answerAllowanceRequired, sponsoringListed } from "./sponsoring/index.ts";
import { v1Bodies } from "./v1/index.ts";

/** One way of answering: the merchant as it is paid, its HTTP resource server and payment middleware. */
export interface PaymentFront {
  merchant: Merchant;
  /** Whether channels are offered (the refund route answers). */
  channels: boolean;
  httpServer: PublicUrlResourceServer;
  middleware: MiddlewareHandler<MerchantEnv>;
}

export interface PaymentFronts {
  /**
   * The front of this moment: waits for the facilitators' `/supported` (throws while it cannot be read) and
   * for what they were found to settle for this merchant (payments/facilitators/offers.ts).
   */
  pick(): Promise<PaymentFront>;
  /**
   * The front as far as is known now, without waiting: the one without channels until `/supported` has
   * been read (the documents, which must not wait for the facilitator).
   */
  current(): PaymentFront;
  /** Whether any front may offer channels (the refund route is served). */
  mayOfferChannels: boolean;
  /** The payment middleware of the front of this moment; a 500 while `/supported` cannot be read. */
  middleware: MiddlewareHandler<MerchantEnv>;
  /** Works out again what can be settled (the facilitators' `/supported` changed). */
  refresh(): Promise<void>;
}

/** How long what the facilitators settle is taken as known before their `/supported` is read again. */
const REFRESH_MS = 5 * 60_000;

export function paymentFronts(
  merchant: Merchant,
  /**
   * A resource server with the merchant's schemes, its facilitators' `/supported` not yet read: one per
   * generation (below), the same scheme objects in each.
   */
  resourceServerOf: () => x402ResourceServer,
  payments: PaymentSettings,
  /** Whether channels are served. */
  settings: Pick<ChannelSettings, "mode">,
  /** The facilitators, as the merchant reaches them, that payments/facilitators/offers.ts asks; none: nothing is asked. */
  facilitator?: FacilitatorClient,
  /** Told of each refusal a facilitator threw at the asking (the operator's log of refusals). */
  onRefusal?: (error: unknown, message: string) => void,
): PaymentFronts {
  for (const e of merchant.endpoints)
    if (schemesOf(e).every((s) => s === CHANNEL_SCHEME))
      throw new Error(
        `${e.path}: batch-settlement needs another scheme beside it (channels may be unavailable)`,
      );
  const refund = settings.mode === "off" ? undefined : refundRoute(merchant, payments);
  // Each refund path's route, the one for every network first (routes.ts).
  const refunds = refund
    ? refundPaths(payments).map(({ path, network }) => ({
        key: `GET ${path}`,
        route: network ? (refundRoute(merchant, payments, network) as RouteConfig) : refund,
      }))
    : [];
  const ways = waysOf(merchant, payments, refund);
  const withoutChannels = new Set([...ways.keys()].filter((w) => !isChannelWay(w)));
  const shape = {
    merchant,
    payments,
    refunds,
    secrets: new Set(merchant.endpoints.flatMap((e) => e.secretParams ?? [])),
  };
  let logged = "";
  const workOut = async (g: Generation) => {
    // What the ways were judged against: a later look compares with it.
    g.supported = JSON.stringify(await facilitator?.getSupported().catch(() => undefined));
    g.leftOut = await refusedWays(merchant, g.resourceServer, { facilitator, onRefusal }, ways, payments);
    const out = new Set(g.leftOut.map((v) => v.way));
    g.offered = new Set([...ways.keys()].filter((w) => !out.has(w)));
    const said = JSON.stringify(g.leftOut);
    if (g.leftOut.length > 0 && said !== logged)
      log("warn", "ways to pay left out of the 402s: its facilitators would not settle them for it", {
        merchant: merchant.name,
        payTo: merchant.payTo,
        leftOut: g.leftOut,
        docs: "docs/platform.md, What is offered",
      });
    logged = said;
  };
  const prepare = (g: Generation) => {
    g.ready ??= g.resourceServer
      .initialize()
      .then(() => workOut(g))
      .catch((error: unknown) => {
        g.ready = null;
        throw error;
      });
    return g.ready;
  };
  const generation = (): Generation => ({
    resourceServer: resourceServerOf(),
    built: new Map(),
    leftOut: [],
  });
  // The resource server of this moment, what its facilitators settle and its fronts. The SDK's `initialize`
  // empties the server's table of kinds before it asks again: a change is prepared on a new generation while
  // the old one serves, and requests under way finish on the one they started with.
  let current = generation();
  // Asked now, as the SDK's middleware does, so that the first buyer does not wait for it.
  prepare(current).catch(() => undefined);
  let lastLook = Date.now();
  const refresh = async () => {
    if (!facilitator) return;
    lastLook = Date.now();
    const supported = JSON.stringify(await facilitator.getSupported());
    if (supported === current.supported) return;
    const next = generation();
    await prepare(next);
    current = next;
  };
  // Looked at again by a paid request once the last look is stale, never by a timer: a host nobody calls
  // runs nothing (test/common/db-idle.test.ts), and what it offers matters only to those who call.
  const lookAgain = () => {
    if (facilitator && Date.now() - lastLook >= REFRESH_MS) refresh().catch(() => undefined);
  };
  // Nothing settleable: the documents still show the catalogue as it would be paid (the calls answer 503).
  const frontNow = (g: Generation) =>
    frontOf(g, shape, g.offered && g.offered.size > 0 ? g.offered : withoutChannels);
  const pickGeneration = async () => {
    lookAgain();
    const g = current;
    await prepare(g);
    return g;
  };
  return {
    pick: async () => frontNow(await pickGeneration()),
    current: () => frontNow(current),
    mayOfferChannels: [...ways.keys()].some(isChannelWay),
    refresh,
    middleware: async (c: Context<MerchantEnv>, next: Next) => {
      let g: Generation;
      try {
        g = await pickGeneration();
      } catch (error) {
        // What the SDK's middleware answers when it cannot start; the kit turns it into a 503
        // (payments/facilitators/watch.ts) while the facilitator fails.
        return c.json(
          errorBody(
            "internal_error",
            `the payment facilitator could not be asked what it supports (${(error as Error).message})`,
          ),
          500,
        );
      }
      if (g.offered?.size === 0) {
        c.header("Retry-After", String(FACILITATOR_RETRY_AFTER_S));
        // As when a facilitator refuses a payment (payments/facilitators/watch.ts): its trouble, said so.
        return c.json(
          errorBody(
            "facilitator_unavailable",
            `the payment facilitators refuse every way to pay this merchant (${g.leftOut.map((l) => `${l.way}: ${l.why}`).join("; ")}); nothing was charged: try again in ${FACILITATOR_RETRY_AFTER_S} s`,
          ),
          503,
        );
      }
      return frontNow(g).middleware(c, next);
    },
  };
}

/** A resource server, once its facilitators' `/supported` is read: what they settle, and its fronts. */
interface Generation {
  resourceServer: x402ResourceServer;
  /** One front per set of ways offered, built when first needed. */
  built: Map<string, PaymentFront>;
  /** Its `/supported` and what it settles, once prepared. */
  supported?: string;
  offered?: ReadonlySet<WayToPay>;
  leftOut: LeftOut[];
  ready?: Promise<void> | null;
}

interface Shape {
  merchant: Merchant;
  payments: PaymentSettings;
  /** The refund routes by their key ("GET /channels/refund"), none where channels are off. */
  refunds: { key: string; route: RouteConfig }[];
  secrets: ReadonlySet<string>;
}

/** The front of generation `g` that offers the `allowed` ways. */
function frontOf(g: Generation, shape: Shape, allowed: ReadonlySet<WayToPay>): PaymentFront {
  const key = [...allowed].sort().join(",");
  const known = g.built.get(key);
  if (known) return known;
  // Each endpoint keeps the ways offered on some network; each network's entries, the ways offered on it.
  const m = restricted(shape.merchant, new Set([...allowed].map((w) => w.split(" ")[0] as WayToPay)));
  const channels = shape.refunds.length > 0 && [...allowed].some(isChannelWay);
  const offered = (accept: Parameters<typeof networkWayOf>[0]) => allowed.has(networkWayOf(accept));
  // Gas sponsoring declared where these facilitators list it (payments/sponsoring/).
  const sponsoring = sponsoringListed(
    g.resourceServer,
    paymentNetworks(shape.payments).map((n) => n.network),
  );
  const routes = {
    ...x402Routes(m, shape.payments, offered, sponsoring),
    // The refund routes' channel on each network channels are offered on.
    ...(channels && Object.fromEntries(shape.refunds.map((r) => [r.key, offeredOnly(r.route, offered)]))),
  };
  // Its 402s' bodies in x402 v1's form, where the request is a v1 client's or unpaid (payments/v1/).
  const httpServer = new PublicUrlResourceServer(
    g.resourceServer,
    routes,
    m.publicUrl,
    new Set(shape.secrets),
    v1Bodies,
  );
  // Not initialised by the middleware: the generation is, once for all its fronts.
  // Vouchers too go through the SDK's middleware: the kit's own voucher path, on the SDK's private methods, saved
  // 1-2% of a voucher's CPU (docs/benchmarks-log.md, "issue 66 item 4"), not the tenth that would pay for
  // following every SDK release's internals (issue 87).
  // Its 412 (a Permit2 payment without the allowance) in the kit's error shape (payments/sponsoring/).
  const middleware = answerAllowanceRequired(
    paymentMiddlewareFromHTTPServer(
      bazaarChecked(httpServer),
      undefined,
      undefined,
      false,
    ) as MiddlewareHandler<MerchantEnv>,
  );
  const front = { merchant: m, channels, httpServer, middleware };
  g.built.set(key, front);
  return front;
}

type LeftOut = { way: WayToPay; why: string };

/** The ways its facilitators would not settle for the merchant, and why (payments/facilitators/offers.ts). */
async function refusedWays(
  merchant: Merchant,
  resourceServer: x402ResourceServer,
  asking: { facilitator?: FacilitatorClient; onRefusal?: (error: unknown, message: string) => void },
  ways: ReadonlyMap<WayToPay, Accept>,
  payments: PaymentSettings,
): Promise<LeftOut[]> {
  const { facilitator, onRefusal } = asking;
  const verdicts = facilitator
    ? await settleableWays(resourceServer, facilitator, [...ways.values()], onRefusal)
    : [...ways.keys()].map((way): Verdict => ({ way, can: "yes" }));
  const leftOut: LeftOut[] = verdicts.flatMap((v) => (v.can === "no" ? [{ way: v.way, why: v.why }] : []));
  const ownAuthorizer = merchant.channelAuthorizer !== undefined;
  for (const on of paymentNetworks(payments)) {
    const channelWay = networkWayOf({ scheme: CHANNEL_SCHEME, network: on.network });
    if (
      ways.has(channelWay) &&
      !leftOut.some((v) => v.way === channelWay) &&
      !servesChannels(resourceServer, on.network as `${string}:${string}`, ownAuthorizer)
    )
      leftOut.push({
        way: channelWay,
        why: "no facilitator lists batch-settlement with a receiver authorizer",
      });
  }
  return leftOut;
}

/** A channel's way to pay: a deposit by EIP-3009, as the kit offers it. */
const CHANNEL_WAY: WayToPay = `${CHANNEL_SCHEME}/eip3009`;

/** Whether a way (on its network) is a channel's. */
const isChannelWay = (way: WayToPay): boolean => way.startsWith(`${CHANNEL_WAY} on `);

/** A route with only the `accepts` entries `offered` keeps (all of them, if it would keep none). */
function offeredOnly(route: RouteConfig, offered: (accept: Accept) => boolean): RouteConfig {
  const all = [route.accepts].flat() as Accept[];
  const kept = all.filter(offered);
  return kept.length === 0 || kept.length === all.length ? route : { ...route, accepts: kept };
}

/** Each way to pay the merchant's routes offer, on each network, with one route's `accepts` entry for it. */
function waysOf(merchant: Merchant, payments: PaymentSettings, refund: RouteConfig | undefined) {
  const ways = new Map<WayToPay, Accept>();
  const routes = [...Object.values(x402Routes(merchant, payments)), ...(refund ? [refund] : [])];
  for (const route of routes)
    for (const accept of [route.accepts].flat() as Accept[]) {
      const way = networkWayOf(accept);
      if (!ways.has(way) && (accept.scheme !== CHANNEL_SCHEME || refund)) ways.set(way, accept);
    }
  return ways;
}

type Accept = Exclude<RouteConfig["accepts"], readonly unknown[]>;

/**
 * The merchant with only the `allowed` ways on each endpoint; an endpoint none of whose ways is allowed
 * keeps them all (it cannot be paid either way, and its 402 still says how it would be).
 */
function restricted(merchant: Merchant, allowed: ReadonlySet<WayToPay>): Merchant {
  const endpoints = merchant.endpoints.map((e) => {
    const transfers = exactTransfersOf(e).filter((t) => allowed.has(`exact/${t}`));
    const schemes = schemesOf(e).filter((s) =>
      s === "exact" ? transfers.length > 0 : allowed.has(s === "upto" ? "upto/permit2" : CHANNEL_WAY),
    );
    if (schemes.length === 0) return e;
    const same = schemes.length === schemesOf(e).length && transfers.length === exactTransfersOf(e).length;
    return same
      ? e
      : { ...e, scheme: schemes, ...(schemes.includes("exact") && { exactTransfers: transfers }) };
  });
  return { ...merchant, endpoints };
}

/**
 * Whether the facilitators serve channels on `network`: `batch-settlement`, and a receiver authorizer, the
 * merchant's own (`ownAuthorizer`: any facilitator that lists the scheme relays what it signs) or one a
 * facilitator offers.
 */
export function servesChannels(
  resourceServer: x402ResourceServer,
  network: `${string}:${string}`,
  ownAuthorizer = false,
): boolean {
  const kind = resourceServer.getSupportedKind(2, network, CHANNEL_SCHEME);
  if (kind && ownAuthorizer) return true;
  const authorizer = kind?.extra?.receiverAuthorizer;
  return (
    typeof authorizer === "string" && /^0x[0-9a-fA-F]{40}$/.test(authorizer) && BigInt(authorizer) !== 0n
  );
}
