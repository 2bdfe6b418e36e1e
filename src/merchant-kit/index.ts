/**
 * The merchant kit: what a merchant is built from (a catalogue of endpoints) and what builds its HTTP
 * host from it (routes, payments, OpenAPI, reference page, discovery, listings). A new merchant needs
 * `defineEndpoint` for each paid call and `merchantApp` to serve them; see docs/platform.md.
 */
export { type MerchantAppOptions, merchantApp } from "./app.ts";
export {
  type AnyEndpoint,
  aliasOf,
  defineEndpoint,
  type Effect,
  type Endpoint,
  type HandlerContext,
  type HttpMethod,
  type Merchant,
  type MerchantServices,
  missingAliasPaths,
  type PriceUsd,
  resourceUrl,
  type Tables,
} from "./catalogue.ts";
export { listingsNdjson, listingsOf } from "./listings.ts";
export { openApiDocument } from "./openapi.ts";
export { type FundsReader, PaymentLedger } from "./payments/index.ts";
export { priceToAtomic } from "./price.ts";
export { type PaymentSettings, x402Routes } from "./routes.ts";
