import type { Store } from "../store/duckdb.ts";
import { sqlCleanText, sqlCutDescription, sqlHost } from "./listings.ts";
import { CENT, sqlCents, sqlRatio, sqlUsd, sqlUsd6, sqlUsdText } from "./money.ts";
import type { ReportWindow } from "./window.ts";

export const LICENSE_URL = "https://creativecommons.org/licenses/by/4.0/";
export const FLAG_NOTE =
  "A flag marks a pattern in public on-chain data, not a finding of wrongdoing: a merchant testing its own endpoint, one large customer or a high-volume integration can trip a screen.";

/**
 * Screens do not follow money through hubs (exchanges, bridges): nearly every wallet shares one.
 * When some passing buyers received money from this merchant only through such a hub, the report says so.
 */
export const EXCHANGE_FLOW_NOTE =
  "received USDC that left this merchant through a high-volume wallet such as an exchange in the same window. " +
  "Screens do not follow money through such wallets, so these payments count as real; they may still be recycled funds.";

export interface ReportContext {
  window: ReportWindow;
  /** `windowDates(window)`: the `daily` records' dates, day 0 first. */
  dates: readonly string[];
  generatedAt: string;
  /** Base of the page and badge URLs, without a trailing slash. */
  publicUrl: string;
}

const PAGE_PREFIX = "/reports/base/";
const BADGE_PREFIX = "/badges/base/";

export function pagePath(address: string): string {
  return `${PAGE_PREFIX}${address}`;
}

export function badgePath(address: string): string {
  return `${BADGE_PREFIX}${address}.svg`;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Writes the window's reports into the `reports` table, one per merchant, from the tables of
 * `aggregateWindow` (sql.ts). The JSON is assembled in DuckDB, in parallel and without a round trip
 * through JavaScript objects: a week of 50,000 merchants is 100 MB of JSON. All wording and the
 * rounding of totals happen here.
 */
export async function writeReports(store: Store, ctx: ReportContext): Promise<void> {
  if (!ctx.dates.every((d) => DATE.test(d))) throw new Error(`bad window dates: ${ctx.dates.join(", ")}`);
  const pivot = ctx.dates
    .map(
      (_, i) => `max(tx) FILTER (day = ${i}) AS tx${i}, max(cents) FILTER (day = ${i}) AS cents${i},
      max(real_cents) FILTER (day = ${i}) AS real_cents${i}`,
    )
    .join(",\n        ");
  const days = ctx.dates
    .map(
      (date, i) => `json_object('date', '${date}', 'tx', coalesce(tx${i}, 0),
        'usd', ${sqlUsd(`coalesce(cents${i}, 0)`)}, 'real_usd', ${sqlUsd(`coalesce(real_cents${i}, 0)`)})`,
    )
    .join(",\n        ");
  const cents = sqlCents("m.amount");
  const realCents = sqlCents("m.real_amount");
  const name = "coalesce(m.name, h.host, m.address)";
  const claim = `printf('%s received $%s of x402 payments passing every screen (%d%% of $%s reported) from %d of %d buyer wallets on Base in the %s days to %s.',
    ${name}, ${sqlUsdText(realCents)}, (${sqlRatio("m.real_amount", "m.amount", 2)} * 100)::INTEGER, ${sqlUsdText(cents)},
    m.real_buyers, m.buyers, $days, $end_date)`;
  const note = `CASE WHEN m.hub_linked_buyers = 0 THEN NULL
    WHEN m.hub_linked_buyers = 1 THEN '1 passing buyer wallet ' || $note
    ELSE m.hub_linked_buyers || ' passing buyer wallets ' || $note END`;

  await store.run(
    `INSERT INTO reports (chain, end_block, address, body, details)
    WITH flag_cents AS (
      -- Largest remainder: every kind gets its cents rounded down, the cents left go to the largest remainders.
      SELECT k.pay_to, k.kind, k.precedence, k.tx, k.amount // ${CENT} AS cents, k.amount % ${CENT} AS remainder,
        ${cents} - ${realCents} - sum(k.amount // ${CENT}) OVER (PARTITION BY k.pay_to) AS cents_left,
        row_number() OVER (PARTITION BY k.pay_to ORDER BY k.amount % ${CENT} DESC, k.precedence) AS place
      FROM rw_flag_kinds k JOIN rw_figures m ON m.address = k.pay_to
    ), flags AS (
      SELECT pay_to, ('{' || string_agg(to_json(kind) || ':' || json_object('tx', tx,
          'usd', ${sqlUsd(`cents + CASE WHEN remainder > 0 AND place <= cents_left THEN 1 ELSE 0 END`)}), ','
        ORDER BY precedence) || '}')::JSON AS flags
      FROM flag_cents GROUP BY pay_to
    ), daily AS (
      -- One column per day, then the records in date order: no sorted aggregate, no row per merchant-day.
      SELECT pay_to, json_array(${days}) AS daily FROM (
        SELECT pay_to, ${pivot} FROM rw_days GROUP BY pay_to
      )
    ), listing_rows AS (
      SELECT pay_to, resource, price_usd, ${sqlCleanText("description")} AS clean, ${sqlHost("resource")} AS host
      FROM listings
    ), listed AS (
      -- Sorted by (price, URL) as a list of structs: an ORDER BY inside the aggregate would sort per merchant.
      SELECT pay_to, ('[' || array_to_string(list_transform(list_sort(list({
          'price_usd': price_usd, 'resource': resource,
          'json': json_object('resource', resource, 'price_usd', price_usd, 'description', ${sqlCutDescription("clean")})::VARCHAR
        })), lambda l: l.json), ',') || ']')::JSON AS listings
      FROM listing_rows GROUP BY pay_to
    ), hosts AS (
      -- The host most of a merchant's listings live on (the first by name on a tie): its default name.
      SELECT pay_to, host FROM listing_rows WHERE host <> '' GROUP BY pay_to, host
      QUALIFY row_number() OVER (PARTITION BY pay_to ORDER BY count(*) DESC, host) = 1
    )
    SELECT 'base', $end_block, m.address, json_object(
        'schema_version', '1',
        'generated_at', $generated_at,
        'license', $license,
        'chain', 'base',
        'address', m.address,
        'name', ${name},
        'claimed', m.claimed,
        'frozen', m.frozen,
        'last_seen_week', $end_date,
        'rank_by_real_revenue', m.rank,
        'window', $window::JSON,
        'claim', ${claim},
        'tx', m.tx,
        'usd', ${sqlUsd(cents)},
        'real_tx', m.real_tx,
        'real_usd', ${sqlUsd(realCents)},
        'buyers', m.buyers,
        'real_buyers', m.real_buyers,
        'top_buyer_share', ${sqlRatio("m.top_amount", "m.amount", 4)},
        'flags', coalesce(f.flags, '{}'::JSON),
        'flag_note', $flag_note,
        'exchange_flow_note', ${note},
        'paid', json_object('median', ${sqlUsd6("m.median")}, 'p25', ${sqlUsd6("m.p25")}, 'p75', ${sqlUsd6("m.p75")},
          'median_passing', ${sqlUsd6("m.median_passing")}),
        'bazaar_listings', coalesce(l.listings, '[]'::JSON),
        'daily', coalesce(d.daily, $no_payments::JSON),
        'page', $page_prefix || m.address,
        'badge', $badge_prefix || m.address || '.svg'
      ), coalesce(w.details, '{"flagged_wallets":{}}')
    FROM rw_figures m
    LEFT JOIN flags f ON f.pay_to = m.address
    LEFT JOIN daily d ON d.pay_to = m.address
    LEFT JOIN listed l ON l.pay_to = m.address
    LEFT JOIN hosts h ON h.pay_to = m.address
    LEFT JOIN rw_details w ON w.pay_to = m.address`,
    {
      end_block: ctx.window.end_block,
      generated_at: ctx.generatedAt,
      license: LICENSE_URL,
      end_date: ctx.window.end.slice(0, 10),
      window: JSON.stringify(ctx.window),
      days: String(ctx.window.days),
      note: EXCHANGE_FLOW_NOTE,
      flag_note: FLAG_NOTE,
      no_payments: JSON.stringify(ctx.dates.map((date) => ({ date, tx: 0, usd: 0, real_usd: 0 }))),
      page_prefix: ctx.publicUrl + PAGE_PREFIX,
      badge_prefix: ctx.publicUrl + BADGE_PREFIX,
    },
  );
}
