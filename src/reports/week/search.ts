/**
 * A search of a window's merchants and of the listings, by name, host or resource: what an agent asks
 * before it pays a host it found somewhere ("is api.example.com's revenue real?"). Served at
 * `/v1/search/base?q=TEXT` (serve/routes/search.ts) and as the MCP tool `search_merchants`; the service runs it
 * (`ReportService.search`), on the window's stored reports and the `listings` table.
 *
 * A match is a case-insensitive substring: of a merchant's name (its own, else its listings' host, else its
 * address, as its report names it) or address, or of the host or URL of one of its listings. Listings match
 * by their host or URL alone: a merchant's name matching would list every endpoint it has.
 */
import type { Analytics } from "../../analytics/duckdb.ts";
import type { AnyChainRecord } from "../../chain/chains.ts";
import { BadInputError } from "../../common/errors.ts";
import type { SearchListing } from "../model.ts";
import { sqlChain } from "../scope.ts";
import { sqlCleanText, sqlCutDescription } from "./listings.ts";

/** Merchants, and listings, a search answers with at most; `totals` counts every match. */
export const SEARCH_LIMIT = 50;

/** The longest query: longer than any URL worth searching for, short enough to say so. */
const QUERY_MAX = 200;

/** The query as searched: trimmed, 2 to 200 characters, else a 400 `bad_query`. */
export function searchText(value: string | undefined): string {
  const text = (value ?? "").trim();
  if (text.length < 2 || text.length > QUERY_MAX) {
    throw new BadInputError(
      `q is the text to search for in merchants' names, hosts and listings' URLs: 2 to ${QUERY_MAX} characters, not ${text.length}`,
      "bad_query",
    );
  }
  return text;
}

/**
 * SQL over a window's stored report `r`: whether the merchant matches `$q` (lower case) by name, address,
 * or a listing's host or URL.
 */
export const SQL_MERCHANT_MATCHES = `(contains(lower(r.name), $q) OR contains(r.address, $q)
  OR r.address IN (SELECT pay_to FROM listings WHERE contains(lower(resource), $q) OR contains(coalesce(host, ''), $q)))`;

/** The listings whose host or URL holds `q` (lower case), at most `SEARCH_LIMIT` by URL, and how many there are. */
export async function listingsMatching(
  analytics: Analytics,
  chain: AnyChainRecord,
  params: { end: number; q: string; page_prefix: string },
): Promise<{ total: number; listings: SearchListing[] }> {
  const rows = await analytics.all<SearchListing & { total: number }>(
    `SELECT l.pay_to, l.resource, l.method, l.price_usd,
       ${sqlCutDescription(sqlCleanText("l.description"))} AS description,
       CASE WHEN r.address IS NULL THEN NULL ELSE $page_prefix || l.pay_to END AS page,
       (count(*) OVER ())::DOUBLE AS total
     FROM listings l
     LEFT JOIN reports r ON ${sqlChain(chain, "r.")} AND r.end_block = $end AND r.address = l.pay_to
     WHERE contains(lower(l.resource), $q) OR contains(coalesce(l.host, ''), $q)
     ORDER BY l.resource, l.method, l.pay_to
     LIMIT ${SEARCH_LIMIT}`,
    params,
  );
  return { total: rows[0]?.total ?? 0, listings: rows.map(({ total: _, ...listing }) => listing) };
}
