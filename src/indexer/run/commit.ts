/** Commits one batch (or several merged): its rows, the funding history it calls for, its checkpoint. */
import type { ChannelRows } from "../channels.ts";
import type { PaymentRow } from "../classify.ts";
import { skippedEvent } from "../events.ts";
import type { FetchedBatch } from "../fetch-batch.ts";
import type { Run } from "./run.ts";
import { targetFor } from "./target.ts";

export async function commit(run: Run, batch: FetchedBatch): Promise<void> {
  const { state, history, summary } = run;
  const channels = await state.channels.rows(batch.channelLogs, state.clock, run.channelConfigs);
  const payments = [...batch.payments, ...channels.payments].sort(
    (a, b) => a.block - b.block || a.logIndex - b.logIndex,
  );
  // A deposit is where its payer appears in x402, and its channel with it (`channels.ts`).
  const appearances = [...payments, ...depositAppearances(channels)];
  const withChannels = {
    ...batch,
    payments: appearances,
    transfers: [...batch.transfers, ...channels.moves],
  };
  // Read against the book before this batch: it says which payers are new.
  const funding = history ? await history.collect(withChannels, state.book, state.clock) : undefined;
  for (const log of [...batch.skipped, ...channels.skipped]) run.emit(skippedEvent(log));
  state.book.addPayments(appearances);
  // A channel's own moves are always kept: their payer appears in x402 by the deposit itself.
  const transfers = [...state.book.select(batch.transfers), ...channels.moves];
  const previous = state.committed ? state.cursor : undefined;
  const counts = await run.serial.run(() =>
    run.writer.commit(
      {
        ...batch,
        payments,
        transfers,
        history: funding?.transfers,
        balances: funding?.balances,
        channels: channels.channels,
        channelEvents: channels.events,
        bridges: batch.bridges,
      },
      { startBlock: state.startBlock, previous, reorgDepth: run.reorgDepth },
    ),
  );
  state.channels.learn(channels.channels);
  if (funding) history?.remember(funding);
  state.advance(batch.from, batch.end);
  summary.batches++;
  summary.payments += counts.payments;
  summary.candidates += counts.candidates;
  summary.transfers += counts.transfers;
  summary.history += counts.history;
  summary.bridges += counts.bridges;
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

/** Each deposit as the payer's appearance beside its channel, for the wallet book and the funding history. */
function depositAppearances(channels: ChannelRows): PaymentRow[] {
  return channels.moves
    .filter((m) => m.to.length === 66)
    .map((m) => ({
      ...m,
      facilitator: "",
      payer: m.from,
      payTo: m.to,
      scheme: "batch-settlement",
      method: "channel",
    }));
}
