/** What a run of the indexer says: events as it goes (`onEvent`), and its summary when it ends. */

import type { LogFields, LogLevel } from "../common/log.ts";
import type { SenderStrategy } from "./block-data.ts";
import type { SkippedLog } from "./classify.ts";
import type { FundingLimit } from "./history.ts";
import type { SpanChange } from "./logs.ts";
import type { RetryEvent, RpcClient } from "./rpc/client.ts";

export type IndexerEvent =
  | {
      type: "start";
      from: number;
      /** Unix seconds of block `from - 1`, where the run stands (the checkpoint, when resumed). */
      time: number;
      target: number;
      head: number;
      resumed: boolean;
      txFrom: SenderStrategy;
      /** The run's blocks of confirmations (`--reorg-depth`, else 128 s of blocks by the chain's clock). */
      reorgDepth: number;
      /** How many blocks a minute is at the head (30 of 2 s, 300 of Base's 200 ms since Denim). */
      minuteBlocks: number;
    }
  | {
      type: "batch";
      from: number;
      to: number;
      /** Unix seconds of block `to`. */
      time: number;
      target: number;
      /** The chain's head as last read. */
      head: number;
      logs: number;
      payments: number;
      candidates: number;
      transfers: number;
      /** Funding history rows this batch added. */
      history: number;
      /** Sides of CCTP messages this batch added (`bridge-messages.ts`). */
      bridges: number;
    }
  /** The funding history stopped short: the level cap, or a node without a block's state (once a run). */
  | ({ type: "funding_limit" } & FundingLimit)
  | { type: "reorg"; checkpoint: number; ancestor: number; ancestorTime: number }
  | { type: "chain_moved"; from: number; to: number; reason: string }
  | ({ type: "retry" } & RetryEvent)
  | ({ type: "span" } & SpanChange)
  | { type: "listings"; listings: number; items: number; pages: number }
  | { type: "listings_failed"; reason: string }
  | { type: "caught_up"; block: number; head: number }
  /** A USDC Transfer above `MAX_USDC_AMOUNT`, stored nowhere (`classify.ts`); `amount` in decimal digits. */
  | { type: "skipped"; tx: string; logIndex: number; block: number; amount: string }
  /** A change in whether the RPC answers, from the follower (follower.ts): a log line of its own. */
  | { type: "rpc_state"; level: LogLevel; msg: string; fields: LogFields }
  /** A run that stops, not a follower: what it indexed and how much of that a reorg could still change. */
  | ({ type: "finished"; reorgDepth: number; heldBack: number } & Pick<
      IndexerSummary,
      "block" | "indexed" | "head" | "unconfirmed"
    >);

export interface IndexerSummary {
  /** The checkpoint when the run ended. */
  block: number;
  payments: number;
  candidates: number;
  transfers: number;
  /** Transfers stored as funding history (`history.ts`), beside the `transfers` the commit rule kept. */
  history: number;
  /** Sides of CCTP messages stored (`bridge_messages`). */
  bridges: number;
  batches: number;
  reorgs: number;
  /** The blocks this run committed, or null when it committed none. */
  indexed: { from: number; to: number } | null;
  /** The chain's head when the run ended. */
  head: number;
  /**
   * How many of the indexed blocks are within `reorgDepth` of the head, so not final yet: an explicit
   * --to-block near the head, or a chain younger than the depth. A later run corrects a reorg of them.
   */
  unconfirmed: number;
  stopped: "done" | "signal";
  rpc: RpcClient["stats"];
}

/** Events carry numbers and strings only, so that any listener can print them as JSON. */
export const skippedEvent = (log: SkippedLog): IndexerEvent => ({
  type: "skipped",
  ...log,
  amount: String(log.amount),
});
