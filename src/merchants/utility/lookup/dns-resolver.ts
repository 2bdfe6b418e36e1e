import { Resolver } from "node:dns/promises";
import { UpstreamError } from "../../../common/errors.ts";
import type { Errors } from "../../../merchant-kit/index.ts";

/**
 * Which DNS servers the lookup endpoints ask, and how patiently. Production should name public recursive
 * resolvers (e.g. `["1.1.1.1", "8.8.8.8"]`): the host's own resolver may answer private split-horizon
 * names. Tests point it at a fixture server on 127.0.0.1.
 */
export interface DnsOptions {
  /** `ip` or `ip:port` entries as `Resolver.setServers` takes them; empty or absent: the system's. */
  servers?: readonly string[];
  /** Per-try timeout of one query. Default 2,500 ms. */
  timeoutMs?: number;
  /** Tries per server. Default 2. */
  tries?: number;
  /** Time budget of all DKIM selector probes together. Default 3,000 ms. */
  dkimBudgetMs?: number;
}

export const DEFAULT_DNS_TIMEOUT_MS = 2_500;
export const DEFAULT_DNS_TRIES = 2;
export const DEFAULT_DKIM_BUDGET_MS = 3_000;

/** A resolver of its own per request, so cancelling one request's queries cancels no one else's. */
export function createResolver(options: DnsOptions, signal?: AbortSignal): Resolver {
  const resolver = new Resolver({
    timeout: options.timeoutMs ?? DEFAULT_DNS_TIMEOUT_MS,
    tries: options.tries ?? DEFAULT_DNS_TRIES,
  });
  if (options.servers && options.servers.length > 0) resolver.setServers([...options.servers]);
  signal?.addEventListener("abort", () => resolver.cancel(), { once: true });
  return resolver;
}

/** How one query ended. */
export type QueryOutcome<T> =
  | { kind: "answer"; records: T[] }
  /** The name exists, without records of this type (NOERROR, no answer). */
  | { kind: "nodata" }
  | { kind: "nxdomain" }
  /** No usable answer: timeout, SERVFAIL, refused, unreachable server. `code` is c-ares's. */
  | { kind: "failed"; code: string };

/** Runs one query and sorts its ending into the four kinds a report needs. */
export async function query<T>(run: () => Promise<T[]>): Promise<QueryOutcome<T>> {
  try {
    const records = await run();
    return records.length === 0 ? { kind: "nodata" } : { kind: "answer", records };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "EUNKNOWN";
    if (code === "ENODATA") return { kind: "nodata" };
    if (code === "ENOTFOUND") return { kind: "nxdomain" };
    return { kind: "failed", code };
  }
}

export function recordsOf<T>(outcome: QueryOutcome<T>): T[] {
  return outcome.kind === "answer" ? outcome.records : [];
}

/** The refusals of an endpoint that asks the DNS servers (`dnsUnavailable`), for its `errors`. */
export const DNS_ERRORS = {
  502: "The DNS servers failed to answer about the name (dns_failed: SERVFAIL, refused, unreachable).",
  504: "The DNS servers did not answer in time (dns_timeout).",
} as const satisfies Errors;

/** The error for a name no query got an answer about: never charged. */
export function dnsUnavailable(name: string, codes: readonly string[]): UpstreamError {
  const timedOut = codes.every((c) => c === "ETIMEOUT" || c === "ECANCELLED");
  return timedOut
    ? new UpstreamError(`DNS servers did not answer in time for ${name}`, "dns_timeout", 504)
    : new UpstreamError(
        `DNS lookup of ${name} failed (${[...new Set(codes)].join(", ")})`,
        "dns_failed",
        502,
      );
}

/** TXT answers come in 255-byte chunks; a record's value is their concatenation (RFC 7208 3.3). */
export function joinTxt(records: string[][]): string[] {
  return records.map((chunks) => chunks.join(""));
}
