import type { Analytics } from "../../analytics/duckdb.ts";
import { BASE_MAINNET_CLOCK, BlockClock, WEEK_MS } from "../../chain/block-clock.ts";
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
 * The week ending at `endBlock` (default: the latest checkpoint): 302,400 blocks of 2 s, or 3,024,000 of
 * Denim's 200 ms, or the mix of both that spans 7 days across Denim's activation.
 *
 * It holds the payments of blocks start_block + 1 through end_block: each block stands for the time since
 * its parent's, so those blocks cover exactly the 7 days from `start` to `end`, and consecutive weekly windows
 * neither overlap nor leave a gap. On a chain younger than a week it is shorter (`windowEnding`).
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
  return windowEnding(end, await clockNear(analytics, end), checkpoint);
}

/**
 * The window ending at block `end`, on `clock`, given the latest checkpoint: from the last block at or before
 * 7 days before `end`'s time.
 *
 * A chain younger than a week still gets its report: the window then starts at the chain's first
 * block and covers its whole life. Such a window is never `complete` (a reader comparing weeks must
 * not take it for one), and `days` is the time it really covers, so rates stay honest.
 */
export function windowEnding(end: number, clock: BlockClock, checkpoint: number | null): ReportWindow {
  const endMs = clock.msOf(end);
  const start = Math.max(FIRST_BLOCK, Math.min(end, clock.blockAtMs(endMs - WEEK_MS)));
  const days = spanDays((endMs - clock.msOf(start)) / 1000);
  return {
    start_block: start,
    end_block: end,
    complete: !isShortWindow({ days }) && checkpoint !== null && checkpoint >= end,
    start: isoUtc(clock.timeOf(start)),
    end: isoUtc(clock.timeOf(end)),
    days,
  };
}

/** Whether a window is shorter than a week: it reaches back to the chain's first block. */
export function isShortWindow(window: Pick<ReportWindow, "days">): boolean {
  return window.days < 7;
}

/**
 * Seconds as days, to 6 decimals: 7 for a week, and below a second's precision (1e-6 days is 0.09 s)
 * for a young chain's window, whose length is a whole number of blocks.
 */
function spanDays(seconds: number): number {
  return Math.round((seconds / 86_400) * 1e6) / 1e6;
}

/**
 * The clock of the chain the store holds, near `block`: Base Mainnet's schedule when the nearest checkpoint
 * or payment sits on it, else 2 s a block from that one (a devnet); Base Mainnet's when the store holds none.
 */
export async function clockNear(analytics: Analytics, block: number): Promise<BlockClock> {
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
  return anchor ? BlockClock.anchored(Number(anchor.block_number), Number(anchor.t)) : BASE_MAINNET_CLOCK;
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
