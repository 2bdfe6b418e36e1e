import type { FacilitatorClient } from "@x402/core/server";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { UptoEvmScheme } from "@x402/evm/upto/server";
import { bazaarResourceServerExtension } from "@x402/extensions/bazaar";
import { builderCodeResourceServerExtension } from "@x402/extensions/builder-code";
import { paymentIdentifierResourceServerExtension } from "@x402/extensions/payment-identifier";
import { ExactSvmScheme as ExactSvmServerScheme } from "@x402/svm/exact/server";
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { SOLANA_NETWORK } from "../chain/solana/constants.ts";
import type { Database } from "../common/db/index.ts";
import { migrate } from "../common/db/index.ts";
import { healthRoutes } from "../common/health.ts";
import { corsAnswers, onError, onNotFound } from "../common/http.ts";
import type { Unfinished } from "../common/lifecycle.ts";
import { MCP_PATH } from "../common/mcp/http.ts";
import { answerEveryMethod } from "../common/methods.ts";
import { limitUnpaid, paymentVerified, type UnpaidLimit } from "../common/rate-limit.ts";
import { REQUEST_ID_HEADER, requestLog } from "../common/request-log.ts";
import {
  ChannelStore,
  MerchantChannelScheme,
  refundHandled,
  refundOnly,
  releaseCrashedReservations,
} from "./channels/index.ts";
import { type Merchant, type MerchantServices, resourceUrl } from "./endpoint.ts";
import { openAiErrors } from "./error-dialect.ts";
import { faviconResponse } from "./favicon.ts";
import { hostInfo, hostInfoSettings } from "./host-info.ts";
import { validateInput } from "./input.ts";
import { llmsTxt } from "./llms-txt.ts";
import { MerchantMcp } from "./mcp/index.ts";
import type { MerchantEnv } from "./merchant-env.ts";
import { KIT_MIGRATIONS, KIT_MODULE } from "./migrations.ts";
import { openApiDocument } from "./openapi.ts";
import { countRefusals, countUnpaidLimit } from "./payments/counted.ts";
import {
  ACCESS_CALLS_HEADER,
  ACCESS_UNTIL_HEADER,
  AnswerStore,
  accessForPeriod,
  answerOnce,
  claimPaymentId,
  periodAccess,
  REPLAYED_HEADER,
  SIGN_IN_HEADER,
  signInExtension,
  withPaymentIds,
} from "./payments/extensions/index.ts";
import { facilitatorTrouble, WatchedFacilitator } from "./payments/facilitators/index.ts";
import { type PaymentFront, paymentFronts } from "./payments/fronts.ts";
import { headAsUnpaidGet } from "./payments/head.ts";
import { type FundsReader, networkFunds, PaymentLedger, paymentHeader } from "./payments/ledger/index.ts";
import { malformedPayment, refuseMalformedPayment } from "./payments/malformed.ts";
import { isGuarded, paidHandler, settleAndRecord } from "./payments/paid-handler.ts";
import { paymentReadiness, watchedChannels } from "./payments/readiness.ts";
import { receiptsExtension } from "./payments/receipts/index.ts";
import {
  laterSettlement,
  MerchantResourceServer,
  paymentRequiredHeaders,
} from "./payments/resource-server.ts";
import { v1Front } from "./payments/v1/index.ts";
import { renderReferencePage } from "./reference-page.ts";
import { type PaymentSettings, paymentNetworks, refundPaths } from "./routes.ts";
import { startTables } from "./tables.ts";
import { wellKnownX402 } from "./well-known.ts";

export interface MerchantAppOptions {
  services: MerchantServices;
  /** Where payments are verified and settled: `HTTPFacilitatorClient` or `inProcessClient(facilitator)`. */
  facilitator: FacilitatorClient;
  payments: PaymentSettings;
  /**
   * The payer's balance, for endpoints that reserve funds; default: read from each network's `rpcUrl`, and from
   * `payments.solanaRpcUrl` for a Solana payment.
   */
  funds?: FundsReader;
  /** A banner over the host's pages when its money is not real (the devnet demo's). */
  notice?: string;
  /** The process's limit on unpaid requests (src/common/rate-limit.ts); none: every request is served. */
  limit?: UnpaidLimit;
  /**
   * Where paid calls between their settlement and their commit are tracked, for a stop to wait for them
   * (src/common/lifecycle.ts, `addUnfinished`); none: nobody waits.
   */
  settling?: Unfinished;
}

/**
 * Browsers pay too: they must see the payment headers and may send the signature. v1 clients (x402-fetch,
 * x402-axios) send `Access-Control-Expose-Headers` with their payment, as a request header, which a browser's
 * preflight must then allow.
 */
const CORS = {
  origin: "*",
  allowHeaders: [
    "Content-Type",
    "PAYMENT-SIGNATURE",
    "X-PAYMENT",
    "Access-Control-Expose-Headers",
    SIGN_IN_HEADER,
    REQUEST_ID_HEADER,
    "Mcp-Protocol-Version",
  ],
  exposeHeaders: [
    "PAYMENT-REQUIRED",
    "PAYMENT-RESPONSE",
    "X-PAYMENT-RESPONSE",
    REQUEST_ID_HEADER,
    REPLAYED_HEADER,
    ACCESS_UNTIL_HEADER,
    ACCESS_CALLS_HEADER,
  ],
};

/**
 * A merchant's HTTP host, built from its catalogue alone: per endpoint, input validation (400 before any
 * payment), a 400 for a `PAYMENT-SIGNATURE` that cannot be a payment (payments/malformed.ts), the x402
 * payment middleware (exact and upto schemes, and payment channels where the catalogue offers them and the
 * facilitator serves them: payments/fronts.ts; Bazaar extension) wrapped by the ledger's record
 * of the outcome, and the paid handler (one run per payment, funds reserved, writes in a transaction
 * that commits with the settlement: payments/paid-handler.ts), refusals in the endpoint's dialect
 * (error-dialect.ts); the merchant's free routes; and the free documents `/openapi.json`, `/` and `/docs`
 * (reference page), `/.well-known/x402`, `/llms.txt` and `/favicon.ico`, `/favicon.svg` (host-info.ts,
 * llms-txt.ts, favicon.ts: what agents' discovery reads), `/healthz`; `/livez` and `/readyz` (database, facilitator, chain:
 * payments/readiness.ts); `/mcp`, the paid and free routes as MCP tools, paid through x402's MCP transport
 * (mcp/); `GET /channels/refund`, a buyer's cooperative refund of its channel (channels/refund-route.ts), where
 * channels may be offered. Each request has its id and its line in the log (src/common/request-log.ts).
 * Every path answers every method: HEAD as GET
 * without a body (on a paid route, the unpaid 402: payments/head.ts), OPTIONS with `Allow` (a CORS
 * preflight), any other method it does not take 405 with `Allow`. With `limit`, unpaid requests beyond
 * their client's limit are refused with 429 before anything else runs. Applies the kit's and the
 * endpoints' migrations first.
 *
 * @example
 * const app = await merchantApp(utilityMerchant({ payTo, publicUrl }), {
 *   services: { db, config },
 *   facilitator: new HTTPFacilitatorClient({ url: config.payments.facilitatorUrl }),
 *   payments: config.payments,
 * });
 */
export async function merchantApp(
  catalogue: Merchant,
  options: MerchantAppOptions,
): Promise<Hono<MerchantEnv>> {
  const { db } = options.services;
  const ids = { settings: options.services.config.paymentIds, store: new AnswerStore(db, catalogue.payTo) };
  const merchant = withPaymentIds(catalogue, ids.settings);
  await migrate(db, KIT_MODULE, KIT_MIGRATIONS);
  await releaseOnce(db);
  await startTables(db, merchant.endpoints);
  const network = options.payments.network as `${string}:${string}`;
  const networks = paymentNetworks(options.payments).map((n) => n.network);
  const facilitator = new WatchedFacilitator(options.facilitator);
  const channels = options.services.config.channels;
  // The ways to pay its facilitators settle for it, channels among them where they can (payments/fronts.ts).
  const fronts = paymentFronts(
    merchant,
    resourceServers(merchant, db, facilitator, networks, channels),
    options.payments,
    channels,
    options.facilitator,
    (error, message) => facilitator.logRefusal(error, message),
  );
  const payment = fronts.middleware;
  const ledger = new PaymentLedger(db);
  const runner = {
    merchant: merchant.name,
    ledger,
    funds: options.funds ?? networkFunds(paymentNetworks(options.payments), options.payments.solanaRpcUrl),
    paymentRequired: async (c: Parameters<typeof paymentRequiredHeaders>[1], error: string) =>
      paymentRequiredHeaders((await fronts.pick()).httpServer, c, error),
    settlement: async (c: Parameters<typeof laterSettlement>[1]) =>
      laterSettlement((await fronts.pick()).httpServer, c),
    settling: options.settling,
  };
  const outcome = settleAndRecord(ledger);
  const access = periodAccess(db, merchant, network, options.services, runner.paymentRequired);
  const malformed = refuseMalformedPayment();
  const trouble = facilitatorTrouble(facilitator) as MiddlewareHandler<MerchantEnv>;
  const documents = hostDocuments(options);
  const mcp = () => documents(fronts.current()).mcp;

  const app = new Hono<MerchantEnv>();
  app.onError(onError);
  app.notFound(onNotFound);
  // First: every request's id, line and count, the 429s and 405s included (src/common/request-log.ts).
  app.use("*", requestLog({ service: merchant.name, limit: options.limit }));
  // Before the unpaid limit, which never refuses a health check. A chain to check when the host reads it.
  const readsChain = options.funds === undefined && merchant.endpoints.some(isGuarded);
  healthRoutes(
    app,
    paymentReadiness({
      db,
      facilitator,
      rpcUrl: readsChain ? options.payments.rpcUrl : undefined,
      // Solana's too, where the host is paid there (issue 86): its guarded routes read Solana balances.
      solanaRpcUrl:
        readsChain && merchant.solanaPayTo ? (options.payments.solanaRpcUrl ?? undefined) : undefined,
      channels: watchedChannels(merchant, channels, options.payments.asset.decimals),
    }),
  );
  // OpenAI's dialect around everything a path answers, the 405 and the 429 included.
  speakDialects(app, merchant);
  // Before CORS, which would have its answer copied: a flood's refusals cost as little as they can.
  if (options.limit) {
    const limited = limitUnpaid(options.limit, {
      carriesPayment: (request) => {
        const header = paymentHeader(request);
        return header !== undefined && malformedPayment(header) === undefined;
      },
      headers: { "Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": "Retry-After" },
    });
    // Its refusals are counted with the paid routes' (payments/counted.ts): it answers before any route.
    app.use("*", async function countedLimit(c, next) {
      // An MCP tool call is limited as the route's request it is dispatched as (mcp/server.ts), not twice.
      if (c.req.path === MCP_PATH && (await mcp().isToolCall(c.req.raw))) return next();
      let admitted = false;
      const answer = await limited(c, () => {
        admitted = true;
        return next();
      });
      if (!admitted) countUnpaidLimit(merchant.name);
      return answer;
    });
  }
  // Preflights are answered per path, with the methods it takes (answerEveryMethod, below).
  app.use("*", corsAnswers({ exposeHeaders: CORS.exposeHeaders }));

  // The documents of the way the host is paid now (with channels or without: payments/fronts.ts).
  const now = () => documents(fronts.current());
  // Unhealthy while the facilitator cannot be reached: the host cannot take a payment then.
  app.get("/healthz", async (c) => {
    const health = await facilitator.health();
    return c.json({ ok: health.reachable, facilitator: health }, health.reachable ? 200 : 503);
  });
  app.get("/openapi.json", (c) => c.body(now().openapiJson, 200, JSON_TYPE));
  app.get("/.well-known/x402", jsonOnce(wellKnownX402(merchant)));
  app.get("/llms.txt", (c) => c.text(now().llms));
  app.get("/favicon.ico", () => faviconResponse("ico"));
  app.get("/favicon.svg", () => faviconResponse("svg"));
  app.get("/", (c) => c.html(now().page));
  app.get("/docs", (c) => c.html(now().page));

  for (const route of merchant.free ?? []) {
    app.get(route.path, (c) => route.handler(c.req.raw, options.services));
  }
  const verified = paymentVerified() as MiddlewareHandler<MerchantEnv>;
  const head = headAsUnpaidGet(payment, trouble) as MiddlewareHandler<MerchantEnv>;
  const counted = countRefusals(merchant.name);
  for (const endpoint of merchant.endpoints) {
    const handler = paidHandler(endpoint, resourceUrl(merchant, endpoint), options.services, runner);
    const chain: MiddlewareHandler<MerchantEnv>[] = [
      // First: it sees every answer that ran no handler, the input's refusals included.
      counted,
      ...validateInput(endpoint, options.services),
      // Before the payment's checks: a HEAD's payment is never read.
      ...(endpoint.method === "GET" ? [head] : []),
      // A v1 payment made the v2 one it is, before anything reads the payment; the v1 402 body and receipt.
      v1Front(endpoint, fronts),
      malformed,
      ...(endpoint.accessSeconds ? [accessForPeriod(endpoint, access)] : []),
      answerOnce(endpoint, ids),
      outcome,
      trouble,
      payment,
      verified,
      claimPaymentId(endpoint, ids),
      handler,
    ];
    app.on(endpoint.method, endpoint.path, ...(chain as [MiddlewareHandler<MerchantEnv>]));
  }
  // A buyer's cooperative refund of its channel (channels/refund-route.ts), where channels may be offered.
  if (fronts.mayOfferChannels) {
    const refund = [counted, refundOnly(fronts, paymentHeader), head, malformed, trouble, payment];
    for (const { path } of refundPaths(options.payments))
      app.get(path, ...(refund as [MiddlewareHandler<MerchantEnv>]), refundHandled);
  }
  // MCP (free itself: a paid tool's payment travels inside the call), each call answered by the route above.
  app.post(MCP_PATH, (c) => mcp().answer(c.req.raw, (request) => app.fetch(request, c.env)));
  answerEveryMethod(app, {
    preflight: (allow) => {
      const preflight = cors({ ...CORS, allowMethods: [...allow] });
      return (c, next) => {
        c.header("Allow", allow.join(", "));
        return preflight(c, next);
      };
    },
  });
  return app;
}

/**
 * Resource servers of the merchant's schemes on each of its `networks` (a network or a list, the first the
 * host's own), paid through `facilitator`, with the same
 * scheme objects in each: a channel's reservation is remembered by its scheme, and a request that began
 * before the facilitators' `/supported` changed may end on the server made after (payments/fronts.ts).
 */
export function resourceServers(
  merchant: Merchant,
  db: Database,
  facilitator: FacilitatorClient,
  networks: string | readonly string[],
  channels: MerchantServices["config"]["channels"],
): () => MerchantResourceServer {
  const [first, ...more] = [networks].flat() as `${string}:${string}`[];
  const exact = new ExactEvmScheme();
  const svmExact = new ExactSvmServerScheme();
  const upto = new UptoEvmScheme();
  // One per host: its offers are kept for reuse across the servers made as its facilitators change.
  const receipts = merchant.receiptSigner && receiptsExtension(merchant.receiptSigner);
  // Only where a route sells a period: the challenge names the host's public origin, which it then must have.
  const signIn = merchant.endpoints.some((e) => e.accessSeconds) && signInExtension(merchant.publicUrl);
  const channel = new MerchantChannelScheme(merchant.payTo, {
    storage: new ChannelStore(db, merchant.payTo),
    withdrawDelay: channels.withdrawDelaySeconds,
    receiverAuthorizerSigner: merchant.channelAuthorizer,
  });
  return () => {
    const server = new MerchantResourceServer(facilitator);
    // One channel scheme for every network: its store holds each chain's channels, told apart by their ids.
    for (const network of [first, ...more] as `${string}:${string}`[])
      server.register(network, exact).register(network, upto).register(network, channel);
    // Solana's exact where the host has a Solana wallet (issue 86): the SDK's server scheme adds the
    // facilitator's fee payer to the requirements.
    if (merchant.solanaPayTo) server.register(SOLANA_NETWORK, svmExact);
    server
      .registerExtension(bazaarResourceServerExtension)
      .registerExtension(paymentIdentifierResourceServerExtension)
      .registerExtension(builderCodeResourceServerExtension);
    if (signIn) server.registerExtension(signIn);
    if (receipts) server.registerExtension(receipts);
    return server;
  };
}

/** The paths whose endpoints speak OpenAI's dialect, answered in it (error-dialect.ts). */
function speakDialects(app: Hono<MerchantEnv>, merchant: Merchant): void {
  const dialect = openAiErrors() as MiddlewareHandler<MerchantEnv>;
  const openAiPaths = new Set(
    [...merchant.endpoints, ...(merchant.free ?? [])]
      .filter((r) => r.errorDialect === "openai")
      .map((r) => r.path),
  );
  for (const path of openAiPaths) app.use(path, dialect);
}

/** What `c.json` names its answers. */
const JSON_TYPE = { "Content-Type": "application/json" };

/**
 * A document served as its JSON text, made once, as `c.json` would write it (the OpenAPI document's is made with
 * the host's documents): a crawler's fetch costs a copy, not a serialisation.
 */
function jsonOnce(value: unknown): (c: Context) => Response {
  const text = JSON.stringify(value);
  return (c) => c.body(text, 200, JSON_TYPE);
}

/** What a host publishes about itself, for one way it may be paid: built once per front. */
interface HostDocuments {
  openapi: ReturnType<typeof openApiDocument>;
  /** The OpenAPI document's JSON text, as `/openapi.json` serves it. */
  openapiJson: string;
  llms: string;
  page: string;
  mcp: MerchantMcp;
}

function hostDocuments(options: MerchantAppOptions): (front: PaymentFront) => HostDocuments {
  // Built when first asked for: a host has a front per set of ways it may offer (payments/fronts.ts), and
  // most hosts (and tests) only ever show one; each front's documents cost a host's start as much as its
  // routes.
  const built = new Map<PaymentFront, HostDocuments>();
  const build = (front: PaymentFront): HostDocuments => {
    const { merchant } = front;
    // Who runs the host and what agents should know: the configuration's, else the catalogue's (host-info.ts).
    const info = hostInfo(
      merchant,
      options.payments,
      hostInfoSettings(options.services.config, merchant.name),
    );
    const openapi = openApiDocument(merchant, options.payments, info);
    const documents = {
      openapi,
      openapiJson: JSON.stringify(openapi),
      llms: llmsTxt(merchant, info),
      page: renderReferencePage(openapi, { notice: options.notice }),
      mcp: new MerchantMcp(merchant),
    };
    built.set(front, documents);
    return documents;
  };
  return (front) => built.get(front) ?? build(front);
}

/** Databases whose crashed channel reservations were given back by this process (channels/storage.ts). */
const released = new WeakSet<Database>();

/** Gives back a crashed process's channel reservations, once per database a process opens. */
async function releaseOnce(db: Database): Promise<void> {
  if (released.has(db)) return;
  released.add(db);
  await releaseCrashedReservations(db);
}
