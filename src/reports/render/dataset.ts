import type { Report } from "../schema.ts";
import { FLAG_KINDS } from "../screens/index.ts";

type Cell = string | number | boolean | null;

// One list of (column, value) pairs, so the header and the rows cannot drift apart.
const COLUMNS: readonly (readonly [string, (r: Report) => Cell])[] = [
  ["schema_version", (r) => r.schema_version],
  ["generated_at", (r) => r.generated_at],
  ["license", (r) => r.license],
  ["chain", (r) => r.chain],
  ["address", (r) => r.address],
  ["name", (r) => r.name],
  ["claimed", (r) => r.claimed],
  ["frozen", (r) => r.frozen],
  ["last_seen_week", (r) => r.last_seen_week],
  ["rank_by_real_revenue", (r) => r.rank_by_real_revenue],
  ["window_start_block", (r) => r.window.start_block],
  ["window_end_block", (r) => r.window.end_block],
  ["window_complete", (r) => r.window.complete],
  ["window_start", (r) => r.window.start],
  ["window_end", (r) => r.window.end],
  ["tx", (r) => r.tx],
  ["usd", (r) => r.usd],
  ["real_tx", (r) => r.real_tx],
  ["real_usd", (r) => r.real_usd],
  ["buyers", (r) => r.buyers],
  ["real_buyers", (r) => r.real_buyers],
  ["top_buyer_share", (r) => r.top_buyer_share],
  ...FLAG_KINDS.flatMap((kind) => [
    [`flag_${kind}_tx`, (r: Report) => r.flags[kind]?.tx ?? 0] as const,
    [`flag_${kind}_usd`, (r: Report) => r.flags[kind]?.usd ?? 0] as const,
  ]),
  ["paid_median", (r) => r.paid.median],
  ["paid_p25", (r) => r.paid.p25],
  ["paid_p75", (r) => r.paid.p75],
  ["paid_median_passing", (r) => r.paid.median_passing],
  ["listings", (r) => r.bazaar_listings.length],
  ["exchange_flow_note", (r) => r.exchange_flow_note],
  ["claim", (r) => r.claim],
  ["page", (r) => r.page],
  ["badge", (r) => r.badge],
  ["methodology_version", (r) => r.methodology.version],
  ["held", (r) => r.held],
];

/** The CSV dataset's columns in order; one `flag_<kind>_tx` and `flag_<kind>_usd` pair per screen. */
export const CSV_COLUMNS: readonly string[] = COLUMNS.map(([name]) => name);

/** The reports as NDJSON: one compact JSON object per line, each line ending in "\n". */
export function reportsToNdjson(reports: readonly Report[]): string {
  return reports.map((r) => `${JSON.stringify(r)}\n`).join("");
}

/**
 * The reports as RFC 4180 CSV (CRLF line ends, a header row, one row per report), flattened to
 * scalar columns: see `CSV_COLUMNS`. Nulls are empty fields; absent flags count 0.
 * @example c.body(reportsToCsv(reports)) // with Content-Type text/csv
 */
export function reportsToCsv(reports: readonly Report[]): string {
  return CSV_HEADER + reportsToCsvRows(reports);
}

/** The CSV dataset's header row, CRLF included. */
export const CSV_HEADER = `${CSV_COLUMNS.map(csvField).join(",")}\r\n`;

/** The CSV rows of `reports`, without the header: a dataset written batch by batch. */
export function reportsToCsvRows(reports: readonly Report[]): string {
  return reports.map((r) => `${COLUMNS.map(([, value]) => csvCell(value(r))).join(",")}\r\n`).join("");
}

function csvCell(value: Cell): string {
  if (value === null) return "";
  if (typeof value === "string") return csvField(defuseFormula(value));
  return String(value);
}

/**
 * Spreadsheets run a cell that starts with one of these as a formula, and names and claims come from
 * merchants. A leading apostrophe makes them plain text (OWASP "CSV injection"); tab and CR are on
 * OWASP's list too.
 */
function defuseFormula(text: string): string {
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
