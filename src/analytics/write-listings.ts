/**
 * Writes discovered listings into the store the report reads: upserted by (pay_to, resource, method),
 * so a refresh updates prices and descriptions; listings the catalogue drops are kept (the table also
 * holds imported listings, and a merchant's old endpoints still describe it). Every listing's payTo
 * becomes a merchant, as the import does; names stay NULL so reports use the listings' host.
 */

import type { Listing } from "../indexer/discovery.ts";
import type { Store } from "./duckdb.ts";
import { sqlHost } from "./listings.ts";
import { bumpDataVersion } from "./migrations.ts";

export async function upsertListings(store: Store, listings: readonly Listing[]): Promise<void> {
  if (listings.length === 0) return;
  await store.run(
    "CREATE TEMP TABLE IF NOT EXISTS stage_listings AS SELECT * EXCLUDE (host) FROM listings LIMIT 0",
  );
  await store.transaction(async () => {
    await store.run("DELETE FROM stage_listings");
    const appender = await store.connection.createAppender("stage_listings", null, "temp");
    try {
      for (const l of listings) {
        appender.appendVarchar(l.payTo);
        appender.appendVarchar(l.resource);
        appender.appendVarchar(l.method);
        appender.appendDouble(l.priceUsd);
        appender.appendVarchar(l.description);
        appender.endRow();
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
    // One row per key, so the upsert never meets its own key twice in one statement.
    await store.run(`INSERT OR REPLACE INTO listings
      SELECT *, ${sqlHost("resource")} FROM stage_listings QUALIFY row_number() OVER (PARTITION BY pay_to, resource, method) = 1`);
    await store.run("INSERT OR IGNORE INTO merchants (address) SELECT DISTINCT pay_to FROM stage_listings");
    await bumpDataVersion(store);
  });
}
