/**
 * The payment middleware a merchant host answers with, with payment channels or without. A catalogue offers
 * channels (`batch-settlement`) beside its other schemes; the host offers them only where its facilitator
 * serves them: `/supported` lists `batch-settlement` on the network with a receiver authorizer, the key
 * that authorises claims and refunds, which a channel names for good (x402 spec). Otherwise its 402s,
 * documents and MCP tools say nothing of channels, and `exact` and `upto` work as before; so does a host
 * whose operator turned channels off (`X402M_CHANNELS=off`).
 *
 * Two routes tables over one resource server, chosen per request once the resource server has read the
 * facilitator's `/supported` (when the host first reaches it, as the SDK's middleware does). The SDK
 * validates every route against the facilitator when it starts and refuses to serve any when one scheme is
 * missing: the choice must be made here, before it.
 */
import type { RouteConfig, x402ResourceServer } from "@x402/core/server";
import { paymentMiddlewareFromHTTPServer } from "@x402/hono";
import type { Context, MiddlewareHandler, Next } from "hono";
import { errorBody } from "../../common/errors.ts";
import { CHANNEL_SCHEME, type Merchant, schemesOf, withoutChannels } from "../endpoint.ts";
import type { MerchantEnv } from "../merchant-env.ts";
import { PublicUrlResourceServer } from "../payments/resource-server.ts";
import { type PaymentSettings, REFUND_PATH, refundRoute, x402Routes } from "../routes.ts";
import type { ChannelSettings } from "./settings.ts";

/** One way of answering: the merchant as it is paid, its HTTP resource server and payment middleware. */
export interface PaymentFront {
  merchant: Merchant;
  /** Whether channels are offered (the refund route answers). */
  channels: boolean;
  httpServer: PublicUrlResourceServer;
  middleware: MiddlewareHandler<MerchantEnv>;
}

export interface PaymentFronts {
  /** The front of this moment: waits for the facilitator's `/supported` (throws while it cannot be read). */
  pick(): Promise<PaymentFront>;
  /**
   * The front as far as is known now, without waiting: the one without channels until `/supported` has
   * been read (the documents, which must not wait for the facilitator).
   */
  current(): PaymentFront;
  /** Each front (one when channels cannot be offered), for what is built once per front. */
  all: readonly PaymentFront[];
  /** The payment middleware of the front of this moment; a 500 while `/supported` cannot be read. */
  middleware: MiddlewareHandler<MerchantEnv>;
}

export function paymentFronts(
  merchant: Merchant,
  resourceServer: x402ResourceServer,
  payments: PaymentSettings,
  settings: Pick<ChannelSettings, "mode">,
): PaymentFronts {
  for (const e of merchant.endpoints)
    if (schemesOf(e).every((s) => s === CHANNEL_SCHEME))
      throw new Error(
        `${e.path}: batch-settlement needs another scheme beside it (channels may be unavailable)`,
      );
  const secrets = new Set(merchant.endpoints.flatMap((e) => e.secretParams ?? []));
  const front = (m: Merchant, routes: Record<string, RouteConfig>, channels: boolean): PaymentFront => {
    const httpServer = new PublicUrlResourceServer(resourceServer, routes, m.publicUrl, secrets);
    // Not initialised by the middleware: `pick` does it once for both (below).
    const middleware = paymentMiddlewareFromHTTPServer(httpServer, undefined, undefined, false);
    return { merchant: m, channels, httpServer, middleware: middleware as MiddlewareHandler<MerchantEnv> };
  };
  const plain = withoutChannels(merchant);
  const without = front(plain, x402Routes(plain, payments), false);
  const refund = refundRoute(merchant, payments);
  const withChannels =
    settings.mode === "off" || refund === undefined
      ? without
      : front(merchant, { ...x402Routes(merchant, payments), [`GET ${REFUND_PATH}`]: refund }, true);
  let ready: Promise<void> | null = null;
  const initialize = () => {
    ready ??= resourceServer.initialize().catch((error: unknown) => {
      ready = null;
      throw error;
    });
    return ready;
  };
  // Asked now, as the SDK's middleware does, so that the first buyer does not wait for it.
  initialize().catch(() => undefined);
  const network = payments.network as `${string}:${string}`;
  const current = () =>
    withChannels !== without &&
    servesChannels(resourceServer, network, merchant.channelAuthorizer !== undefined)
      ? withChannels
      : without;
  const pick = async () => {
    await initialize();
    return current();
  };
  return {
    pick,
    current,
    all: withChannels === without ? [without] : [without, withChannels],
    middleware: async (c: Context<MerchantEnv>, next: Next) => {
      let chosen: PaymentFront;
      try {
        chosen = await pick();
      } catch (error) {
        // What the SDK's middleware answers when it cannot start; the kit turns it into a 503
        // (payments/facilitator-watch.ts) while the facilitator fails.
        return c.json(
          errorBody(
            "internal_error",
            `the payment facilitator could not be asked what it supports (${(error as Error).message})`,
          ),
          500,
        );
      }
      return chosen.middleware(c, next);
    },
  };
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
