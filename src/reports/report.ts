import type { Store } from "../store/duckdb.ts";
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

// The page and badge routes of http.ts; a report's URLs are these after the public URL.
const PAGE_PREFIX = "/reports/base/";
const BADGE_PREFIX = "/badges/base/";

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * SQL: a JSON object, in this key order, spliced from JSON texts: each value is a SQL expression that
 * yields JSON text (`json` for any value). Nested documents (listings, daily records) are spliced as
 * they are; `json_object` would parse every one of them again.
 */
function jsonConcat(fields: readonly (readonly [key: string, jsonText: string])[]): string {
  const parts = fields.map(([key, value], i) => `'${i === 0 ? "{" : ","}${JSON.stringify(key)}:', ${value}`);
  return `concat(${parts.join(",\n      ")}, '}')`;
}

/** SQL: any value as JSON text; NULL as null. */
const json = (expr: string) => `coalesce(to_json(${expr})::VARCHAR, 'null')`;

/**
 * Writes the window's reports into the `reports` table, one per merchant, from the tables of
 * `aggregateWindow` (sql.ts) and from `listing_docs`, which the caller keeps current
 * (`refreshListingDocs`). The JSON is assembled in DuckDB, in parallel and without a round trip
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
    .map((date, i) =>
      jsonConcat([
        ["date", `'"${date}"'`],
        ["tx", `coalesce(tx${i}, 0)::VARCHAR`],
        ["usd", `${sqlUsd(`coalesce(cents${i}, 0)`)}::VARCHAR`],
        ["real_usd", `${sqlUsd(`coalesce(real_cents${i}, 0)`)}::VARCHAR`],
      ]),
    )
    .join(", ',',\n        ");
  const endDate = ctx.window.end.slice(0, 10);
  const cents = sqlCents("m.amount");
  const realCents = sqlCents("m.real_amount");
  const name = "coalesce(m.name, l.host, m.address)";
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
      SELECT pay_to, '{' || string_agg(to_json(kind) || ':' || json_object('tx', tx,
          'usd', ${sqlUsd(`cents + CASE WHEN remainder > 0 AND place <= cents_left THEN 1 ELSE 0 END`)}), ','
        ORDER BY precedence) || '}' AS flags
      FROM flag_cents GROUP BY pay_to
    ), daily AS (
      -- One column per day, then the records in date order: no sorted aggregate, no row per merchant-day.
      SELECT pay_to, concat('[', ${days}, ']') AS daily FROM (
        SELECT pay_to, ${pivot} FROM rw_days GROUP BY pay_to
      )
    )
    SELECT 'base', $end_block, m.address, ${jsonConcat([
      ["schema_version", `'"1"'`],
      ["generated_at", "$generated_at"],
      ["license", "$license"],
      ["chain", `'"base"'`],
      ["address", json("m.address")],
      ["name", json(name)],
      ["claimed", "m.claimed::VARCHAR"],
      ["frozen", "m.frozen::VARCHAR"],
      ["last_seen_week", "$end_date_json"],
      ["rank_by_real_revenue", json("m.rank")],
      ["window", "$window"],
      ["claim", json(claim)],
      ["tx", "m.tx::VARCHAR"],
      ["usd", json(sqlUsd(cents))],
      ["real_tx", "m.real_tx::VARCHAR"],
      ["real_usd", json(sqlUsd(realCents))],
      ["buyers", "m.buyers::VARCHAR"],
      ["real_buyers", "m.real_buyers::VARCHAR"],
      ["top_buyer_share", json(sqlRatio("m.top_amount", "m.amount", 4))],
      ["flags", "coalesce(f.flags, '{}')"],
      ["flag_note", "$flag_note"],
      ["exchange_flow_note", json(note)],
      [
        "paid",
        jsonConcat([
          ["median", json(sqlUsd6("m.median"))],
          ["p25", json(sqlUsd6("m.p25"))],
          ["p75", json(sqlUsd6("m.p75"))],
          ["median_passing", json(sqlUsd6("m.median_passing"))],
        ]),
      ],
      ["bazaar_listings", "coalesce(l.listings, '[]')"],
      ["daily", "coalesce(d.daily, $no_payments)"],
      ["page", json("$page_prefix || m.address")],
      ["badge", json("$badge_prefix || m.address || '.svg'")],
    ])}, coalesce(w.details, '{"flagged_wallets":{}}')
    FROM rw_figures m
    LEFT JOIN flags f ON f.pay_to = m.address
    LEFT JOIN daily d ON d.pay_to = m.address
    LEFT JOIN listing_docs l ON l.pay_to = m.address
    LEFT JOIN rw_details w ON w.pay_to = m.address`,
    {
      end_block: ctx.window.end_block,
      // JSON texts, spliced as they are.
      generated_at: JSON.stringify(ctx.generatedAt),
      license: JSON.stringify(LICENSE_URL),
      end_date_json: JSON.stringify(endDate),
      window: JSON.stringify(ctx.window),
      flag_note: JSON.stringify(FLAG_NOTE),
      // Values.
      end_date: endDate,
      days: String(ctx.window.days),
      note: EXCHANGE_FLOW_NOTE,
      no_payments: JSON.stringify(ctx.dates.map((date) => ({ date, tx: 0, usd: 0, real_usd: 0 }))),
      page_prefix: ctx.publicUrl + PAGE_PREFIX,
      badge_prefix: ctx.publicUrl + BADGE_PREFIX,
    },
  );
}
