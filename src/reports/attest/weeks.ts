/**
 * Which windows are attested weeks: those that close at a fixed instant of every week, so that every operator
 * and every reader names the same weeks. On Base that is Monday 00:00 UTC, the week's close being the last
 * block at or before it (block 171,726, 2023-06-18 23:59:59 UTC, then every 302,400 blocks of 2 s; since
 * Denim, whose blocks are 200 ms apart, every 3,024,000): a window of any other end block is a rolling view
 * that keeps moving with the chain, and is never attested.
 */
import { A_MONDAY_MS, BlockClock, WEEK_MS } from "../../chain/block-clock.ts";

/** A chain's week closes: the last block at or before each instant `anchorMs + k` weeks. */
export class WeekCloses {
  private constructor(
    private readonly clock: BlockClock,
    private readonly anchorMs: number,
  ) {}

  /** Monday 00:00 UTC on `clock`: Base's weeks. */
  static mondays(clock: BlockClock): WeekCloses {
    return new WeekCloses(clock, A_MONDAY_MS);
  }

  /** Block `offset` and every 302,400 blocks of 2 s from it (a devnet's weeks, which close where it played them). */
  static everyWeekFrom(offset: number, clock: BlockClock = new BlockClock(0, 0)): WeekCloses {
    return new WeekCloses(clock, clock.msOf(offset));
  }

  /** The first close instant at or after `ms`. */
  private boundaryFrom(ms: number): number {
    return this.anchorMs + Math.ceil((ms - this.anchorMs) / WEEK_MS) * WEEK_MS;
  }

  /** A week ending at `end` is a full one: the chain is a week old at its end. */
  private full(end: number): boolean {
    return this.clock.msOf(end) - WEEK_MS >= this.clock.msOf(0);
  }

  /** Whether the window ending at `end` is a week that closes here (a full one: not the chain's first days). */
  isClose(end: number): boolean {
    return this.full(end) && this.clock.msOf(end + 1) > this.boundaryFrom(this.clock.msOf(end));
  }

  /** The last week close at or before `block`, or undefined when no full week has closed yet. */
  lastClose(block: number): number | undefined {
    let boundary = this.boundaryFrom(this.clock.msOf(block));
    if (this.clock.msOf(block + 1) <= boundary) boundary -= WEEK_MS;
    const close = this.clock.blockAtMs(boundary);
    return this.full(close) ? close : undefined;
  }

  /** The close a week after `close`. */
  next(close: number): number {
    return this.clock.blockAtMs(this.boundaryFrom(this.clock.msOf(close)) + WEEK_MS);
  }
}
