import type { FacilitatorClient } from "@x402/core/server";
import { x402ResourceServer } from "@x402/core/server";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { bazaarResourceServerExtension } from "@x402/extensions/bazaar";
import { paymentMiddleware } from "@x402/hono";
import { Hono, type MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { migrate } from "../common/db/index.ts";
import { onError, onNotFound } from "../common/http.ts";
import { type Merchant, type MerchantServices, resourceUrl } from "./catalogue.ts";
import { type MerchantEnv, validateInput } from "./input.ts";
import { PLATFORM_MIGRATIONS } from "./migrations.ts";
import { openApiDocument } from "./openapi.ts";
import { paidHandler } from "./payments/paid-handler.ts";
import { ReplayLocks } from "./payments/replay-lock.ts";
import { renderReferencePage } from "./reference-page.ts";
import { type PaymentSettings, x402Routes } from "./routes.ts";
import { wellKnownX402 } from "./well-known.ts";

export interface MerchantAppOptions {
  services: MerchantServices;
  /** Where payments are verified and settled: `HTTPFacilitatorClient` or `inProcessClient(facilitator)`. */
  facilitator: FacilitatorClient;
  payments: PaymentSettings;
}

/**
 * A merchant's HTTP host, built from its catalogue alone: per endpoint, input validation (400 before any
 * payment), the x402 payment middleware (exact scheme, Bazaar extension), the replay lock and the handler;
 * and the free documents `/openapi.json`, `/` and `/docs` (reference page), `/.well-known/x402`, `/healthz`.
 * Applies the platform's migrations first.
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
  await migrate(options.services.db, "platform", PLATFORM_MIGRATIONS);
  const locks = new ReplayLocks(options.services.db);
  const resourceServer = new x402ResourceServer(options.facilitator)
    .register(options.payments.network as `${string}:${string}`, new ExactEvmScheme())
    .registerExtension(bazaarResourceServerExtension);
  const payment = paymentMiddleware(x402Routes(merchant, options.payments), resourceServer);

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
  const page = renderReferencePage(openapi);
  app.get("/healthz", (c) => c.json({ ok: true }));
  app.get("/openapi.json", (c) => c.json(openapi));
  app.get("/.well-known/x402", (c) => c.json(wellKnownX402(merchant)));
  app.get("/", (c) => c.html(page));
  app.get("/docs", (c) => c.html(page));

  for (const endpoint of merchant.endpoints) {
    const handler = paidHandler(endpoint, resourceUrl(merchant, endpoint), options.services, locks);
    const chain: MiddlewareHandler<MerchantEnv>[] = [...validateInput(endpoint), payment, handler];
    app.on(endpoint.method, endpoint.path, ...(chain as [MiddlewareHandler<MerchantEnv>]));
  }
  return app;
}
