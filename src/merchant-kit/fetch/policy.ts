import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import { compileAllowList } from "./address.ts";

/** One address a host name resolves to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Resolves a host name to every address it has. Injected in tests to simulate DNS (including
 * rebinding) without a network; the default is the system resolver (`dns.lookup`, all addresses).
 */
export type Lookup = (hostname: string) => Promise<ResolvedAddress[]>;

/**
 * What a fetch of a caller's URL may do. Every field is optional; `resolvePolicy` applies the
 * defaults in this one place.
 */
export interface FetchPolicy {
  /**
   * Addresses or CIDRs treated as public even though they are private/loopback/... The door for
   * tests' 127.0.0.1 fixtures; production leaves it empty.
   */
  allowAddresses?: readonly string[];
  /** A predicate form of `allowAddresses`; an address passes when either says yes. */
  allowAddress?: (ip: string) => boolean;
  /**
   * Host names whose addresses are all allowed, whatever they are (exact names, lower case). The door
   * an operator opens on purpose for services on its own network (`X402M_FETCH_ALLOW`); cloud metadata
   * names stay refused.
   */
  allowHosts?: readonly string[];
  /** Resolver of host names (default: `dns.lookup(host, {all: true})`). */
  lookup?: Lookup;
  /** Follow 3xx responses (re-checking each hop) or return them as they are. Default true. */
  followRedirects?: boolean;
  /** Redirects followed before `too_many_redirects`. Default 5. */
  maxRedirects?: number;
  /** Response body bytes (after decompression) before `too_large`. Default 5 MB. */
  maxBytes?: number;
  /** Total time in ms, from the first lookup to the last body byte, before `timeout`. Default 10 s. */
  timeoutMs?: number;
  /** Trusted CA certificates (PEM). Replaces the system roots: meant for tests' self-signed fixtures. */
  ca?: string | Buffer | ReadonlyArray<string | Buffer>;
  /** `User-Agent` sent unless the request sets one. */
  userAgent?: string;
}

export interface ResolvedPolicy {
  isAllowed: (ip: string) => boolean;
  isAllowedHost: (host: string) => boolean;
  lookup: Lookup;
  followRedirects: boolean;
  maxRedirects: number;
  maxBytes: number;
  timeoutMs: number;
  ca: string | Buffer | Array<string | Buffer> | undefined;
  userAgent: string;
}

export const DEFAULT_MAX_REDIRECTS = 5;
export const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_USER_AGENT = "x402-merchants/0.1";

/** The system resolver, every address, in the order the system gives them. */
export const systemLookup: Lookup = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

export function resolvePolicy(policy: FetchPolicy = {}): ResolvedPolicy {
  const listed = compileAllowList(policy.allowAddresses ?? []);
  const predicate = policy.allowAddress;
  return {
    isAllowed: predicate ? (ip) => listed(ip) || predicate(ip) : listed,
    isAllowedHost: (
      (hosts) => (host: string) =>
        hosts.has(host)
    )(new Set((policy.allowHosts ?? []).map((h) => h.toLowerCase().replace(/\.$/, "")))),
    lookup: policy.lookup ?? systemLookup,
    followRedirects: policy.followRedirects ?? true,
    maxRedirects: nonNegative("maxRedirects", policy.maxRedirects ?? DEFAULT_MAX_REDIRECTS),
    maxBytes: nonNegative("maxBytes", policy.maxBytes ?? DEFAULT_MAX_BYTES),
    timeoutMs: positive("timeoutMs", policy.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    ca: copyCa(policy.ca),
    userAgent: policy.userAgent ?? DEFAULT_USER_AGENT,
  };
}

function copyCa(ca: FetchPolicy["ca"]): ResolvedPolicy["ca"] {
  if (ca === undefined || typeof ca === "string" || Buffer.isBuffer(ca)) return ca;
  return [...(ca as ReadonlyArray<string | Buffer>)];
}

function nonNegative(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 0)
    throw new TypeError(`fetch policy: ${name} must be an integer >= 0`);
  return value;
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`fetch policy: ${name} must be > 0`);
  return value;
}

/**
 * The policy an operator's allow-list gives (`X402M_FETCH_ALLOW`): IP addresses and CIDR ranges open
 * those addresses, other entries open a host name. Throws a TypeError naming a malformed entry.
 */
export function allowListPolicy(
  entries: readonly string[],
): Pick<FetchPolicy, "allowAddresses" | "allowHosts"> {
  const allowAddresses: string[] = [];
  const allowHosts: string[] = [];
  for (const entry of entries) {
    if (isIP(entry.split("/")[0] ?? "") !== 0) allowAddresses.push(entry);
    else if (HOST_NAME.test(entry)) allowHosts.push(entry.toLowerCase());
    else
      throw new TypeError(`${JSON.stringify(entry)} is neither an IP address, a CIDR range nor a host name`);
  }
  compileAllowList(allowAddresses);
  return { allowAddresses, allowHosts };
}

/** A DNS host name: dot-separated labels of letters, digits and inner hyphens. */
const HOST_NAME =
  /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;
