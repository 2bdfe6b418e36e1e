import type { Analytics } from "../../analytics/duckdb.ts";
import type { Params } from "../../analytics/sql.ts";
import type { AnyChainRecord } from "../../chain/chains.ts";
import type { ReportDetails, ReportWindow } from "../model.ts";
import { type Report, SCHEMES } from "../schema.ts";
import { sqlChain, sqlSlug } from "../scope.ts";
import { SCREENS_PATH } from "../screens/index.ts";
import { methodologyOf } from "../screens/methodology.ts";
import { sqlListingHosts, sqlListingsJson } from "./listings.ts";
import { sqlCents, sqlRatio, sqlRealPercent, sqlUsd, sqlUsd6, sqlUsdText } from "./money.ts";
import { spanText } from "./span.ts";

export const LICENSE_URL = "https://creativecommons.org/licenses/by/4.0/";
export const FLAG_NOTE =
  "A flag marks a pattern in public on-chain data, not a finding of wrongdoing: a merchant testing its own endpoint, one large customer or a high-volume integration can trip a screen.";

/** The report's `flag_note`: the disclaimer, and where each screen's rule is written (docs/screens.md). */
export function flagNote(publicUrl: string): string {
  return `${FLAG_NOTE} How each screen works: ${publicUrl}${SCREENS_PATH}`;
}

/**
 * Screens do not follow money through hubs (exchanges, bridges): nearly every wallet shares one.
 * When some passing buyers received money from this merchant only through such a hub, the report says so.
 */
export const EXCHANGE_FLOW_NOTE =
  "received USDC that left this merchant through a high-volume wallet such as an exchange, in this window or before it. " +
  "Screens do not follow money through such wallets, so these payments count as real; they may still be recycled funds.";

export interface ReportContext {
  /** The chain whose week it is: the report's `chain`, its claim's "on <Chain>" and its URLs name it. */
  chain: AnyChainRecord;
  window: ReportWindow;
  /** `windowDates(window)`: the `daily` records' dates, day 0 first. */
  dates: readonly string[];
  generatedAt: string;
  /** Base of the page and badge URLs, without a trailing slash. */
  publicUrl: string;
  /** The version of the screens the window's reports are built under (src/reports/screens/methodology.ts). */
  methodology: string;
  /** The window's reports are attested on chain and never change again (src/reports/attest/). */
  frozen?: boolean;
}

// The page and badge routes (serve/routes/pages.ts, badges.ts); a report's URLs are these after the public URL.
const pagePath = (chain: Pick<AnyChainRecord, "slug">) => `/reports/${chain.slug}/`;
const badgePath = (chain: Pick<AnyChainRecord, "slug">) => `/badges/${chain.slug}/`;

/** The chain's name as the claim sentence says it, capitalised (spec 2.3: "on Base", "on Polygon"). */
export const claimChainName = (chain: Pick<AnyChainRecord, "slug">): string =>
  chain.slug.charAt(0).toUpperCase() + chain.slug.slice(1);

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
 * Stores the window's reports in the `reports` table, one typed row per merchant (migration 4), from
 * the tables of `aggregateWindow` (aggregates.ts): every figure of the report, the flags with their dollars
 * apportioned, the daily records and the page's details. Text that is the same for every merchant of
 * a window (window, notes, licence) or kept elsewhere (the listings) is not stored with each report;
 * `reportsQuery` renders the JSON when a report is read. A week of 50,000 merchants is about 100 MB
 * of JSON, and a few MB of rows.
 */
export async function writeReports(
  analytics: Analytics,
  ctx: Pick<ReportContext, "chain" | "window" | "dates">,
): Promise<void> {
  if (!ctx.dates.every((d) => DATE.test(d))) throw new Error(`bad window dates: ${ctx.dates.join(", ")}`);
  // The daily records as the report's JSON text: a reader splices it as it is (a list of structs cost a
  // one-report read more than every other column together). Each day with payments is rendered once, in
  // its own row, and pivoted to a column per day (no sorted aggregate); a day without payments is the
  // same text for every merchant.
  const dayText = (date: string, tx: string, cents: string, realCents: string) =>
    jsonConcat([
      ["date", `'"${date}"'`],
      ["tx", `${tx}::BIGINT::VARCHAR`],
      ["usd", `${sqlUsd(`${cents}::HUGEINT`)}::VARCHAR`],
      ["real_usd", `${sqlUsd(`${realCents}::HUGEINT`)}::VARCHAR`],
    ]);
  const dayCase = `CASE day ${ctx.dates.map((date, i) => `WHEN ${i} THEN ${dayText(date, "tx", "cents", "real_cents")}`).join(" ")} END`;
  const pivot = ctx.dates.map((_, i) => `max(text) FILTER (day = ${i}) AS day${i}`).join(", ");
  const daily = `concat('[', ${ctx.dates
    .map((date, i) => `coalesce(d.day${i}, ${dayText(date, "0", "0", "0")})`)
    .join(", ',', ")}, ']')`;
  await analytics.run(
    `INSERT INTO reports (chain, end_block, ${REPORT_COLUMNS.join(", ")})
    WITH flags AS (
      -- The cents apportioned by aggregates.ts, so that the flags add up to usd - real_usd.
      SELECT pay_to, '{' || string_agg(to_json(kind) || ':' || json_object('tx', tx, 'usd', ${sqlUsd("cents")}), ','
        ORDER BY precedence) || '}' AS flags
      FROM rw_flag_kinds GROUP BY pay_to
    ), days AS (
      SELECT pay_to, ${pivot} FROM (SELECT pay_to, day, ${dayCase} AS text FROM rw_days) GROUP BY pay_to
    ), schemes AS (
      -- A column per scheme, in the report's order, joined without a sorted aggregate (a third of this
      -- statement at 10M payments): concat_ws skips the schemes a merchant was not paid by.
      SELECT pay_to, '{' || concat_ws(',', ${SCHEMES.map((scheme) => `max(text) FILTER (scheme = '${scheme}')`).join(", ")}) || '}' AS schemes
      FROM (
        SELECT pay_to, scheme, to_json(scheme) || ':' || ${jsonConcat([
          ["tx", "tx::VARCHAR"],
          ["usd", `${sqlUsd("cents")}::VARCHAR`],
          ["real_tx", "real_tx::VARCHAR"],
          ["real_usd", `${sqlUsd("real_cents")}::VARCHAR`],
          ["tx_counts", `'"' || ${SQL_TX_COUNTS} || '"'`],
        ])} AS text
        FROM rw_schemes
      ) GROUP BY pay_to
    )
    SELECT ${sqlSlug(ctx.chain)}, $end_block, m.address, coalesce(m.name, l.host, m.address), m.claimed, m.held, m.rank,
      m.tx, m.amount, m.real_tx, m.real_amount, m.buyers, m.real_buyers, m.top_amount,
      m.p25, m.median, m.p75, m.median_passing, m.hub_linked_buyers,
      coalesce(f.flags, '{}'), ${daily}, coalesce(w.details, '{"flagged_wallets":{}}'),
      row_number() OVER (ORDER BY ${BOARD_ORDER}), coalesce(s.schemes, '{}')
    FROM rw_figures m
    LEFT JOIN flags f ON f.pay_to = m.address
    LEFT JOIN schemes s ON s.pay_to = m.address
    LEFT JOIN days d ON d.pay_to = m.address
    LEFT JOIN (${sqlListingHosts()}) l ON l.pay_to = m.address
    LEFT JOIN rw_details w ON w.pay_to = m.address
    -- In address order: a read of one report then skips every other part of the table by its zone maps.
    ORDER BY m.address`,
    { end_block: ctx.window.end_block },
  );
}

/** The columns of a stored report after (chain, end_block), in the order `writeReports` fills them. */
const REPORT_COLUMNS = [
  "address",
  "name",
  "claimed",
  "held",
  "rank",
  "tx",
  "amount",
  "real_tx",
  "real_amount",
  "buyers",
  "real_buyers",
  "top_amount",
  "p25",
  "median",
  "p75",
  "median_passing",
  "hub_linked_buyers",
  "flags",
  "daily",
  "details",
  "board_place",
  "schemes",
];

/**
 * What a scheme's `tx` counts: a batch-settlement payment is one claim on one channel, covering any
 * number of requests paid off chain with vouchers; the others are one payment per request.
 */
const SQL_TX_COUNTS = "CASE scheme WHEN 'batch-settlement' THEN 'claims' ELSE 'payments' END";

/**
 * The leaderboard's order over a window's merchants `m`: the ranked by rank, then the unranked; ties by real
 * revenue, reported revenue and address, so that every merchant has one place.
 */
const BOARD_ORDER = "m.rank NULLS LAST, m.real_amount DESC, m.amount DESC, m.address";

/** The merchants whose address is after `after` and up to `through`, in byte order. */
export interface AddressRange {
  after: string;
  through: string;
}

/**
 * SQL and parameters that read a window's stored reports as JSON text: `address`, `body` (the
 * report, in the key order of docs/report.md's opening), `details` (the page's flagged wallets) and the exact
 * `amount` and `real_amount` (atomic units, as text), by
 * address; one merchant's only when `only` is its address, those of a range of addresses when it is one.
 * The reports are rendered in one parallel statement, without a round trip through JavaScript objects. All
 * wording happens here.
 */
export function reportsQuery(
  ctx: Omit<ReportContext, "dates">,
  only?: string | AddressRange,
): { sql: string; params: Params } {
  const address = typeof only === "string" ? only : undefined;
  const range = typeof only === "object" ? only : undefined;
  const endDate = ctx.window.end.slice(0, 10);
  const cents = sqlCents("r.amount");
  const realCents = sqlCents("r.real_amount");
  const claim = `printf('%s received $%s of x402 payments passing every screen (%d%% of $%s reported) from %d of %d buyer wallets on ${claimChainName(ctx.chain)} in the %s to %s.',
    r.name, ${sqlUsdText(realCents)}, ${sqlRealPercent(realCents, cents)}, ${sqlUsdText(cents)},
    r.real_buyers, r.buyers, $days, $end_date)`;
  const note = `CASE WHEN r.hub_linked_buyers = 0 THEN NULL
    WHEN r.hub_linked_buyers = 1 THEN '1 passing buyer wallet ' || $note
    ELSE r.hub_linked_buyers || ' passing buyer wallets ' || $note END`;
  const body = jsonConcat([
    ["schema_version", `'"1"'`],
    ["generated_at", "$generated_at"],
    ["license", "$license"],
    ["chain", `'${JSON.stringify(ctx.chain.slug)}'`],
    ["address", json("r.address")],
    ["name", json("r.name")],
    ["claimed", "r.claimed::VARCHAR"],
    ["frozen", "$frozen"],
    ["last_seen_week", "$end_date_json"],
    ["rank_by_real_revenue", json("r.rank")],
    ["window", "$window"],
    ["claim", json(claim)],
    ["tx", "r.tx::VARCHAR"],
    ["usd", json(sqlUsd(cents))],
    ["real_tx", "r.real_tx::VARCHAR"],
    ["real_usd", json(sqlUsd(realCents))],
    ["buyers", "r.buyers::VARCHAR"],
    ["real_buyers", "r.real_buyers::VARCHAR"],
    ["top_buyer_share", json(sqlRatio("r.top_amount", "r.amount", 4))],
    ["flags", "r.flags"],
    ["flag_note", "$flag_note"],
    ["exchange_flow_note", json(note)],
    [
      "paid",
      jsonConcat([
        ["median", json(sqlUsd6("r.median"))],
        ["p25", json(sqlUsd6("r.p25"))],
        ["p75", json(sqlUsd6("r.p75"))],
        ["median_passing", json(sqlUsd6("r.median_passing"))],
      ]),
    ],
    ["bazaar_listings", "coalesce(l.listings, '[]')"],
    ["daily", "r.daily"],
    ["page", json(`$page_prefix || r.address`)],
    ["badge", json(`$badge_prefix || r.address || '.svg'`)],
    // Beyond the spec's fields, after them: its fields keep their order and meaning.
    ["schemes", "coalesce(r.schemes, '{}')"],
    ["methodology", "$methodology"],
    ["held", "r.held::VARCHAR"],
  ]);
  return {
    sql: `SELECT r.address, ${body} AS body, r.details, r.amount::VARCHAR AS amount, r.real_amount::VARCHAR AS real_amount
      FROM reports r LEFT JOIN (${sqlListingsJson(address !== undefined ? "pay_to = $address" : range ? "pay_to > $after AND pay_to <= $through" : "true")}) l
        ON l.pay_to = r.address
      WHERE ${sqlChain(ctx.chain, "r.")} AND r.end_block = $end_block${address !== undefined ? " AND r.address = $address" : range ? " AND r.address > $after AND r.address <= $through" : ""}
      ORDER BY r.address`,
    params: {
      end_block: ctx.window.end_block,
      ...(address === undefined ? {} : { address }),
      ...(range ?? {}),
      // JSON texts, spliced as they are.
      generated_at: JSON.stringify(ctx.generatedAt),
      license: JSON.stringify(LICENSE_URL),
      end_date_json: JSON.stringify(endDate),
      window: JSON.stringify(ctx.window),
      flag_note: JSON.stringify(flagNote(ctx.publicUrl)),
      methodology: JSON.stringify(methodologyOf(ctx.publicUrl, ctx.methodology)),
      frozen: JSON.stringify(ctx.frozen === true),
      // Values.
      end_date: endDate,
      // "7 days", the spec's words, for a week; a young chain's span in the unit it fills ("56 seconds").
      days: spanText(ctx.window.days),
      note: EXCHANGE_FLOW_NOTE,
      page_prefix: pagePrefix(ctx.publicUrl, ctx.chain),
      badge_prefix: ctx.publicUrl + badgePath(ctx.chain),
    },
  };
}

/**
 * SQL over a stored report `r`: a leaderboard entry's fields, as the report states them, typed as
 * JavaScript reads them (counts as DOUBLE: exact below 2^53, and read as numbers, not bigints).
 */
export const LEADERBOARD_COLUMNS = {
  rank: "r.rank::DOUBLE",
  address: "r.address",
  name: "r.name",
  real_usd: sqlUsd(sqlCents("r.real_amount")),
  usd: sqlUsd(sqlCents("r.amount")),
  real_tx: "r.real_tx::DOUBLE",
  tx: "r.tx::DOUBLE",
  real_buyers: "r.real_buyers::DOUBLE",
  buyers: "r.buyers::DOUBLE",
  page: `$page_prefix || r.address`,
} as const;

/** The page URL prefix of a report's merchant, for `LEADERBOARD_COLUMNS`' `$page_prefix`. */
export const pagePrefix = (publicUrl: string, chain: Pick<AnyChainRecord, "slug">) =>
  publicUrl + pagePath(chain);

/** A row of `reportsQuery`. */
export type StoredReportRow = { body: string; details: string; amount: string; real_amount: string };

/** A row of `reportsQuery` as the report and its details, the details with the exact totals. */
export function parseStoredReport(row: StoredReportRow): {
  report: Report;
  details: ReportDetails;
} {
  const details = JSON.parse(row.details) as ReportDetails;
  details.exact = { amount: row.amount, real_amount: row.real_amount };
  return { report: JSON.parse(row.body) as Report, details };
}
