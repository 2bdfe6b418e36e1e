import { type FetchPolicy, type ResolvedPolicy, resolvePolicy } from "../../../merchant-kit/index.ts";
import { locateIp } from "../lookup/geo-engine.ts";

/** Where a server is, as the geo engine knows it; `null` when it does not (or the address is not public). */
export interface ServerLocation {
  country: string;
  region: string | null;
  city: string | null;
  timezone: string | null;
  ll: [number, number] | null;
}

/**
 * What the probe endpoints may reach and how. `policy` is the platform's fetch policy (the SSRF rules):
 * tests open it for their 127.0.0.1 fixtures with `allowAddresses`, inject a resolver with `lookup` and
 * trust a self-signed fixture with `ca`; its `timeoutMs` is the probe's whole budget (default 10 s).
 */
export interface ProbeOptions {
  policy?: FetchPolicy;
  /** Locates a server address (default: the geo engine of `/api/geo`). */
  locate?: (ip: string) => Promise<ServerLocation | null>;
}

export interface ResolvedProbeOptions {
  policy: FetchPolicy;
  resolved: ResolvedPolicy;
  locate: (ip: string) => Promise<ServerLocation | null>;
}

export function resolveProbeOptions(options: ProbeOptions = {}): ResolvedProbeOptions {
  const policy = options.policy ?? {};
  return { policy, resolved: resolvePolicy(policy), locate: options.locate ?? locateServer };
}

/**
 * The geo engine refuses private addresses and answers 404 for unknown ones; for a probe's server both
 * only mean "no location", never a failed probe.
 */
export async function locateServer(ip: string): Promise<ServerLocation | null> {
  try {
    const { country, region, city, timezone, ll } = await locateIp(ip);
    return { country, region, city, timezone, ll };
  } catch {
    return null;
  }
}
