/**
 * The run's main loop: backfill up to the target, read the head again, and go on; in --follow, once
 * caught up, wait for the head to move. A chain that keeps moving under the indexer (a lagging node) is
 * waited out a few times in a row, then fails the run.
 */
import { BLOCK_SECONDS } from "../../chain/base.ts";
import { sleep } from "../../common/sleep.ts";
import { ChainMovedError } from "../block-data.ts";
import { backfill } from "./backfill.ts";
import { headNumber } from "./chain-reads.ts";
import { checkReorg } from "./reorg-check.ts";
import type { Run } from "./run.ts";
import { targetFor } from "./target.ts";

const MAX_CHAIN_MOVED = 8;

/** Returns when the run is done (past its target, not following) or stopped by its signal. */
export async function mainLoop(run: Run): Promise<void> {
  const { options, signal, state } = run;
  let chainMoved = 0;
  let reportedCaughtUp = -1;
  for (;;) {
    if (signal?.aborted) return;
    const target = targetFor(options, run.reorgDepth, state.head);
    if (state.cursor.block < target) {
      const outcome = await backfill(run, target);
      if (outcome === "moved") {
        if (++chainMoved >= MAX_CHAIN_MOVED) {
          throw new ChainMovedError(`the chain kept changing under the indexer ${chainMoved} times in a row`);
        }
        await sleep(BLOCK_SECONDS * 500, signal);
        await checkReorg(run);
      } else chainMoved = 0;
      if (outcome !== "stopped") state.head = await headNumber(run.client);
      continue;
    }
    if (!options.follow || (options.toBlock !== undefined && state.cursor.block >= options.toBlock)) return;
    if (reportedCaughtUp !== state.cursor.block) {
      run.emit({ type: "caught_up", block: state.cursor.block, head: state.head });
    }
    reportedCaughtUp = state.cursor.block;
    await sleep(options.pollMs ?? BLOCK_SECONDS * 1000, signal);
    if (signal?.aborted) return;
    state.head = await headNumber(run.client);
  }
}
