/** A run's summary (`IndexerSummary`): empty when it opens, finished when it ends. */
import type { IndexerSummary } from "../events.ts";
import type { IndexerOptions } from "../options.ts";
import type { RpcClient } from "../rpc/client.ts";
import type { Run } from "./run.ts";

export function newSummary(client: RpcClient, block: number): IndexerSummary {
  return {
    block,
    payments: 0,
    candidates: 0,
    transfers: 0,
    history: 0,
    bridges: 0,
    batches: 0,
    reorgs: 0,
    indexed: null,
    head: -1,
    unconfirmed: 0,
    stopped: "done",
    rpc: client.stats,
  };
}

/** Where the run ended and what it indexed; a run that stops (not a follower) says so in a `finished` event. */
export function finish(run: Run): IndexerSummary {
  const { summary, options, reorgDepth } = run;
  const { cursor, head, firstIndexed } = run.state;
  summary.stopped = run.signal?.aborted ? "signal" : "done";
  summary.block = cursor.block;
  summary.head = head;
  if (firstIndexed !== undefined && cursor.block >= firstIndexed) {
    summary.indexed = { from: firstIndexed, to: cursor.block };
    summary.unconfirmed = Math.max(0, cursor.block - Math.max(firstIndexed - 1, head - reorgDepth));
  }
  if (!options.follow) {
    run.emit({
      type: "finished",
      block: cursor.block,
      indexed: summary.indexed,
      head,
      unconfirmed: summary.unconfirmed,
      reorgDepth,
      heldBack: heldBack(options, cursor.block, head, reorgDepth),
    });
  }
  return summary;
}

/** Blocks after the checkpoint left unindexed only because they are within the reorg depth. */
export function heldBack(
  options: IndexerOptions,
  checkpoint: number,
  head: number,
  reorgDepth: number,
): number {
  return options.toBlock === undefined ? Math.max(0, head - Math.max(checkpoint, head - reorgDepth)) : 0;
}
