/** The reorg check at a checkpoint whose block the chain may no longer hold (`../reorg.ts` rewinds). */
import { findCommonAncestor, rewindTo } from "../reorg.ts";
import { loadChannelBook, loadWalletBook } from "../state.ts";
import { cursorBefore, header } from "./chain-reads.ts";
import { loadHistoryMemory } from "./funding-history.ts";
import type { Run } from "./run.ts";

/** If the chain no longer holds the checkpoint's block, rewinds to the common ancestor; says whether it did. */
export async function checkReorg(run: Run): Promise<boolean> {
  const { state, serial, analytics, client, chain } = run;
  if (!state.committed) {
    // Nothing stored yet: just start again from the chain as it is now.
    state.standOn(await cursorBefore(client, state.startBlock, chain, run.signal));
    return false;
  }
  // A node that cannot serve the checkpoint's block even after retries fails the run (ChainMovedError)
  // rather than triggering a rewind on no evidence.
  const now = await header(client, state.cursor.block, run.signal);
  if (now.hash === state.cursor.hash) return false;
  const checkpoint = state.cursor;
  const ancestor = await serial.run(() => findCommonAncestor(analytics, client, checkpoint, chain));
  await serial.run(() => rewindTo(analytics, ancestor, chain));
  run.emit({
    type: "reorg",
    checkpoint: checkpoint.block,
    ancestor: ancestor.block,
    ancestorTime: ancestor.time,
  });
  run.summary.reorgs++;
  state.standOn(ancestor);
  state.book = await serial.run(() => loadWalletBook(analytics, chain));
  state.channels = await serial.run(() => loadChannelBook(analytics, chain));
  if (run.history) run.history.reset(await serial.run(() => loadHistoryMemory(analytics, chain)));
  return true;
}
