import { AppError } from "../../common/errors.ts";
import type { Errors } from "../endpoint.ts";

/**
 * Why a fetch of a caller's URL failed. The codes are stable: endpoints and clients match on them.
 * - `bad_url`: not an absolute http(s) URL, credentials in it, or a port the Fetch standard blocks.
 * - `ssrf_blocked`: the host is, or resolves to, an address the policy refuses (private, loopback...).
 * - `dns_failed`: the host name does not resolve.
 * - `fetch_failed`: connection, TLS or protocol failure.
 * - `too_many_redirects`, `too_large`, `timeout`: a limit of the policy was reached.
 */
export type FetchErrorCode =
  | "bad_url"
  | "ssrf_blocked"
  | "dns_failed"
  | "fetch_failed"
  | "too_many_redirects"
  | "too_large"
  | "timeout";

/**
 * The caller's URL is the caller's input, so every failure is a 4xx: 400 when the URL itself is
 * refused before any connection, 422 when it was acceptable but fetching it gave no usable answer.
 * Nothing here is a 5xx: our service did not fail, and the platform charges nothing for any of them.
 */
const STATUS: Record<FetchErrorCode, 400 | 422> = {
  bad_url: 400,
  ssrf_blocked: 400,
  dns_failed: 422,
  fetch_failed: 422,
  too_many_redirects: 422,
  too_large: 422,
  timeout: 422,
};

/** A refused or failed fetch of a caller's URL; `code` is for machines, `message` for people. */
export class FetchError extends AppError {
  override readonly code: FetchErrorCode;

  constructor(code: FetchErrorCode, message: string, options?: { cause?: unknown }) {
    super(STATUS[code], code, message);
    this.code = code;
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

export function isFetchError(error: unknown, code?: FetchErrorCode): error is FetchError {
  return error instanceof FetchError && (code === undefined || error.code === code);
}

/** The refusals of an endpoint that fetches a caller's URL, for its `errors` (catalogue.ts). */
export const FETCH_ERRORS = {
  400: "The URL is refused before any connection (bad_url, ssrf_blocked): not an absolute http(s) URL, credentials in it, a blocked port, or a host that is or resolves to a private, loopback or otherwise non-public address.",
  422: "Fetching the URL gave no usable answer (dns_failed, fetch_failed, too_many_redirects, too_large, timeout).",
} as const satisfies Errors;
