/**
 * The leaderboard's SQL over a built window's stored reports: its entries in the board's order and its
 * counts. The stored reports carry their place on the board (`board_place`, report.ts), so a page of it
 * is a range of places.
 */
import type { Analytics } from "../../analytics/duckdb.ts";
import type { Params } from "../../analytics/sql.ts";
import type { AnyChainRecord } from "../../chain/chains.ts";
import type { AcrossEntry, BoardTotals, LeaderboardEntry, UnrankedEntry, UnrankedReason } from "../model.ts";
import { sqlChain } from "../scope.ts";
import { sqlCents, sqlUsd } from "./money.ts";
import { sqlRank } from "./rank.ts";
import { LEADERBOARD_COLUMNS, pagePrefix } from "./report.ts";

/**
 * Leaderboard entries of a built window's stored reports `r` that `where` selects, in the leaderboard's
 * order (at most `limit`): the ranked with their rank, then the unranked with the reason.
 */
export async function boardEntries(
  analytics: Analytics,
  chain: AnyChainRecord,
  publicUrl: string,
  end: number,
  where: string,
  params: Exclude<Params, unknown[]>,
  limit?: number,
): Promise<{ merchants: LeaderboardEntry[]; unranked: UnrankedEntry[] }> {
  const entry = Object.entries(LEADERBOARD_COLUMNS).map(([key, sql]) => `${sql} AS ${key}`);
  const rows = await analytics.all<
    Omit<LeaderboardEntry, "rank"> & { rank: number | null; held: boolean } & Record<string, unknown>
  >(
    `SELECT ${entry.join(", ")}, r.held FROM reports r
     WHERE ${sqlChain(chain, "r.")} AND r.end_block = $end AND ${where}
     ORDER BY r.board_place${limit === undefined ? "" : ` LIMIT ${limit}`}`,
    { ...params, end, page_prefix: pagePrefix(publicUrl, chain) },
  );
  const merchants: LeaderboardEntry[] = [];
  const unranked: UnrankedEntry[] = [];
  for (const { rank, held, ...row } of rows) {
    if (rank !== null) merchants.push({ rank, ...row });
    else unranked.push({ ...row, reason: unrankedReason(held, row.real_tx) });
  }
  return { merchants, unranked };
}

/** How many merchants a built window has, ranked and not. */
export async function boardTotals(
  analytics: Analytics,
  chain: AnyChainRecord,
  end: number,
): Promise<BoardTotals> {
  const counts = await analytics.one<{ merchants: number; ranked: number }>(
    `SELECT count(*)::DOUBLE AS merchants, count(rank)::DOUBLE AS ranked FROM reports
     WHERE ${sqlChain(chain)} AND end_block = $end`,
    { end },
  );
  const merchants = counts?.merchants ?? 0;
  const ranked = counts?.ranked ?? 0;
  return { merchants, ranked, unranked: merchants - ranked };
}

function unrankedReason(held: boolean, realTx: number): UnrankedReason {
  if (held) return "held";
  return realTx === 0 ? "no_passing_payment" : "below_one_cent";
}

/**
 * A page of the leaderboard of every chain: each merchant's stored reports of `weeks` (one window a chain) summed
 * in atomic units (USDC has 6 decimals on every chain here), ranked as one chain's board is (`sqlRank`), in the
 * board's order; with how many merchants there are, ranked and not.
 */
export async function boardAcross(
  analytics: Analytics,
  weeks: readonly { chain: AnyChainRecord; end: number }[],
  publicUrl: string,
  page: { offset: number; size: number },
): Promise<{ merchants: AcrossEntry[]; unranked: AcrossUnranked[]; totals: BoardTotals }> {
  const which = weeks.map((w) => `(${sqlChain(w.chain, "r.")} AND r.end_block = ${Math.trunc(w.end)})`);
  if (which.length === 0)
    return { merchants: [], unranked: [], totals: { merchants: 0, ranked: 0, unranked: 0 } };
  const rows = await analytics.all<AcrossRow>(
    `WITH m AS (
       SELECT r.address, any_value(r.name ORDER BY r.chain) AS name, bool_or(r.held) AS held,
         sum(r.amount) AS amount, sum(r.real_amount) AS real_amount, sum(r.tx) AS tx, sum(r.real_tx) AS real_tx,
         list(r.chain ORDER BY r.chain) AS chains
       FROM reports r WHERE ${which.join(" OR ")} GROUP BY r.address
     ), ranked AS (SELECT *, ${sqlRank()} AS rank FROM m)
     SELECT rank::DOUBLE AS rank, address, name, held, chains,
       ${sqlUsd(sqlCents("real_amount"))}::DOUBLE AS real_usd, ${sqlUsd(sqlCents("amount"))}::DOUBLE AS usd,
       real_tx::DOUBLE AS real_tx, tx::DOUBLE AS tx, $page_prefix || address AS page,
       (count(*) OVER ())::DOUBLE AS total, (count(rank) OVER ())::DOUBLE AS ranked
     FROM ranked ORDER BY rank NULLS LAST, real_amount DESC, amount DESC, address
     LIMIT $size OFFSET $offset`,
    { page_prefix: `${publicUrl}/merchants/`, size: page.size, offset: page.offset },
  );
  const merchants: AcrossEntry[] = [];
  const unranked: AcrossUnranked[] = [];
  for (const { rank, held, total: _, ranked: __, ...row } of rows) {
    if (rank !== null) merchants.push({ rank, ...row });
    else unranked.push({ ...row, reason: unrankedReason(held, row.real_tx) });
  }
  const total = rows[0]?.total ?? (await countAcross(analytics, which));
  const ranked = rows[0]?.ranked ?? 0;
  return { merchants, unranked, totals: { merchants: total, ranked, unranked: total - ranked } };
}

type AcrossUnranked = Omit<AcrossEntry, "rank"> & { reason: UnrankedReason };
type AcrossRow = Omit<AcrossEntry, "rank"> & {
  rank: number | null;
  held: boolean;
  total: number;
  ranked: number;
};

/** How many merchants the weeks `which` (SQL over `reports r`) hold: a page past the last reads none. */
async function countAcross(analytics: Analytics, which: readonly string[]): Promise<number> {
  const row = await analytics.one<{ n: number }>(
    `SELECT count(DISTINCT r.address)::DOUBLE AS n FROM reports r WHERE ${which.join(" OR ")}`,
  );
  return row?.n ?? 0;
}
