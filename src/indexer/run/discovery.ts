/** The listings refresh beside a run (`../discovery-refresh.ts`), when it is given a discovery endpoint. */
import { upsertListings } from "../../analytics/listings.ts";
import { startListingsRefresh } from "../discovery-refresh.ts";
import type { RunTools } from "./run.ts";

export function startDiscovery(tools: RunTools): { stop(): Promise<void> } | undefined {
  const { options, analytics } = tools;
  if (!options.discovery) return undefined;
  return startListingsRefresh({
    ...options.discovery,
    follow: options.follow ?? false,
    // Through the run's serial connection: a refresh must not interleave with a commit.
    write: (listings) => tools.serial.run(() => upsertListings(analytics, listings)),
    emit: tools.emit,
    signal: tools.signal,
  });
}
