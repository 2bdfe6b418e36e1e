import type { FacilitatorClient } from "@x402/core/server";
import { x402ResourceServer } from "@x402/core/server";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { UptoEvmScheme } from "@x402/evm/upto/server";
import { bazaarResourceServerExtension } from "@x402/extensions/bazaar";
import { paymentMiddlewareFromHTTPServer } from "@x402/hono";
import { Hono, type MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { migrate } from "../common/db/index.ts";
import { onError, onNotFound } from "../common/http.ts";
import { type Merchant, type MerchantServices, resourceUrl } from "./catalogue.ts";
import { openAiErrors } from "./error-dialect.ts";
import { type MerchantEnv, validateInput } from "./input.ts";
import { KIT_MIGRATIONS, KIT_MODULE } from "./migrations.ts";
import { openApiDocument } from "./openapi.ts";
import { facilitatorTrouble, WatchedFacilitator } from "./payments/facilitator-watch.ts";
import { chainFunds } from "./payments/funds.ts";
import { type FundsReader, PaymentLedger } from "./payments/ledger.ts";
import { refuseMalformedPayment } from "./payments/malformed.ts";
import { paidHandler, settleAndRecord } from "./payments/paid-handler.ts";
import {
  laterSettlement,
  PublicUrlResourceServer,
  paymentRequiredHeaders,
} from "./payments/resource-server.ts";
import { renderReferencePage } from "./reference-page.ts";
import { type PaymentSettings, x402Routes } from "./routes.ts";
import { startTables } from "./tables.ts";
import { wellKnownX402 } from "./well-known.ts";

export interface MerchantAppOptions {
  services: MerchantServices;
  /** Where payments are verified and settled: `HTTPFacilitatorClient` or `inProcessClient(facilitator)`. */
  facilitator: FacilitatorClient;
  payments: PaymentSettings;
  /** The payer's balance, for endpoints that reserve funds; default: read from `payments.rpcUrl`. */
  funds?: FundsReader;
  /** A banner over the host's pages when its money is not real (the devnet demo's). */
  notice?: string;
}

/**
 * A merchant's HTTP host, built from its catalogue alone: per endpoint, input validation (400 before any
 * payment), a 400 for a `PAYMENT-SIGNATURE` that cannot be a payment (payments/malformed.ts), the x402
 * payment middleware (exact and upto schemes, Bazaar extension) wrapped by the ledger's record
 * of the outcome, and the paid handler (one run per payment, funds reserved, writes in a transaction
 * that commits with the settlement: payments/paid-handler.ts), refusals in the endpoint's dialect
 * (error-dialect.ts); the merchant's free routes; and the free documents `/openapi.json`, `/` and `/docs`
 * (reference page), `/.well-known/x402`, `/healthz`. Applies the kit's and the
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
  merchant: Merchant,
  options: MerchantAppOptions,
): Promise<Hono<MerchantEnv>> {
  const { db } = options.services;
  await migrate(db, KIT_MODULE, KIT_MIGRATIONS);
  await startTables(db, merchant.endpoints);
  const network = options.payments.network as `${string}:${string}`;
  const facilitator = new WatchedFacilitator(options.facilitator);
  const resourceServer = new x402ResourceServer(facilitator)
    .register(network, new ExactEvmScheme())
    .register(network, new UptoEvmScheme())
    .registerExtension(bazaarResourceServerExtension);
  const httpServer = new PublicUrlResourceServer(
    resourceServer,
    x402Routes(merchant, options.payments),
    merchant.publicUrl,
    new Set(merchant.endpoints.flatMap((e) => e.secretParams ?? [])),
  );
  const payment = paymentMiddlewareFromHTTPServer(httpServer);
  const ledger = new PaymentLedger(db);
  const runner = {
    ledger,
    funds:
      options.funds ?? chainFunds(options.payments.rpcUrl, options.payments.asset.address as `0x${string}`),
    paymentRequired: (c: Parameters<typeof paymentRequiredHeaders>[1], error: string) =>
      paymentRequiredHeaders(httpServer, c, error),
    settlement: (c: Parameters<typeof laterSettlement>[1]) => laterSettlement(httpServer, c),
  };
  const outcome = settleAndRecord(ledger);
  const malformed = refuseMalformedPayment();
  const trouble = facilitatorTrouble(facilitator) as MiddlewareHandler<MerchantEnv>;

  const app = new Hono<MerchantEnv>();
  app.onError(onError);
  app.notFound(onNotFound);
  // Browsers pay too: they must see the payment headers and may send the signature.
  app.use(
    "*",
    cors({
      origin: "*",
      allowHeaders: ["Content-Type", "PAYMENT-SIGNATURE", "X-PAYMENT"],
      exposeHeaders: ["PAYMENT-REQUIRED", "PAYMENT-RESPONSE"],
    }),
  );

  const openapi = openApiDocument(merchant, options.payments);
  const page = renderReferencePage(openapi, { notice: options.notice });
  // Unhealthy while the facilitator cannot be reached: the host cannot take a payment then.
  app.get("/healthz", async (c) => {
    const health = await facilitator.health();
    return c.json({ ok: health.reachable, facilitator: health }, health.reachable ? 200 : 503);
  });
  app.get("/openapi.json", (c) => c.json(openapi));
  app.get("/.well-known/x402", (c) => c.json(wellKnownX402(merchant)));
  app.get("/", (c) => c.html(page));
  app.get("/docs", (c) => c.html(page));

  for (const route of merchant.free ?? []) {
    app.get(route.path, (c) => route.handler(c.req.raw, options.services));
  }
  const dialect = openAiErrors();
  for (const endpoint of merchant.endpoints) {
    const handler = paidHandler(endpoint, resourceUrl(merchant, endpoint), options.services, runner);
    const chain: MiddlewareHandler<MerchantEnv>[] = [
      ...(endpoint.errorDialect === "openai" ? [dialect as MiddlewareHandler<MerchantEnv>] : []),
      ...validateInput(endpoint, options.services),
      malformed,
      outcome,
      trouble,
      payment,
      handler,
    ];
    app.on(endpoint.method, endpoint.path, ...(chain as [MiddlewareHandler<MerchantEnv>]));
  }
  return app;
}
