/**
 * Backfill: reads batches up to a target, several ahead, and commits them in order. A batch that does
 * not follow the checkpoint on the chain sends the run to the reorg check; a range that changed while it
 * was read is "moved", for the main loop to wait out.
 */
import { ChainMovedError } from "../block-data.ts";
import { cctpContracts } from "../cctp-logs.ts";
import { type FetchContext, type FetchedBatch, fetchBatch } from "../fetch-batch.ts";
import { commit } from "./commit.ts";
import { merge, rowsOf } from "./merge.ts";
import { checkReorg } from "./reorg-check.ts";
import type { Run } from "./run.ts";

/** Most rows in one commit when batches read ahead are committed together. */
const MAX_GROUP_ROWS = 50_000;

/** A batch being read; `value` is set once it is. */
interface Pending {
  promise: Promise<FetchedBatch>;
  value?: FetchedBatch;
}

export type BackfillOutcome = "done" | "reorg" | "moved" | "stopped";

/** Reads batches up to `target` (several ahead) and commits them in order. */
export async function backfill(run: Run, target: number): Promise<BackfillOutcome> {
  const { state, signal, logs, concurrency } = run;
  const ctx: FetchContext = {
    client: run.client,
    chain: run.chain,
    cctp: cctpContracts(run.chain.cctp),
    logs,
    registry: run.registry,
    clock: state.clock,
    strategy: run.strategy,
    concurrency,
    signal,
  };
  const inflight: Pending[] = [];
  let next = state.cursor.block + 1;
  const fill = () => {
    while (inflight.length < concurrency && next <= target && !signal?.aborted) {
      const to = Math.min(target, next + logs.span - 1);
      const pending: Pending = { promise: fetchBatch(ctx, next, to) };
      // Batches abandoned after a reorg may still fail: their errors are not ours any more.
      pending.promise.then(
        (value) => {
          pending.value = value;
        },
        () => {},
      );
      inflight.push(pending);
      next = to + 1;
    }
  };
  const moved = (error: ChainMovedError): BackfillOutcome => {
    run.emit({ type: "chain_moved", from: state.cursor.block + 1, to: target, reason: error.message });
    return "moved";
  };
  fill();
  while (inflight.length > 0) {
    if (signal?.aborted) return "stopped";
    const group: FetchedBatch[] = [];
    try {
      group.push(await (inflight.shift() as Pending).promise);
    } catch (error) {
      if (error instanceof ChainMovedError) return moved(error);
      throw error;
    }
    if (group[0]?.parentHash !== state.cursor.hash) {
      // The checkpoint still on the chain means the node answered from another fork for a moment.
      return (await checkReorg(run)) ? "reorg" : "moved";
    }
    // Batches already read behind it join the same transaction: fewer commits when reading
    // outruns writing. Each must follow the one before it on the chain.
    let rows = rowsOf(group[0] as FetchedBatch);
    for (let ahead = inflight[0]?.value; ahead && rows < MAX_GROUP_ROWS; ahead = inflight[0]?.value) {
      if (ahead.parentHash !== (group.at(-1) as FetchedBatch).end.hash) break;
      group.push(ahead);
      rows += rowsOf(ahead);
      inflight.shift();
    }
    fill();
    try {
      await commit(run, merge(group));
    } catch (error) {
      // Only the funding history throws this at commit, before anything is written.
      if (!(error instanceof ChainMovedError)) throw error;
      return moved(error);
    }
  }
  return "done";
}
