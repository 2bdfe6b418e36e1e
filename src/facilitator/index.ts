/**
 * The project's x402 v2 facilitator (Base: exact with EIP-3009 or Permit2, upto with Permit2,
 * batch-settlement channels): verify, settle at most once per authorization and per channel action, a
 * Bazaar, over HTTP. See docs/facilitator.md.
 */

export {
  type ApiKey,
  addKey,
  countLiveKeys,
  decideOpen,
  isLoopback,
  listKeys,
  revokeKey,
} from "./access/index.ts";
export type { BazaarOutcome, DiscoveryQuery } from "./bazaar.ts";
export { ChainMismatchError, type OnNewChain } from "./chain-identity.ts";
export type { Origin } from "./channels/actions.ts";
export type { AuthorizerTable, ChannelAuthorizers } from "./channels/authorizers.ts";
export { inProcessClient } from "./client.ts";
export * as reasons from "./error-codes.ts";
export { createFacilitator, type Facilitator, type FacilitatorOptions } from "./facilitator.ts";
export { addReadinessChecks, chainReadiness } from "./http.ts";
export { FACILITATOR_MIGRATIONS } from "./migrations.ts";
export type { ResolveSummary } from "./resolve-pending.ts";
export { facilitatorOfChains } from "./several-chains.ts";
export { svmReadiness } from "./svm/readiness.ts";
