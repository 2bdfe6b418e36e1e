/**
 * The flag feed's SQL: every flagged wallet of a stored window, per merchant and screen (`report_flags`,
 * migration 15). Written with the window's reports from the build's tables, so that it says what the
 * reports say; read a page of wallets at a time, one wallet's history across the stored windows, or a
 * window's rows whole for the datasets.
 */
import type { Analytics } from "../../analytics/duckdb.ts";
import type { AnyChainRecord } from "../../chain/chains.ts";
import type { FlaggedAt, FlaggedWallet } from "../model.ts";
import { sqlChain, sqlSlug } from "../scope.ts";
import { SCREENS } from "../screens/index.ts";
import { SHOWN_WALLETS, sqlInWindow } from "./aggregates.ts";
import { sqlUsd } from "./money.ts";

/** The flag feed's JSON of a chain (its slug): page 1 here, page N at `/pages/N` (src/reports/serve/routes/flags.ts). */
export const flagsRoot = (chain: string): string => `/v1/flags/${chain}`;

/** Base's feed. */
export const FLAGS_PATH = flagsRoot("base");

/**
 * Where page `n` of a chain's feed is, or of one merchant's part of it. A merchant's part is at a path of its
 * own (`?merchant=` answers the same), so that a published site, whose host ignores the query, serves it too.
 */
export function flagsPath(n: number, merchant: string | null = null, chain = "base"): string {
  const root = flagsRoot(chain);
  const base = merchant === null ? root : `${root}/merchants/${merchant}`;
  return n === 1 ? base : `${base}/pages/${n}`;
}

/** What each screen found, in one sentence: the screen's own summary, as the pages say it. */
export const reasonOf = (kind: string): string => SCREENS.find((s) => s.kind === kind)?.summary ?? "";

/** A flagged wallet's row at one merchant for one screen, as the feed reads it. */
export type FlagRow = {
  wallet: string;
  pay_to: string;
  /** The merchant's name in the window's report. */
  name: string;
  kind: string;
  tx: number;
  usd: number;
  cluster: string | null;
  first_block: number;
  last_block: number;
  /** Whether the merchant's page names this wallet under the kind (its evidence has an entry for it). */
  named: boolean;
  /** The window's end block. */
  end_block: number;
  /** The ERC-8021 app codes the wallet's payments to the merchant in the window carried, comma-separated. */
  apps: string | null;
};

/** A window's flag feed, or one merchant's part of it, counted. */
export type FlagTotals = {
  wallets: number;
  tx: number;
  usd: number;
};

const PRECEDENCE = `CASE f.kind ${SCREENS.map((s, i) => `WHEN '${s.kind}' THEN ${i}`).join(" ")} ELSE ${SCREENS.length} END`;

/**
 * Replaces the window's rows with those of its build's tables (inside the transaction that stores its
 * reports): `rw_wallets`' cents are the page's shares of each flag, so a merchant's rows add up to its
 * report's flags to the cent. Each row's apps are read from the window's payments of its pair: the build's
 * groups keep no codes, and only the flagged pairs' payments are looked at.
 */
export async function writeFlags(
  analytics: Analytics,
  chain: AnyChainRecord,
  window: { start_block: number; end_block: number },
) {
  const end = window.end_block;
  await analytics.run(`DELETE FROM report_flags WHERE ${sqlChain(chain)} AND end_block = $end`, { end });
  await analytics.run(
    `INSERT INTO report_flags
     WITH a AS (
       SELECT payer, pay_to, array_to_string(list_sort(list_distinct(list(builder_app))), ',') AS apps
       FROM payments
       WHERE ${sqlInWindow(chain)} AND builder_app IS NOT NULL
         AND (payer, pay_to) IN (SELECT payer, pay_to FROM rw_wallets)
       GROUP BY ALL
     )
     SELECT ${sqlSlug(chain)}, $end, w.payer, w.pay_to, w.kind, w.tx, w.amount, w.cents, c.cluster, p.first_block, p.last_block,
       a.apps
     FROM rw_wallets w
     JOIN rw_pair_totals p USING (payer, pay_to)
     LEFT JOIN rw_clusters c ON c.wallet = w.payer
     LEFT JOIN a USING (payer, pay_to)
     -- By wallet: one wallet's rows of a window are then a few blocks of the table.
     ORDER BY w.payer, w.pay_to, w.kind`,
    { end, start: window.start_block },
  );
}

/** Drops the rows of the windows whose end blocks `windows` (SQL) selects, as their reports are dropped. */
export async function dropFlags(
  analytics: Analytics,
  chain: AnyChainRecord,
  windows: string,
  params: Record<string, number>,
) {
  await analytics.run(
    `DELETE FROM report_flags WHERE ${sqlChain(chain)} AND end_block IN (${windows})`,
    params,
  );
}

/** SQL: the window's rows, of one merchant when `$merchant` is not NULL. */
const windowRows = (chain: AnyChainRecord) => `SELECT * FROM report_flags
  WHERE ${sqlChain(chain)} AND end_block = $end AND ($merchant IS NULL OR pay_to = $merchant)`;

/** The wallets, payments and dollars of a window's feed, or of one merchant's part of it. */
export async function flagTotals(
  analytics: Analytics,
  chain: AnyChainRecord,
  end: number,
  merchant: string | null,
): Promise<FlagTotals> {
  const row = await analytics.one<FlagTotals>(
    `SELECT count(DISTINCT wallet)::DOUBLE AS wallets, coalesce(sum(tx), 0)::DOUBLE AS tx,
       ${sqlUsd("coalesce(sum(cents), 0)")}::DOUBLE AS usd
     FROM (${windowRows(chain)})`,
    { end, merchant },
  );
  return row ?? { wallets: 0, tx: 0, usd: 0 };
}

/**
 * SQL over the rows `f` of some windows, each joined to its merchant's report `r`: the row as a `FlagRow`
 * (with its window's end block), `placed` giving each row's place among its merchant's wallets of the kind.
 */
const ROW_COLUMNS = `f.end_block::DOUBLE AS end_block, f.wallet, f.pay_to, r.name, f.kind, f.tx::DOUBLE AS tx,
  ${sqlUsd("f.cents")}::DOUBLE AS usd, f.cluster, f.first_block::DOUBLE AS first_block,
  f.last_block::DOUBLE AS last_block, p.place <= ${SHOWN_WALLETS} AS named, f.apps`;

/**
 * SQL: the place of each row of the (end_block, pay_to, kind) groups `groups` selects among its group, in
 * the order the page lists a flag's wallets (aggregates.ts, `rw_wallets`).
 */
const placed = (chain: AnyChainRecord, groups: string) => `SELECT end_block, pay_to, kind, wallet,
    row_number() OVER (PARTITION BY end_block, pay_to, kind ORDER BY amount DESC, wallet) AS place
  FROM report_flags WHERE ${sqlChain(chain)} AND (end_block, pay_to, kind) IN (${groups})`;

/**
 * One page of a window's feed: its wallets by flagged dollars (largest first), then address, `size` a
 * page from `offset`, each wallet's rows by dollars, then merchant and the screens' order.
 */
export async function flagRows(
  analytics: Analytics,
  chain: AnyChainRecord,
  end: number,
  merchant: string | null,
  page: { offset: number; size: number },
): Promise<FlagRow[]> {
  return analytics.all<FlagRow>(
    `WITH f AS (${windowRows(chain)}), w AS (
       SELECT wallet, sum(cents) AS total FROM f GROUP BY wallet
       ORDER BY total DESC, wallet LIMIT $size OFFSET $offset
     ), p AS (${placed(chain, "SELECT end_block, pay_to, kind FROM f WHERE wallet IN (SELECT wallet FROM w)")})
     SELECT ${ROW_COLUMNS}
     FROM w JOIN f USING (wallet) JOIN p USING (end_block, pay_to, kind, wallet)
     JOIN reports r ON ${sqlChain(chain, "r.")} AND r.end_block = f.end_block AND r.address = f.pay_to
     ORDER BY w.total DESC, f.wallet, f.cents DESC, f.pay_to, ${PRECEDENCE}`,
    { end, merchant, size: page.size, offset: page.offset },
  );
}

/** Every row of one wallet in the stored windows, the latest window first, then as a feed page orders them. */
export async function walletRows(
  analytics: Analytics,
  chain: AnyChainRecord,
  wallet: string,
): Promise<(FlagRow & { generated_at: string; methodology: string })[]> {
  return analytics.all<FlagRow & { generated_at: string; methodology: string }>(
    `WITH f AS (SELECT * FROM report_flags WHERE ${sqlChain(chain)} AND wallet = $wallet),
     p AS (${placed(chain, "SELECT end_block, pay_to, kind FROM f")})
     SELECT ${ROW_COLUMNS}, rw.generated_at, rw.methodology
     FROM f JOIN p USING (end_block, pay_to, kind, wallet)
     JOIN reports r ON ${sqlChain(chain, "r.")} AND r.end_block = f.end_block AND r.address = f.pay_to
     JOIN report_windows rw ON ${sqlChain(chain, "rw.")} AND rw.end_block = f.end_block
     ORDER BY f.end_block DESC, f.cents DESC, f.pay_to, ${PRECEDENCE}`,
    { wallet },
  );
}

/**
 * A window's rows whose wallets are after `after` and up to `size` wallets on, by wallet, merchant and
 * the screens' order, for the datasets; with the wallet the batch ends at, or undefined past the last.
 */
export async function flagBatch(
  analytics: Analytics,
  chain: AnyChainRecord,
  end: number,
  after: string,
  size: number,
): Promise<{ through: string; rows: FlagRow[] } | undefined> {
  const next = await analytics.one<{ through: string | null }>(
    `SELECT max(wallet) AS through FROM (SELECT DISTINCT wallet FROM report_flags
       WHERE ${sqlChain(chain)} AND end_block = $end AND wallet > $after ORDER BY wallet LIMIT $size)`,
    { end, after, size },
  );
  if (!next?.through) return undefined;
  const rows = await analytics.all<FlagRow>(
    `WITH f AS (SELECT * FROM report_flags WHERE ${sqlChain(chain)} AND end_block = $end
       AND wallet > $after AND wallet <= $through),
     p AS (${placed(chain, "SELECT end_block, pay_to, kind FROM f")})
     SELECT ${ROW_COLUMNS}
     FROM f JOIN p USING (end_block, pay_to, kind, wallet)
     JOIN reports r ON ${sqlChain(chain, "r.")} AND r.end_block = f.end_block AND r.address = f.pay_to
     ORDER BY f.wallet, f.pay_to, ${PRECEDENCE}`,
    { end, after, through: next.through },
  );
  return { through: next.through, rows };
}

/**
 * Rows in a feed page's order as its wallets, each with its merchants in the rows' order; `evidence` says
 * where a row's wallet is on its merchant's evidence page, `methodology` the version their window was made under.
 */
export function flaggedWallets(
  rows: readonly FlagRow[],
  evidence: (row: FlagRow) => string,
  methodology: string,
): FlaggedWallet[] {
  const wallets: FlaggedWallet[] = [];
  for (const row of rows) {
    let w = wallets.at(-1);
    if (w?.wallet !== row.wallet) {
      w = {
        wallet: row.wallet,
        cluster: row.cluster,
        tx: 0,
        usd: 0,
        first_block: row.first_block,
        last_block: row.last_block,
        methodology_version: methodology,
        merchants: [],
      };
      wallets.push(w);
    }
    w.tx += row.tx;
    w.first_block = Math.min(w.first_block, row.first_block);
    w.last_block = Math.max(w.last_block, row.last_block);
    w.merchants.push(flaggedAt(row, evidence(row)));
  }
  // Summed in cents: dollars added as floating point would drift off the cent.
  for (const w of wallets) w.usd = w.merchants.reduce((cents, m) => cents + Math.round(m.usd * 100), 0) / 100;
  return wallets;
}

function flaggedAt(row: FlagRow, evidence: string): FlaggedAt {
  return {
    address: row.pay_to,
    name: row.name,
    kind: row.kind,
    reason: reasonOf(row.kind),
    tx: row.tx,
    usd: row.usd,
    evidence,
    apps: row.apps ? row.apps.split(",") : [],
  };
}
