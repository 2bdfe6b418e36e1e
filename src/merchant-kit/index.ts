/**
 * The merchant kit's face: what a merchant, the services, the demo and the CLI build merchants with. A merchant
 * declares its catalogue (`endpoint.ts`) and the kit makes it a paid x402 host: routes, payments and channels,
 * OpenAPI and discovery, MCP, SSRF-safe fetching, the upstream client and the language upstreams.
 */

export { type MerchantAppOptions, merchantApp } from "./app.ts";
export { type ChannelSchedule, openChannels, walletSchedules } from "./channels/index.ts";
export {
  type AnyEndpoint,
  aliasOf,
  defineEndpoint,
  type Endpoint,
  type ErrorStatus,
  type Errors,
  type ExactTransfer,
  type FreeRoute,
  type HandlerContext,
  isMeteredOnly,
  type Merchant,
  missingAliasPaths,
  offersChannels,
  type PriceUsd,
  pathParams,
  precheckOf,
  type Tables,
  withChannels,
} from "./endpoint.ts";
export { openAiErrorBody } from "./error-dialect.ts";
export { faviconResponse } from "./favicon.ts";
export {
  abortable,
  allowListPolicy,
  blockedRange,
  createSafeFetch,
  FETCH_ERRORS,
  FetchError,
  type FetchPolicy,
  fetchText,
  isFetchError,
  parseTarget,
  type ResolvedAddress,
  type ResolvedPolicy,
  resolvePolicy,
  type Target,
  type VettedAddresses,
  vetTarget,
} from "./fetch/index.ts";
export { type HostInfo, hostInfo, hostInfoSettings, payingGuidance } from "./host-info.ts";
export {
  type ChatMessage,
  type ChatRequest,
  type ChatStreamEvent,
  type LanguageProvider,
  type LanguageSettings,
  languageProvider,
  openaiProvider,
} from "./language/index.ts";
export { listingsNdjson } from "./listings.ts";
export { llmsTxtOfHosts } from "./llms-txt.ts";
export { callPaidTool, connectMcp } from "./mcp/client.ts";
export { paymentRequiredOf } from "./mcp/meta.ts";
export { toolNameOf } from "./mcp/tools.ts";
export { openApiDocument } from "./openapi.ts";
export { combinedOpenApi } from "./openapi-combined.ts";
export {
  FailoverFacilitator,
  type FailoverOptions,
  facilitatorAuthHeaders,
  httpFacilitator,
  networkAuthorizationReader,
} from "./payments/facilitators/index.ts";
export { SETTLING_MAX_MS } from "./payments/paid-handler.ts";
export { storedReceiptKey } from "./payments/receipts/index.ts";
export { facilitatorEnvPrefix } from "./payments/settings.ts";
export { type StreamEnding, Streamed } from "./payments/streamed.ts";
export { priceToAtomic } from "./price.ts";
export { paymentNetworks, REFUND_PATH } from "./routes.ts";
export {
  countUpstream,
  DEFAULT_UPSTREAM_MAX_BYTES,
  DEFAULT_UPSTREAM_TIMEOUT_MS,
  failure,
  noAnswerOutcome,
  notConfigured,
  providerErrors,
  readBytes,
  readText,
  retryAfterSeconds,
  statusOutcome,
  upstreamFetch,
  upstreamJson,
} from "./upstream.ts";
