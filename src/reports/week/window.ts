import type { Analytics } from "../../analytics/duckdb.ts";
import { BlockClock, mondayAtOrAfter, scheduleClock, WEEK_MS } from "../../chain/block-clock.ts";
import { type AnyChainRecord, BASE_RECORD } from "../../chain/chains.ts";
import { NotFoundError } from "../../common/errors.ts";
import type { ReportWindow } from "../model.ts";
import { DATA_TABLES, sqlChain, sqlOverTables, sqlTimestamp } from "../scope.ts";

/** A chain's first block: no window starts before it. */
export const FIRST_BLOCK = 0;

/** No data of the chain at all yet: the indexer has not committed a batch and nothing was imported. */
export class NoDataYetError extends NotFoundError {
  constructor(chain: Pick<AnyChainRecord, "name"> = BASE_RECORD) {
    super(
      `the analytics database holds no ${chain.name} data yet: import some or run the indexer`,
      "no_data",
    );
  }
}

/**
 * The week of `chain` ending at `endBlock` (default: the chain's latest checkpoint). On Base: 302,400 blocks of
 * 2 s, or 3,024,000 of Denim's 200 ms, or the mix of both that spans 7 days across Denim's activation.
 *
 * It holds the payments of blocks start_block + 1 through end_block: each block stands for the time since
 * its parent's, so those blocks cover exactly the 7 days from `start` to `end`, and consecutive weekly windows
 * neither overlap nor leave a gap. On a chain younger than a week it is shorter (`windowEnding`). A chain whose
 * blocks say their own time (Polygon PoS, Arbitrum One) is read by the times stored with its rows
 * (`stampedWindow`).
 */
export async function resolveWindow(
  analytics: Analytics,
  chain: AnyChainRecord = BASE_RECORD,
  endBlock?: number,
): Promise<ReportWindow> {
  // The payments only past the checkpoint: a constant bound lets zone maps skip the rest, where the payments'
  // max over the chain read every block number of it (35-45 ms a build at 10M payments, each chain's).
  // The checkpoint's time in the same statement: the indexer's next commit may delete its row (one is kept per
  // CHECKPOINT_SPACING blocks) before a second statement reads it.
  const marked = await analytics.one<{ checkpoint: bigint | null; ms: bigint | null }>(
    `SELECT max(block_number) AS checkpoint, arg_max(epoch_ms(block_time), block_number) AS ms
     FROM checkpoints WHERE ${sqlChain(chain)}`,
  );
  const checkpoint = marked?.checkpoint == null ? null : Number(marked.checkpoint);
  const facts = await analytics.one<{ data: bigint | null }>(
    `SELECT (SELECT max(block_number) FROM payments WHERE ${sqlChain(chain)} AND block_number > $after) AS data`,
    { after: checkpoint ?? -1 },
  );
  const latest = Math.max(checkpoint ?? -1, facts?.data == null ? -1 : Number(facts.data));
  if (latest < 0) throw new NoDataYetError(chain);
  const end = endBlock ?? checkpoint ?? latest;
  if (end > latest) {
    throw new NotFoundError(
      `no data for a window ending at block ${end}: the latest known block is ${latest}`,
    );
  }
  if (chain.clock.kind === "stamped") {
    const known = end === checkpoint && marked?.ms != null ? Number(marked.ms) : undefined;
    return stampedWindow(analytics, chain, end, checkpoint, known);
  }
  return windowEnding(end, await clockNear(analytics, end, chain), checkpoint);
}

/**
 * The week ending at block `end` of a chain whose blocks say their own time. No rule maps a time to a block, but
 * the store keeps the time of every block it holds a row of (the indexer and the import date each one), and
 * only those blocks can hold a payment: the window starts at the last of them at or before 7 days before
 * `end`'s time, so the payments it holds are exactly those of the 7 days, and `start` is that time itself.
 * `end`'s time is its own where the store knows it (the checkpoint naming it, for the latest week, or, once the
 * indexer's next commit replaced that checkpoint, the indexer's record of its header, kept for the reorg depth),
 * else that of the last stored block below it; and the week ends with the last block of data in that second:
 * asked for by any block of a second that several blocks share, it is the same week, and the next starts after it. A chain whose stored rows span less than a week gets the short window of a young chain, from its
 * first block and its earliest stored time. A week close (`closedMonday`) is the 7 days to its Monday instead:
 * from the previous close, so that the attested weeks meet.
 */
async function stampedWindow(
  analytics: Analytics,
  chain: AnyChainRecord,
  asked: number,
  checkpoint: number | null,
  /** `asked`'s time as the statement that found it the latest checkpoint read it, if it is. */
  knownMs?: number,
): Promise<ReportWindow> {
  // Each question its own statement over plain columns, so that zone maps skip what it does not need: a
  // checkpoint names the latest week's end (the common case, a lookup in a small table), and the start is the
  // last block before a time constant.
  const tables = ["checkpoints", "payments", "transfers"];
  const over = (select: string, where: string) => sqlOverTables(chain, tables, select, where);
  const overData = (select: string, where: string) => sqlOverTables(chain, DATA_TABLES, select, where);
  let end = asked;
  // The block's own time first. The indexer keeps one checkpoint per CHECKPOINT_SPACING blocks and the latest,
  // so the latest's row goes at its next commit, while readers are still served the window ending there
  // (serve/latest.ts): dated by the last stored row below it instead (on a quiet chain its last payment,
  // minutes earlier), the same window named one span on one read and a shorter on the next (a demo's Arbitrum
  // day as "1 day" on its page and 0.996 days in the merchant JSON). That commit reached no block at or below
  // it (StoreChanges), so the window must not change: its header's time stays in indexer_blocks.
  const ended =
    (knownMs === undefined ? undefined : { ms: BigInt(knownMs) }) ??
    (await analytics.one<{ ms: bigint | null }>(
      `SELECT epoch_ms(block_time) AS ms FROM checkpoints WHERE ${sqlChain(chain)} AND block_number = $end`,
      { end },
    )) ??
    (await analytics.one<{ ms: bigint | null }>(
      `SELECT epoch_ms(block_time) AS ms FROM indexer_blocks WHERE ${sqlChain(chain)} AND block_number = $end`,
      { end },
    )) ??
    (await analytics.one<{ ms: bigint | null }>(
      `SELECT arg_max(ms, b) AS ms FROM (${over("block_number AS b, epoch_ms(block_time) AS ms", "block_number <= $end")})`,
      { end },
    ));
  if (ended?.ms == null) throw new NoDataYetError(chain);
  // A week holds whole seconds: it ends with the last block of data in its end block's second. Several blocks
  // share a second (Arbitrum's), and the next week starts after the whole second (the last block at or before
  // its start time); a week ending at a block inside the second left the payments after it in no week.
  const last = await analytics.one<{ b: bigint | null }>(
    `SELECT max(b) AS b FROM (${overData("max(block_number) AS b", `block_number > $end AND block_time = ${sqlTimestamp(Number(ended.ms))}`)})`,
    { end },
  );
  if (last?.b != null) end = Number(last.b);
  // A week close (the chain's last block with data at or before a Monday 00:00 UTC the store has passed) is the
  // 7 days to that Monday, so that closed weeks meet end to start: from the previous close, whatever time the
  // blocks on either side of each Monday say.
  const monday = await closedMonday(analytics, chain, end, Number(ended.ms));
  const bound = monday ?? Number(ended.ms);
  const before = sqlTimestamp(bound - WEEK_MS);
  const start = await analytics.one<{ b: bigint | null }>(
    `SELECT max(b) AS b FROM (${(monday === undefined ? over : overData)("max(block_number) AS b", `block_time <= ${before}`)})`,
  );
  // The earliest time as each table's first row by time: DuckDB's top-N then skips by zone maps every row group
  // past the first it reads, where a min() read every row of the chain (70-100 ms a build at 10M payments).
  const first =
    start?.b == null
      ? await analytics.one<{ ms: bigint }>(
          `SELECT min(ms) AS ms FROM (${tables
            .map(
              (t) =>
                `SELECT * FROM (SELECT epoch_ms(block_time) AS ms FROM ${t} WHERE ${sqlChain(chain)} ORDER BY block_time LIMIT 1)`,
            )
            .join(" UNION ALL ")})`,
        )
      : undefined;
  const row = { start_block: start?.b ?? null, first_ms: first?.ms ?? 0n };
  const endMs = Number(ended.ms);
  const young = row.start_block == null;
  const startMs = young ? Math.min(endMs, Number(row.first_ms)) : bound - WEEK_MS;
  const days = spanDays((bound - startMs) / 1000);
  return {
    start_block: young ? FIRST_BLOCK : Number(row.start_block),
    end_block: end,
    complete: !isShortWindow({ days }) && checkpoint !== null && checkpoint >= end,
    start: isoUtc(Math.floor(startMs / 1000)),
    end: isoUtc(Math.floor(endMs / 1000)),
    days,
  };
}

/**
 * The Monday 00:00 UTC whose week `end` closes on a stamped chain, or undefined when it closes none: `end` is the
 * last block with data (a payment or a transfer) at or before that Monday, and the store holds a row of the
 * chain after it (so no later block of the week can still come). Data, not checkpoints: every store holding the
 * same payments and transfers closes the week at the same block, wherever its indexer happened to commit.
 */
export async function closedMonday(
  analytics: Analytics,
  chain: AnyChainRecord,
  end: number,
  endMs: number,
): Promise<number | undefined> {
  const monday = mondayAtOrAfter(endMs);
  const until = `block_time <= ${sqlTimestamp(monday)}`;
  const any = (tables: readonly string[], where: string) =>
    `(SELECT bool_or(p) FROM (${sqlOverTables(chain, tables, "bool_or(true) AS p", where)}))`;
  // The last block with data by the Monday is `end` when `end` has data by then and no later block has: both
  // ranges of block numbers that zone maps narrow, where the last block by a time read every row before it.
  const facts = await analytics.one<{ at: boolean | null; later: boolean | null; past: boolean | null }>(
    `SELECT ${any(DATA_TABLES, `block_number = $end AND ${until}`)} AS at,
            ${any(DATA_TABLES, `block_number > $end AND ${until}`)} AS later,
            ${any(["checkpoints", ...DATA_TABLES], `block_time > ${sqlTimestamp(monday)}`)} AS past`,
    { end },
  );
  return facts?.at === true && facts.later !== true && facts.past === true ? monday : undefined;
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
 * The clock of a chain whose block times follow from their numbers (Base), near `block`: its schedule when the
 * nearest checkpoint or payment sits on it, else 2 s a block from that one (a devnet); its schedule when the
 * store holds none.
 */
export async function clockNear(
  analytics: Analytics,
  block: number,
  chain: AnyChainRecord = BASE_RECORD,
): Promise<BlockClock> {
  if (chain.clock.kind !== "fixed") throw new Error(`internal: ${chain.name}'s blocks follow no rule`);
  const anchor = await analytics.one<{ block_number: bigint; t: bigint }>(
    `SELECT block_number, epoch(block_time)::BIGINT AS t FROM (
       SELECT block_number, block_time FROM checkpoints WHERE ${sqlChain(chain)}
       UNION ALL
       SELECT * FROM (SELECT block_number, block_time FROM payments WHERE ${sqlChain(chain)} AND block_number <= $b ORDER BY block_number DESC LIMIT 1)
       UNION ALL
       SELECT * FROM (SELECT block_number, block_time FROM payments WHERE ${sqlChain(chain)} AND block_number > $b ORDER BY block_number LIMIT 1)
     ) ORDER BY abs(block_number - $b), block_number LIMIT 1`,
    { b: block },
  );
  return anchor
    ? BlockClock.anchored(Number(anchor.block_number), Number(anchor.t))
    : scheduleClock(chain.clock);
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
