/**
 * Where one run stands, the state its parts share and change: the cursor and the clock anchored on it,
 * the chain's head as last read, and the wallets known up to the cursor.
 */
import { clockOf, type IndexClock } from "../../chain/block-clock.ts";
import type { ChainRecord } from "../../chain/chains.ts";
import type { ChannelBook } from "../channels.ts";
import type { WalletBook } from "../funding.ts";
import type { Cursor } from "../state.ts";

/** Where a run starts (`start.ts`). */
export interface RunStart {
  /** The first block this analytics database's indexing started at. */
  startBlock: number;
  cursor: Cursor;
  /** Whether the analytics database holds a checkpoint already: a resumed run. */
  committed: boolean;
  head: number;
}

export class RunState {
  readonly startBlock: number;
  cursor: Cursor;
  /** The chain's clock, anchored where the run began or last stood again (`standOn`). */
  clock: IndexClock;
  /** The chain's head as last read. */
  head: number;
  /** Whether the analytics database holds a checkpoint: a resumed run, or one that has committed. */
  committed: boolean;
  /** Every wallet of the stored payments (`funding.ts`): reloaded after a rewind. */
  book: WalletBook;
  /** Every stored batch-settlement channel's config (`channels.ts`): reloaded after a rewind. */
  channels: ChannelBook;
  /** The lowest block this run committed (a reorg can rewind below where it began). */
  firstIndexed: number | undefined;

  constructor(
    private readonly chain: ChainRecord,
    start: RunStart,
    book: WalletBook,
    channels: ChannelBook,
  ) {
    this.startBlock = start.startBlock;
    this.cursor = start.cursor;
    this.clock = clockOf(chain, start.cursor.block, start.cursor.time);
    this.head = start.head;
    this.committed = start.committed;
    this.book = book;
    this.channels = channels;
  }

  /** Stands on `cursor` with the clock anchored there: a fresh start read again, or a rewind. */
  standOn(cursor: Cursor): void {
    this.cursor = cursor;
    this.clock = clockOf(this.chain, cursor.block, cursor.time);
  }

  /** Blocks `from` to `end` are stored. The clock keeps its anchor: a rule holds from any block, and stamps need none. */
  advance(from: number, end: Cursor): void {
    this.committed = true;
    this.cursor = end;
    this.firstIndexed = Math.min(this.firstIndexed ?? from, from);
  }
}
