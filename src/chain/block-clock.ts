/**
 * Base's clock. Base's block times follow from their numbers: a block every 2 s from genesis, and since the
 * Denim upgrade one every 200 ms from its activation block, the header keeping whole seconds (so about five
 * blocks in a row share one timestamp). base/base writes the rule as `BlockTimestampSchedule`
 * (`crates/common/genesis/src/schedule.rs`): the activation block is the first of the 2 s cadence at or after
 * Denim's activation time, its time is whole seconds, and each later block is 200 ms after its parent.
 *
 * The indexer checks each header it reads against that rule and against the `blockTimestamp` its logs carry,
 * and the import checks a file's blocks by it; a header that breaks it is an error, never stored: a wrong
 * time would move payments between days and weeks. Weeks are chosen by time (7 days of milliseconds) and
 * mapped to blocks through the clock, so a week is 302,400 blocks before Denim and 3,024,000 after it.
 */
import { BLOCK_SECONDS } from "./base.ts";
import { BASE_RECORD, type ChainClock } from "./chains.ts";

export interface BlockHeader {
  number: number;
  hash: string;
  parentHash: string;
  /** Unix seconds. */
  timestamp: number;
  /**
   * Unix milliseconds, where the RPC serves them (Base's nodes since Denim: `timestampMs`, from the block's
   * BaseTime deposit); checked to the millisecond when present.
   */
  timestampMs?: number;
}

/** A block time that breaks Base's clock, or a header and a log that disagree. */
export class BlockTimeError extends Error {
  override name = "BlockTimeError";
}

/** From `block` (whose time is `ms`) on, a block every `intervalMs`. */
interface Cadence {
  block: number;
  ms: number;
  intervalMs: number;
}

export const WEEK_MS = 7 * 86_400_000;

/** 1970-01-05 00:00 UTC, a Monday: every Monday 00:00 UTC is a whole number of weeks from it. */
export const A_MONDAY_MS = 4 * 86_400_000;

/** The first Monday 00:00 UTC at or after `ms`: where every chain's attested weeks close. */
export function mondayAtOrAfter(ms: number): number {
  return A_MONDAY_MS + Math.ceil((ms - A_MONDAY_MS) / WEEK_MS) * WEEK_MS;
}

/**
 * What the indexer asks of a chain's clock. A chain whose block times follow from their numbers (Base) has a
 * `BlockClock`, which checks every time it reads; a chain whose blocks say their own time (`stamped`: Polygon PoS,
 * Arbitrum One) has a `StampedClock`, and then every log the indexer keeps must carry its block's time: the
 * log's own `blockTimestamp`, or where the RPC leaves that out its block's header, read with the batch's blocks
 * (`src/indexer/fetch-batch.ts`) or, for the funding history, by its log fetcher (`src/indexer/logs.ts`).
 */
export interface IndexClock {
  /** Whether every kept log must carry its block's time (no rule gives it). */
  readonly stamped: boolean;
  /** Throws unless the header's time can be this chain's. */
  checkHeader(header: BlockHeader): void;
  /** The time (unix seconds) of the block of a log whose own time, if the RPC served one, is `logTime`. */
  timeOfLog(block: number, logTime: number | undefined, what: string): number;
  /** Block `n`'s time in milliseconds: exact on a rule, an estimate on a stamped chain (for defaults). */
  msOf(n: number): number;
  /** The last block at or before `ms`: exact on a rule, an estimate on a stamped chain (for defaults). */
  blockAtMs(ms: number): number;
  /** The time of block `n - 1`, given block `n`'s header, when the rule gives it (undefined: read its header). */
  parentTime(header: BlockHeader): number | undefined;
}

/** Block times as a chain of cadences, each from its first block on; before the first, the first's extended back. */
export class BlockClock implements IndexClock {
  readonly stamped = false;

  private readonly cadences: readonly Cadence[];

  /**
   * The 2 s rule anchored on one block of known time (a devnet's, or a stretch of Base before Denim); `later`
   * are the cadences that take over after it, ascending.
   */
  constructor(anchorBlock: number, anchorTime: number, later: readonly Cadence[] = []) {
    this.cadences = [
      { block: anchorBlock, ms: anchorTime * 1000, intervalMs: BLOCK_SECONDS * 1000 },
      ...later,
    ];
  }

  /**
   * The clock of the chain `block` (at `time`, unix seconds) is on: Base Mainnet's, with Denim, when the block
   * sits on Base Mainnet's schedule; otherwise 2 s from that block (a devnet: its own genesis, its own times).
   */
  static anchored(block: number, time: number): BlockClock {
    return BASE_MAINNET_CLOCK.timeOf(block) === time ? BASE_MAINNET_CLOCK : new BlockClock(block, time);
  }

  private cadenceOf(n: number): Cadence {
    for (let i = this.cadences.length - 1; i > 0; i--) {
      const c = this.cadences[i] as Cadence;
      if (n >= c.block) return c;
    }
    return this.cadences[0] as Cadence;
  }

  /** The time block `n` must have, in milliseconds (Denim's full timestamp; whole seconds before it). */
  msOf(n: number): number {
    const c = this.cadenceOf(n);
    return c.ms + (n - c.block) * c.intervalMs;
  }

  /** The time block `n` must have, in unix seconds: its header's `timestamp`. */
  timeOf(n: number): number {
    return Math.floor(this.msOf(n) / 1000);
  }

  /** The last block whose time is at or before `ms` (milliseconds). */
  blockAtMs(ms: number): number {
    for (let i = this.cadences.length - 1; i >= 0; i--) {
      const c = this.cadences[i] as Cadence;
      if (i === 0 || ms >= c.ms) return c.block + Math.floor((ms - c.ms) / c.intervalMs);
    }
    throw new Error("unreachable: a clock has a cadence");
  }

  /**
   * SQL: the time block `block` (an integer SQL expression) must have, in unix seconds: `timeOf` for the
   * import, which checks a file's blocks in one statement.
   */
  sqlTimeOf(block: string): string {
    const [first, ...later] = this.cadences as [Cadence, ...Cadence[]];
    let sql = `(${first.ms / 1000} + ((${block}) - ${first.block}) * ${first.intervalMs / 1000})`;
    for (const c of later) {
      sql = `(CASE WHEN (${block}) >= ${c.block} THEN (${c.ms} + ((${block}) - ${c.block}) * ${c.intervalMs}) // 1000 ELSE ${sql} END)`;
    }
    return sql;
  }

  /** Why block `n` cannot have time `time` (unix seconds), or undefined when it follows the rule. */
  breach(n: number, time: number): string | undefined {
    const expected = this.timeOf(n);
    if (time === expected) return undefined;
    const [first, ...later] = this.cadences as [Cadence, ...Cadence[]];
    const rule = [
      `Base's 2 s rule from block ${first.block} (time ${first.ms / 1000})`,
      ...later.map((c) => `${c.intervalMs} ms a block from block ${c.block}`),
    ].join(", then ");
    return `block ${n} has time ${time}, but ${rule} gives ${expected}`;
  }

  /** Throws unless the header's time follows the rule (to the millisecond, when the header says it). */
  checkHeader(header: BlockHeader): void {
    const breach = this.breach(header.number, header.timestamp);
    if (breach) throw new BlockTimeError(`${breach}: is this RPC a Base chain?`);
    const ms = header.timestampMs;
    if (ms !== undefined && ms !== this.msOf(header.number)) {
      throw new BlockTimeError(
        `block ${header.number} has timestampMs ${ms}, but Base's clock gives ${this.msOf(header.number)}: is this RPC a Base chain?`,
      );
    }
  }

  timeOfLog(block: number, logTime: number | undefined, what: string): number {
    this.checkLogTime(block, logTime, what);
    return this.timeOf(block);
  }

  parentTime(header: BlockHeader): number {
    return this.timeOf(header.number - 1);
  }

  /** Throws unless a log's own block time (when the RPC serves one) follows the rule. */
  checkLogTime(block: number, logTime: number | undefined, what: string): void {
    if (logTime === undefined) return;
    const expected = this.timeOf(block);
    if (logTime !== expected) {
      throw new BlockTimeError(
        `${what} in block ${block} says blockTimestamp ${logTime}, but the header and Base's clock give ${expected}`,
      );
    }
  }
}

/**
 * A chain whose blocks say their own time: Polygon PoS (about 2 s, not exactly) and Arbitrum One (several blocks
 * a second, sharing one timestamp). Nothing checks a time against a rule, and nothing is dated without its
 * block's own time; the typical gap (`aboutSeconds`, from the anchor on) only turns defaults given in time into
 * blocks (a reorg depth, a lookback, the first block of a fresh store), where an estimate is what is asked.
 */
export class StampedClock implements IndexClock {
  readonly stamped = true;

  constructor(
    private readonly anchorBlock: number,
    private readonly anchorTime: number,
    private readonly aboutSeconds: number,
  ) {}

  checkHeader(header: BlockHeader): void {
    if (!Number.isSafeInteger(header.timestamp) || header.timestamp < 0)
      throw new BlockTimeError(`block ${header.number} has no usable timestamp (${header.timestamp})`);
  }

  timeOfLog(block: number, logTime: number | undefined, what: string): number {
    // Every log of a stamped chain is dated before it is used (see `IndexClock`): one without is a bug, not data.
    if (logTime === undefined) throw new Error(`internal: ${what} in block ${block} has no block time`);
    return logTime;
  }

  msOf(n: number): number {
    return Math.round((this.anchorTime + (n - this.anchorBlock) * this.aboutSeconds) * 1000);
  }

  blockAtMs(ms: number): number {
    return this.anchorBlock + Math.floor((ms / 1000 - this.anchorTime) / this.aboutSeconds);
  }

  parentTime(): undefined {
    return undefined;
  }
}

/**
 * The clock of `chain`, anchored on one of its blocks (number and unix time): Base's by its rule (its Mainnet
 * schedule when the block sits on it, else 2 s from it: a devnet), a stamped chain's by the blocks' own times.
 */
export function clockOf(chain: { clock: ChainClock }, block: number, time: number): IndexClock {
  return chain.clock.kind === "fixed"
    ? BlockClock.anchored(block, time)
    : new StampedClock(block, time, chain.clock.aboutSeconds);
}

/**
 * A `fixed` chain clock's schedule (`chains.ts`): `blockSeconds` from genesis (block 0), then, when the record
 * names an upgrade, its cadence from the upgrade's activation block, the first block of the old cadence at or
 * after its activation time, at that block's whole-second time (base/base's `BlockTimestampSchedule`).
 */
export function scheduleClock(clock: Extract<ChainClock, { kind: "fixed" }>): BlockClock {
  const { blockSeconds, genesisTime, upgrade } = clock;
  if (blockSeconds !== BLOCK_SECONDS)
    throw new Error(`a fixed clock of ${blockSeconds} s a block is not Base's`);
  if (!upgrade) return new BlockClock(0, genesisTime);
  const activation = Math.ceil((upgrade.activationTime - genesisTime) / blockSeconds);
  const ms = (genesisTime + activation * blockSeconds) * 1000;
  return new BlockClock(0, genesisTime, [{ block: activation, ms, intervalMs: upgrade.intervalMs }]);
}

/** Base Mainnet's clock: 2 s from genesis, then Denim's 200 ms from block 53,556,127 (2026-11-05 18:00:01 UTC). */
export const BASE_MAINNET_CLOCK: BlockClock = scheduleClock(BASE_RECORD.clock);

/** Base Mainnet's first block of 200 ms (Denim's activation block). */
export const BASE_DENIM_BLOCK: number =
  BASE_MAINNET_CLOCK.blockAtMs(BASE_RECORD.clock.upgrade.activationTime * 1000) + 1;
