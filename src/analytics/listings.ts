/**
 * Listings: a merchant's paid endpoints as reports show them (docs/report.md, "Listings": resource, price_usd,
 * description), kept in the `listings` table. They come from three places, all as `Listing`: a Bazaar
 * discovery feed (the indexer), import files (`listing` records) and the project's own merchant
 * catalogues (`listingsOf` in src/merchant-kit).
 */
import { bumpDataVersion } from "./migrations.ts";
import type { Sql } from "./sql.ts";
import { sqlHost } from "./sql-host.ts";

/** One paid endpoint of one merchant. */
export interface Listing {
  /** The merchant's wallet, lower case. */
  payTo: string;
  /** The endpoint's full http(s) URL. */
  resource: string;
  /** GET, POST, ... when the source gives it, else "". */
  method: string;
  /** Price per call in US dollars (for a metered endpoint, the most one call may cost). */
  priceUsd: number;
  description: string;
}

/**
 * Writes listings (a discovery feed's): upserted by (pay_to, resource, method), so a refresh updates
 * prices and descriptions, and one that changes none writes nothing; listings the feed drops are kept
 * (the table also holds imported listings, and a merchant's old endpoints still describe it). Every
 * listing's payTo becomes a merchant, as the import does; names stay NULL so reports use the listings' host.
 */
export async function upsertListings(analytics: Sql, listings: readonly Listing[]): Promise<void> {
  if (listings.length === 0) return;
  await analytics.run(
    "CREATE TEMP TABLE IF NOT EXISTS stage_listings AS SELECT * EXCLUDE (host) FROM listings LIMIT 0",
  );
  await analytics.transaction(async () => {
    await analytics.run("DELETE FROM stage_listings");
    await analytics.append("stage_listings", listings, (a, l) => {
      a.appendVarchar(l.payTo);
      a.appendVarchar(l.resource);
      a.appendVarchar(l.method);
      a.appendDouble(l.priceUsd);
      a.appendVarchar(l.description);
    });
    // A refresh that brings nothing new writes nothing: the data version it would bump makes every stored
    // window be built again.
    const news = await analytics.one<{ n: number }>(
      `SELECT count(*)::DOUBLE AS n FROM stage_listings s
       LEFT JOIN listings l ON l.pay_to = s.pay_to AND l.resource = s.resource AND l.method = s.method
       WHERE l.pay_to IS NULL OR l.price_usd IS DISTINCT FROM s.price_usd OR l.description IS DISTINCT FROM s.description`,
    );
    if (news?.n === 0) return;
    // One row per key, so the upsert never meets its own key twice in one statement.
    await analytics.run(`INSERT OR REPLACE INTO listings
      SELECT *, ${sqlHost("resource")} FROM stage_listings QUALIFY row_number() OVER (PARTITION BY pay_to, resource, method) = 1`);
    await analytics.run(
      "INSERT OR IGNORE INTO merchants (address) SELECT DISTINCT pay_to FROM stage_listings",
    );
    await bumpDataVersion(analytics);
  });
}
