import type { Analytics } from "../../analytics/duckdb.ts";
import { BASE_GENESIS_TIME, BLOCK_SECONDS, WEEK_BLOCKS } from "../../chain/base.ts";
import { NotFoundError } from "../../common/errors.ts";
import type { ReportWindow } from "../model.ts";

/** Base's first block: no window starts before it. */
export const FIRST_BLOCK = 0;

/** No Base data at all yet: the indexer has not committed a batch and nothing was imported. */
export class NoDataYetError extends NotFoundError {
  constructor() {
    super("the analytics database holds no Base data yet: import some or run the indexer", "no_data");
  }
}

/**
 * The window of 302,400 blocks ending at `endBlock` (default: the latest checkpoint).
 *
 * It holds the payments of blocks start_block + 1 through end_block: each block stands for the two
 * seconds before its timestamp, so those blocks cover exactly the 7 days from `start` to `end`, and
 * consecutive weekly windows neither overlap nor leave a gap. On a chain younger than a week it is
 * shorter (`windowEnding`).
 */
export async function resolveWindow(analytics: Analytics, endBlock?: number): Promise<ReportWindow> {
  const facts = await analytics.one<{ checkpoint: bigint | null; data: bigint | null }>(`
    SELECT (SELECT max(block_number) FROM checkpoints WHERE chain = 'base') AS checkpoint,
           (SELECT max(block_number) FROM payments WHERE chain = 'base') AS data`);
  const checkpoint = facts?.checkpoint == null ? null : Number(facts.checkpoint);
  const latest = Math.max(checkpoint ?? -1, facts?.data == null ? -1 : Number(facts.data));
  if (latest < 0) throw new NoDataYetError();
  const end = endBlock ?? checkpoint ?? latest;
  if (end > latest) {
    throw new NotFoundError(
      `no data for a window ending at block ${end}: the latest known block is ${latest}`,
    );
  }
  return windowEnding(end, await blockTime(analytics, end), checkpoint);
}

/**
 * The window ending at block `end` (whose time is `endTime`), given the latest checkpoint.
 *
 * A chain younger than a week still gets its report: the window then starts at the chain's first
 * block and covers its whole life. Such a window is never `complete` (a reader comparing weeks must
 * not take it for one), and `days` is the time it really covers, so rates stay honest.
 */
export function windowEnding(end: number, endTime: number, checkpoint: number | null): ReportWindow {
  const start = Math.max(FIRST_BLOCK, end - WEEK_BLOCKS);
  const seconds = (end - start) * BLOCK_SECONDS;
  return {
    start_block: start,
    end_block: end,
    complete:
      !isShortWindow({ start_block: start, end_block: end }) && checkpoint !== null && checkpoint >= end,
    start: isoUtc(endTime - seconds),
    end: isoUtc(endTime),
    days: spanDays(seconds),
  };
}

/** Whether a window is shorter than a week: it reaches back to the chain's first block. */
export function isShortWindow(window: Pick<ReportWindow, "start_block" | "end_block">): boolean {
  return window.end_block - window.start_block < WEEK_BLOCKS;
}

/**
 * Seconds as days, to 6 decimals: 7 for a week, and below a second's precision (1e-6 days is 0.09 s)
 * for a young chain's window, whose length is a whole number of 2 s blocks.
 */
function spanDays(seconds: number): number {
  return Math.round((seconds / 86_400) * 1e6) / 1e6;
}

/**
 * Unix time of a block. Base blocks are exactly 2 s apart, so any block of known time is an anchor:
 * the nearest checkpoint or payment, else Base's genesis.
 */
export async function blockTime(analytics: Analytics, block: number): Promise<number> {
  const anchor = await analytics.one<{ block_number: bigint; t: bigint }>(
    `SELECT block_number, epoch(block_time)::BIGINT AS t FROM (
       SELECT block_number, block_time FROM checkpoints WHERE chain = 'base'
       UNION ALL
       SELECT * FROM (SELECT block_number, block_time FROM payments WHERE chain = 'base' AND block_number <= $b ORDER BY block_number DESC LIMIT 1)
       UNION ALL
       SELECT * FROM (SELECT block_number, block_time FROM payments WHERE chain = 'base' AND block_number > $b ORDER BY block_number LIMIT 1)
     ) ORDER BY abs(block_number - $b), block_number LIMIT 1`,
    { b: block },
  );
  if (!anchor) return BASE_GENESIS_TIME + block * BLOCK_SECONDS;
  return Number(anchor.t) + (block - Number(anchor.block_number)) * BLOCK_SECONDS;
}

/** ISO 8601 in UTC with an explicit +00:00 offset, to the second. */
export function isoUtc(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, "+00:00");
}

/** The window's UTC dates, first (partial) to last (partial): 8 dates for 7 days. */
export function windowDates(window: Pick<ReportWindow, "start" | "end">): string[] {
  const dates: string[] = [];
  const last = window.end.slice(0, 10);
  for (let d = new Date(`${window.start.slice(0, 10)}T00:00:00Z`); ; d.setUTCDate(d.getUTCDate() + 1)) {
    const date = d.toISOString().slice(0, 10);
    dates.push(date);
    if (date >= last) return dates;
  }
}

/** Day 0 of the screens' `day`: the window's first date, or its start's for a window of no whole date. */
export function firstDate(window: ReportWindow, dates: readonly string[]): string {
  return dates[0] ?? window.start.slice(0, 10);
}
