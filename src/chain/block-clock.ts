/**
 * Base's clock. Base makes a block exactly every 2 seconds, so every block's time follows from any one
 * block's: time(n) = time(a) + 2 (n - a). The indexer checks each header it reads against that rule and
 * against the `blockTimestamp` its logs carry, and the import checks a file's blocks by it; a header
 * that breaks it is an error, never stored: a wrong time would move payments between days and weeks.
 */
import { BASE_DENIM_TIME, BLOCK_SECONDS } from "./base.ts";

export interface BlockHeader {
  number: number;
  hash: string;
  parentHash: string;
  /** Unix seconds. */
  timestamp: number;
}

/** A block time that breaks Base's 2-second rule, or a header and a log that disagree. */
export class BlockTimeError extends Error {
  override name = "BlockTimeError";
}

/** The 2-second rule, anchored on one block of known time. */
export class BlockClock {
  constructor(
    readonly anchorBlock: number,
    readonly anchorTime: number,
  ) {}

  /** The time block `n` must have. */
  timeOf(n: number): number {
    return this.anchorTime + (n - this.anchorBlock) * BLOCK_SECONDS;
  }

  /**
   * SQL: the time block `block` (an integer SQL expression) must have, in unix seconds: `timeOf` for the
   * import, which checks a file's blocks in one statement.
   */
  sqlTimeOf(block: string): string {
    return `(${this.anchorTime} + ((${block}) - ${this.anchorBlock}) * ${BLOCK_SECONDS})`;
  }

  /** Why block `n` cannot have time `time` (unix seconds), or undefined when it follows the rule. */
  breach(n: number, time: number): string | undefined {
    const expected = this.timeOf(n);
    if (time === expected) return undefined;
    return `block ${n} has time ${time}, but Base's 2 s rule from block ${this.anchorBlock} (time ${this.anchorTime}) gives ${expected}`;
  }

  /** Throws unless the header's time follows the rule. */
  checkHeader(header: BlockHeader): void {
    const breach = this.breach(header.number, header.timestamp);
    if (!breach) return;
    // Blocks faster than the rule from Denim's activation on: Base Mainnet's own 200 ms blocks, which this
    // clock does not know yet (docs/chains.md, "Base's clock since Denim"), not a chain that is not Base.
    if (header.timestamp >= BASE_DENIM_TIME && header.timestamp < this.timeOf(header.number)) {
      throw new BlockTimeError(
        `${breach}: on Base Mainnet, blocks come every 200 ms since the Denim upgrade (${new Date(BASE_DENIM_TIME * 1000).toISOString()}), and this indexer keeps Base's 2 s clock: index to a block before it (--to-block), see docs/chains.md, "Base's clock since Denim"`,
      );
    }
    throw new BlockTimeError(`${breach}: is this RPC a Base chain?`);
  }

  /** Throws unless a log's own block time (when the RPC serves one) follows the rule. */
  checkLogTime(block: number, logTime: number | undefined, what: string): void {
    if (logTime === undefined) return;
    const expected = this.timeOf(block);
    if (logTime !== expected) {
      throw new BlockTimeError(
        `${what} in block ${block} says blockTimestamp ${logTime}, but the header and the 2 s rule give ${expected}`,
      );
    }
  }
}
