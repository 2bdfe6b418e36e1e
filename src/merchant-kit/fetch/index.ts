/**
 * Fetching URLs that callers give us, without letting them reach our network (SSRF guard).
 * Rules and decisions: docs/platform.md, "Fetching callers' URLs".
 */
export { abortable } from "../../common/abortable.ts";
export { blockedRange } from "./address.ts";
export { FETCH_ERRORS, FetchError, type FetchErrorCode, isFetchError } from "./fetch-errors.ts";
export { type FetchTextResult, fetchText } from "./fetch-text.ts";
export {
  allowListPolicy,
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_REDIRECTS,
  DEFAULT_TIMEOUT_MS,
  type FetchPolicy,
  type Lookup,
  type ResolvedAddress,
  type ResolvedPolicy,
  resolvePolicy,
  systemLookup,
} from "./policy.ts";
export {
  createSafeFetch,
  type RedirectHop,
  type SafeFetch,
  type SafeFetchInit,
  type SafeFetchResult,
  safeFetch,
} from "./safe-fetch.ts";
// For probes that open their own sockets (uptime report) under the same rules.
export { parseTarget, type Target } from "./target.ts";
export { type VettedAddresses, vetTarget } from "./vet.ts";
