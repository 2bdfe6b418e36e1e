import { blockedRange } from "./address.ts";
import { FetchError } from "./fetch-errors.ts";
import type { ResolvedAddress, ResolvedPolicy } from "./policy.ts";
import type { Target } from "./target.ts";

/** At least one address, all of them checked. */
export type VettedAddresses = [ResolvedAddress, ...ResolvedAddress[]];

/**
 * The addresses a target may be connected to: the literal, or every address its name resolves to
 * (one lookup). A host with any refused address is refused as a whole: a name that answers both a
 * public and a private address is either misconfigured or an attack, and we cannot control which
 * one a connection attempt would pick.
 */
export async function vetTarget(target: Target, policy: ResolvedPolicy): Promise<VettedAddresses> {
  const addresses: VettedAddresses = target.literal
    ? [{ address: target.literal, family: target.literal.includes(":") ? 6 : 4 }]
    : await resolve(target.host, policy);
  // A host name the operator allowed is trusted with whatever it resolves to.
  if (!target.literal && policy.isAllowedHost(target.host)) return addresses;
  for (const { address } of addresses) {
    const range = blockedRange(address);
    if (range !== null && !policy.isAllowed(address)) {
      const via = target.literal ? "" : ` (resolved from ${target.host})`;
      throw new FetchError("ssrf_blocked", `refusing to fetch ${address}${via}: ${range} address`);
    }
  }
  return addresses;
}

async function resolve(host: string, policy: ResolvedPolicy): Promise<VettedAddresses> {
  let addresses: ResolvedAddress[];
  try {
    addresses = await policy.lookup(host);
  } catch (error) {
    throw new FetchError("dns_failed", `cannot resolve ${host}`, { cause: error });
  }
  const [first, ...rest] = addresses;
  if (!first) throw new FetchError("dns_failed", `${host} has no address`);
  return [first, ...rest];
}
