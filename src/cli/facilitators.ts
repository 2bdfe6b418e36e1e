import { openAnalytics } from "../analytics/duckdb.ts";
import { FacilitatorRegistry } from "../chain/facilitators.ts";
import { UsageError } from "../common/errors.ts";
import { listCandidates } from "../indexer/index.ts";
import { configFrom } from "./flag-values.ts";
import type { Flags } from "./flags.ts";

/**
 * `facilitators`: the known facilitator signers, one JSON object per line.
 * `facilitators --candidates`: the senders of EIP-3009 settlements the indexer did not count as x402
 * payments, with counts, from the analytics database; one JSON object per line, most settlements first.
 */
export async function runFacilitators(args: string[], flags: Flags): Promise<number> {
  if (args.length > 0) throw new UsageError("facilitators takes no arguments");
  const registry = FacilitatorRegistry.base();
  const lines: object[] = [];
  if (flags.candidates) {
    const analytics = await openAnalytics(configFrom(flags));
    try {
      lines.push(...(await listCandidates(analytics, registry)));
    } finally {
      analytics.close();
    }
  } else {
    for (const s of registry.list()) {
      lines.push({
        facilitator: s.facilitator,
        name: s.name,
        address: s.address,
        since: new Date(s.since * 1000).toISOString().slice(0, 10),
      });
    }
  }
  process.stdout.write(lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
  return 0;
}
