/**
 * Keeps the analytics database's listings fresh while the indexer runs: one read of the discovery endpoint at
 * start, then one every `refreshMs` in --follow. A failed refresh is reported and the indexer goes on:
 * chain data matters more than descriptions.
 */
import type { Listing } from "../analytics/listings.ts";
import { sleep } from "../common/sleep.ts";
import { fetchListings } from "./discovery.ts";
import type { IndexerEvent } from "./events.ts";

/** Listings are refreshed this often in --follow: one hour. */
export const DEFAULT_DISCOVERY_REFRESH_MS = 60 * 60 * 1000;

export interface ListingsRefreshOptions {
  url: string;
  refreshMs?: number;
  fetch?: typeof fetch;
  /** Keep refreshing until stopped (else one refresh). */
  follow: boolean;
  /** Writes listings into the analytics database (serialized with the indexer's commits). */
  write: (listings: readonly Listing[]) => Promise<void>;
  emit: (event: IndexerEvent) => void;
  signal?: AbortSignal;
}

export function startListingsRefresh(options: ListingsRefreshOptions): { stop(): Promise<void> } {
  const stopper = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stopper.signal]) : stopper.signal;
  const refresh = async () => {
    try {
      const result = await fetchListings({ url: options.url, fetch: options.fetch, signal });
      await options.write(result.listings);
      options.emit({
        type: "listings",
        listings: result.listings.length,
        items: result.items,
        pages: result.pages,
      });
    } catch (error) {
      if (!signal.aborted) options.emit({ type: "listings_failed", reason: (error as Error).message });
    }
  };
  const loop = (async () => {
    await refresh();
    while (options.follow && !signal.aborted) {
      await sleep(options.refreshMs ?? DEFAULT_DISCOVERY_REFRESH_MS, signal);
      if (!signal.aborted) await refresh();
    }
  })();
  return {
    async stop() {
      // A one-shot run waits for its one refresh; --follow stops the periodic one.
      if (options.follow) stopper.abort();
      await loop;
    },
  };
}
