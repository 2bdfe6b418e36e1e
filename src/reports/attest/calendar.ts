/**
 * Where each chain's attested weeks close, as the attester walks them (attester.ts). Every chain's weeks close
 * at Monday 00:00 UTC, each at its own blocks:
 * - Base's by its clock (weeks.ts): the last block at or before the instant, known without reading a block;
 * - a chain whose blocks say their own time (Polygon PoS, Arbitrum One) by the times the store holds: the last
 *   block with data at or before the instant, once the store holds a row of the chain after it
 *   (`closedMonday`, src/reports/week/window.ts, which gives that close the 7 days to its Monday).
 */
import type { Analytics } from "../../analytics/duckdb.ts";
import { mondayAtOrAfter, WEEK_MS } from "../../chain/block-clock.ts";
import type { AnyChainRecord } from "../../chain/chains.ts";
import { DATA_TABLES, sqlChain, sqlOverTables, sqlTimestamp } from "../scope.ts";
import { closedMonday } from "../week/window.ts";
import type { WeekCloses } from "./weeks.ts";

export interface WeekCalendar {
  /** The last week closed by the store's data, or undefined when no full week has closed yet. */
  lastClose(): Promise<number | undefined>;
  /** The close after `close` that the store's data has reached, or undefined. */
  next(close: number): Promise<number | undefined>;
  /** Whether a window ending at `end` is a week close. */
  isClose(end: number): Promise<boolean>;
  /**
   * The first block of the attesting chain (Base) an attestation of the week ending at `close` can be in: none
   * is older than the week's close. Undefined: `close` itself (the week's blocks are Base's).
   */
  attestedFrom(close: number, blockAt: (seconds: number) => Promise<bigint>): Promise<bigint | undefined>;
}

/** Base's weeks by its clock, through its latest checkpoint. */
export class ClockCalendar implements WeekCalendar {
  constructor(
    private readonly db: Analytics,
    private readonly chain: AnyChainRecord,
    private readonly closes: WeekCloses,
  ) {}

  async lastClose(): Promise<number | undefined> {
    const checkpoint = await this.db.one<{ block: bigint | null }>(
      `SELECT max(block_number) AS block FROM checkpoints WHERE ${sqlChain(this.chain)}`,
    );
    return checkpoint?.block == null ? undefined : this.closes.lastClose(Number(checkpoint.block));
  }

  async next(close: number): Promise<number | undefined> {
    return this.closes.next(close);
  }

  async isClose(end: number): Promise<boolean> {
    return this.closes.isClose(end);
  }

  async attestedFrom(): Promise<bigint | undefined> {
    return undefined;
  }
}

/** A stamped chain's weeks by the times its rows carry in the store. */
export class StoredCalendar implements WeekCalendar {
  constructor(
    private readonly db: Analytics,
    private readonly chain: AnyChainRecord,
  ) {}

  private over(tables: readonly string[], select: string, where: string): string {
    return sqlOverTables(this.chain, tables, select, where);
  }

  /** The stored time of data block `block` (ms), or undefined when the store holds no data there. */
  private async timeOf(block: number): Promise<number | undefined> {
    const row = await this.db.one<{ ms: bigint | null }>(
      `SELECT max(ms) AS ms FROM (${this.over(DATA_TABLES, "max(epoch_ms(block_time)) AS ms", "block_number = $block")})`,
      { block },
    );
    return row?.ms == null ? undefined : Number(row.ms);
  }

  /** The last data block at or before `ms`, undefined when none. */
  private async closeAt(ms: number): Promise<number | undefined> {
    const row = await this.db.one<{ b: bigint | null }>(
      `SELECT max(b) AS b FROM (${this.over(DATA_TABLES, "max(block_number) AS b", `block_time <= ${sqlTimestamp(ms)}`)})`,
    );
    return row?.b == null ? undefined : Number(row.b);
  }

  /** The earliest data time and the latest stored time (checkpoints too), ms. */
  private async span(): Promise<{ first: number; known: number } | undefined> {
    const row = await this.db.one<{ first: bigint | null; known: bigint | null }>(
      `SELECT (SELECT min(ms) FROM (${this.over(DATA_TABLES, "min(epoch_ms(block_time)) AS ms", "true")})) AS first,
              (SELECT max(ms) FROM (${this.over(["checkpoints", ...DATA_TABLES], "max(epoch_ms(block_time)) AS ms", "true")})) AS known`,
    );
    if (row?.first == null || row.known == null) return undefined;
    return { first: Number(row.first), known: Number(row.known) };
  }

  async lastClose(): Promise<number | undefined> {
    const span = await this.span();
    if (!span) return undefined;
    // The last Monday the store has passed, a full week after its first data.
    const monday = mondayAtOrAfter(span.known) - WEEK_MS;
    if (monday - WEEK_MS < span.first) return undefined;
    return this.closeAt(monday);
  }

  async next(close: number): Promise<number | undefined> {
    const [time, span] = await Promise.all([this.timeOf(close), this.span()]);
    if (time === undefined || !span) return undefined;
    // Past weeks without data: their close is the one before, not a week of their own.
    for (let monday = mondayAtOrAfter(time) + WEEK_MS; monday < span.known; monday += WEEK_MS) {
      const next = await this.closeAt(monday);
      if (next !== undefined && next > close) return next;
    }
    return undefined;
  }

  async isClose(end: number): Promise<boolean> {
    const [time, span] = await Promise.all([this.timeOf(end), this.span()]);
    if (time === undefined || !span) return false;
    const monday = await closedMonday(this.db, this.chain, end, time);
    return monday !== undefined && monday - WEEK_MS >= span.first;
  }

  async attestedFrom(
    close: number,
    blockAt: (seconds: number) => Promise<bigint>,
  ): Promise<bigint | undefined> {
    const time = await this.timeOf(close);
    return blockAt(Math.floor(mondayAtOrAfter(time ?? 0) / 1000));
  }
}

/**
 * Where an attester picks up `chain`'s weeks at its first look: a week sealed and not attested yet, else the week
 * after the last one attested (weeks that closed while the service was down), else the last week closed (`last`).
 */
export async function firstDue(
  db: Analytics,
  chain: AnyChainRecord,
  calendar: WeekCalendar,
  last: number,
): Promise<number> {
  const rows = await db.all<{ end_block: number; attested: boolean }>(
    `SELECT end_block::DOUBLE AS end_block, uid IS NOT NULL AS attested FROM attestations
     WHERE ${sqlChain(chain)} AND conflict_uid IS NULL`,
  );
  const weeks: typeof rows = [];
  for (const r of rows) if (r.end_block <= last && (await calendar.isClose(r.end_block))) weeks.push(r);
  const pending = weeks.filter((r) => !r.attested).map((r) => r.end_block);
  const attested = weeks.filter((r) => r.attested).map((r) => r.end_block);
  const after = attested.length > 0 ? await calendar.next(Math.max(...attested)) : undefined;
  return Math.min(last, ...pending, ...(after !== undefined && after <= last ? [after] : []));
}
