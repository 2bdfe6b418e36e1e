/**
 * The ground truth made to fit the chain a demo resumes (truth.ts, `repairTruth`), and what the user is
 * told of it.
 */
import { repairTruth } from "./truth.ts";

/**
 * Repairs `truthFile` for a chain whose head is `head`, and returns the notes on what it dropped. A chain
 * saved before a crash may be older than the truth written after it, and the crash may have cut the
 * truth's last line short.
 */
export function repairTruthNotes(truthFile: string, truthCompleteFile: string, head: number): string[] {
  const repair = repairTruth(truthFile, head, truthCompleteFile);
  return [
    ...(repair.torn !== undefined ? [tornNote(truthFile, repair.torn, repair.completeTo, head)] : []),
    ...(repair.dropped > 0
      ? [`dropped ${repair.dropped} ground-truth records of blocks the saved chain lacks`]
      : []),
  ];
}

/**
 * The line a crash cut short held a payment the simulator settled. When the saved chain ends at or before
 * the block the truth was complete to, that payment is not on it either (a batch is appended before the
 * block it completes is recorded), and nothing is lost; past it, the chain may hold payments the truth
 * now lacks, and the user must know the check may blame the reports for them.
 */
function tornNote(truthFile: string, line: number, completeTo: number | undefined, head: number): string {
  const dropped = `${truthFile} line ${line} was cut short by a crash or a full disk: dropped it`;
  if (completeTo !== undefined && head <= completeTo) return dropped;
  const from = completeTo === undefined ? "" : ` of blocks ${completeTo + 1} to ${head}`;
  return `${dropped}; the saved chain may hold payments${from} that the ground truth now lacks, for which simulate --check could blame the reports (--fresh starts a week it can check whole)`;
}
