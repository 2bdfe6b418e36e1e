import type { FetchedBatch } from "../fetch-batch.ts";

/** The rows a batch would write. */
export const rowsOf = (b: FetchedBatch) =>
  b.payments.length + b.candidates.length + b.transfers.length + b.channelLogs.length + b.bridges.length;

/** Consecutive batches as one. */
export function merge(group: readonly FetchedBatch[]): FetchedBatch {
  const first = group[0] as FetchedBatch;
  if (group.length === 1) return first;
  const last = group.at(-1) as FetchedBatch;
  return {
    from: first.from,
    to: last.to,
    parentHash: first.parentHash,
    end: last.end,
    payments: group.flatMap((b) => b.payments),
    candidates: group.flatMap((b) => b.candidates),
    transfers: group.flatMap((b) => b.transfers),
    skipped: group.flatMap((b) => b.skipped),
    hashes: group.flatMap((b) => b.hashes),
    logs: group.reduce((n, b) => n + b.logs, 0),
    channelLogs: group.flatMap((b) => b.channelLogs),
    bridges: group.flatMap((b) => b.bridges),
  };
}
