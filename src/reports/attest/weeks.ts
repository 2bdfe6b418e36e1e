/**
 * Which windows are attested weeks: those that close at a fixed block of every week, so that every operator
 * and every reader names the same weeks. On Base that is the last block at or before Monday 00:00 UTC (block
 * 171,726, 2023-06-18 23:59:59 UTC, then every 302,400 blocks): a window of any other end block is a
 * rolling view that keeps moving with the chain, and is never attested.
 */
import { BASE_GENESIS_TIME, BLOCK_SECONDS, WEEK_BLOCKS } from "../../chain/base.ts";

const MONDAY = 1;

/**
 * The offset of a chain's week closes (0 to WEEK_BLOCKS - 1): its last block at or before the first Monday
 * 00:00 UTC after `genesisTime`, blocks being `BLOCK_SECONDS` apart from genesis (a block stands for the two
 * seconds before its timestamp, so the one stamped Monday 00:00 still belongs to the week it closes).
 */
export function mondayCloses(genesisTime: number): number {
  const day = new Date(genesisTime * 1000);
  day.setUTCHours(0, 0, 0, 0);
  while (day.getUTCDay() !== MONDAY || day.getTime() / 1000 <= genesisTime)
    day.setUTCDate(day.getUTCDate() + 1);
  return Math.floor((day.getTime() / 1000 - genesisTime) / BLOCK_SECONDS) % WEEK_BLOCKS;
}

/** Base's week closes: block 171,726 and every WEEK_BLOCKS after it. */
export const BASE_WEEK_CLOSES = mondayCloses(BASE_GENESIS_TIME);

/** Whether the window ending at `endBlock` is a week that closes at `offset` (a full one: not the chain's first days). */
export function isWeekClose(endBlock: number, offset: number): boolean {
  return endBlock >= WEEK_BLOCKS && (endBlock - offset) % WEEK_BLOCKS === 0;
}

/** The last week close at or before `block`, or undefined when no full week has closed yet. */
export function lastWeekClose(block: number, offset: number): number | undefined {
  const close = block - ((((block - offset) % WEEK_BLOCKS) + WEEK_BLOCKS) % WEEK_BLOCKS);
  return close >= WEEK_BLOCKS ? close : undefined;
}
