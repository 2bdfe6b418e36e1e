/**
 * The leaderboard's SQL over a built window's stored reports: its entries in the board's order and its
 * counts. The stored reports carry their place on the board (`board_place`, report.ts), so a page of it
 * is a range of places.
 */
import type { Analytics } from "../../analytics/duckdb.ts";
import type { Params } from "../../analytics/sql.ts";
import type { ChainRecord } from "../../chain/chains.ts";
import type { BoardTotals, LeaderboardEntry, UnrankedEntry, UnrankedReason } from "../model.ts";
import { sqlChain } from "../scope.ts";
import { LEADERBOARD_COLUMNS, pagePrefix } from "./report.ts";

/**
 * Leaderboard entries of a built window's stored reports `r` that `where` selects, in the leaderboard's
 * order (at most `limit`): the ranked with their rank, then the unranked with the reason.
 */
export async function boardEntries(
  analytics: Analytics,
  chain: ChainRecord,
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
  chain: ChainRecord,
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
