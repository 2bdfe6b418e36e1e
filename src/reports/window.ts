import type { Analytics } from "../analytics/duckdb.ts";
import { BASE_GENESIS_TIME, BLOCK_SECONDS, WEEK_BLOCKS } from "../chain/base.ts";
import { NotFoundError } from "../common/errors.ts";

/** The report's `window` object (spec 2.2). */
export interface ReportWindow {
  start_block: number;
  end_block: number;
  complete: boolean;
  start: string;
  end: string;
  days: number;
}

/**
 * The window of 302,400 blocks ending at `endBlock` (default: the latest checkpoint).
 *
 * It holds the payments of blocks start_block + 1 through end_block: each block stands for the two
 * seconds before its timestamp, so those blocks cover exactly the 7 days from `start` to `end`, and
 * consecutive weekly windows neither overlap nor leave a gap.
 */
export async function resolveWindow(analytics: Analytics, endBlock?: number): Promise<ReportWindow> {
  const facts = await analytics.one<{ checkpoint: bigint | null; data: bigint | null }>(`
    SELECT (SELECT max(block_number) FROM checkpoints WHERE chain = 'base') AS checkpoint,
           (SELECT max(block_number) FROM payments WHERE chain = 'base') AS data`);
  const checkpoint = facts?.checkpoint == null ? null : Number(facts.checkpoint);
  const latest = Math.max(checkpoint ?? -1, facts?.data == null ? -1 : Number(facts.data));
  if (latest < 0)
    throw new NotFoundError("the analytics database holds no Base data yet: import some or run the indexer");
  const end = endBlock ?? checkpoint ?? latest;
  if (end > latest) {
    throw new NotFoundError(
      `no data for a window ending at block ${end}: the latest known block is ${latest}`,
    );
  }
  if (end < WEEK_BLOCKS) {
    throw new NotFoundError(`a window ending at block ${end} would start before Base's first block`);
  }
  const start = end - WEEK_BLOCKS;
  const endTime = await blockTime(analytics, end);
  return {
    start_block: start,
    end_block: end,
    complete: checkpoint !== null && checkpoint >= end,
    start: isoUtc(endTime - WEEK_BLOCKS * BLOCK_SECONDS),
    end: isoUtc(endTime),
    days: (WEEK_BLOCKS * BLOCK_SECONDS) / 86_400,
  };
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
