import type { LookupAddress, LookupOptions } from "node:dns";
import { Agent } from "undici";
import type { ResolvedPolicy } from "./policy.ts";
import type { VettedAddresses } from "./vet.ts";

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * An undici Agent whose sockets can only reach addresses we vetted. Its `connect.lookup` replaces
 * DNS with the answers `pin` recorded, so the connection goes to the checked address with no second
 * lookup (no DNS rebinding window), while the URL keeps its host name: `Host` and TLS SNI stay the
 * original name and certificates are verified against it. A name nobody pinned fails to connect.
 */
export interface PinnedAgent {
  agent: Agent;
  pin(host: string, addresses: VettedAddresses): void;
}

export function createPinnedAgent(policy: ResolvedPolicy): PinnedAgent {
  const pins = new Map<string, VettedAddresses>();
  const lookup = (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    const addresses = pins.get(
      hostname
        .replace(/^\[(.*)\]$/, "$1")
        .replace(/\.$/, "")
        .toLowerCase(),
    );
    if (!addresses) {
      const error: NodeJS.ErrnoException = new Error(`${hostname} was not vetted`);
      error.code = "ENOTFOUND";
      callback(error, "");
      return;
    }
    // Node asks for all addresses when it races families (autoSelectFamily), for one otherwise.
    const [first] = addresses;
    if (options.all)
      callback(
        null,
        addresses.map(({ address, family }) => ({ address, family })),
      );
    else callback(null, first.address, first.family);
  };
  const agent = new Agent({
    connect: { lookup, ...(policy.ca === undefined ? {} : { ca: policy.ca }) },
    // One caller's fetch owns this agent; nothing is worth keeping alive after it.
    keepAliveTimeout: 1_000,
  });
  return { agent, pin: (host, addresses) => pins.set(host, addresses) };
}
