/** Commits one batch (or several merged): its rows, the funding history it calls for, its checkpoint. */
import { skippedEvent } from "../events.ts";
import type { FetchedBatch } from "../fetch-batch.ts";
import type { Run } from "./run.ts";
import { targetFor } from "./target.ts";

export async function commit(run: Run, batch: FetchedBatch): Promise<void> {
  const { state, history, summary } = run;
  // Read against the book before this batch: it says which payers are new.
  const funding = history ? await history.collect(batch, state.book, state.clock) : undefined;
  for (const log of batch.skipped) run.emit(skippedEvent(log));
  state.book.addPayments(batch.payments);
  const transfers = state.book.select(batch.transfers);
  const previous = state.committed ? state.cursor : undefined;
  const counts = await run.serial.run(() =>
    run.writer.commit(
      { ...batch, transfers, history: funding?.transfers, balances: funding?.balances },
      { startBlock: state.startBlock, previous, reorgDepth: run.reorgDepth },
    ),
  );
  if (funding) history?.remember(funding);
  state.advance(batch.from, batch.end);
  summary.batches++;
  summary.payments += counts.payments;
  summary.candidates += counts.candidates;
  summary.transfers += counts.transfers;
  summary.history += counts.history;
  summary.block = state.cursor.block;
  run.emit({
    type: "batch",
    from: batch.from,
    to: batch.to,
    time: batch.end.time,
    target: targetFor(run.options, run.reorgDepth, state.head),
    head: state.head,
    logs: batch.logs,
    ...counts,
  });
}
