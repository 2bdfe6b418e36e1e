/**
 * The indexer's main loop: read batches of blocks ahead (several in flight), commit them in order,
 * each with its checkpoint; check at every commit that the chain still holds the checkpoint's block,
 * and rewind past a reorg; in `follow` mode, keep tailing the head `reorgDepth` blocks behind it.
 *
 * Its parts are in `run/`: opening (`tools.ts`), where to start (`start.ts`), the funding history
 * (`funding-history.ts`), discovery (`discovery.ts`), the main loop (`main-loop.ts`), backfill and
 * commits (`backfill.ts`, `commit.ts`), reorgs (`reorg-check.ts`) and the summary (`summary.ts`), all
 * sharing one `Run` (`run.ts`) and its state (`run-state.ts`).
 */

import { clockOf } from "../chain/block-clock.ts";
import { chooseSenderStrategy, type SenderStrategy } from "./block-data.ts";
import type { IndexerSummary } from "./events.ts";
import {
  blocksIn,
  DEFAULT_FUNDING_LOOKBACK_WEEKS,
  DEFAULT_REORG_SECONDS,
  DEFAULT_SENDER_STRATEGY,
  type IndexerOptions,
} from "./options.ts";
import { startDiscovery } from "./run/discovery.ts";
import { openFundingHistory } from "./run/funding-history.ts";
import { mainLoop } from "./run/main-loop.ts";
import type { Run } from "./run/run.ts";
import { RunState } from "./run/run-state.ts";
import { findStart } from "./run/start.ts";
import { finish, newSummary } from "./run/summary.ts";
import { targetFor } from "./run/target.ts";
import { openTools } from "./run/tools.ts";
import { loadChannelBook, loadWalletBook } from "./state.ts";

/**
 * Indexes x402 payments on a chain (Base unless `options.chain` names another) from a JSON-RPC endpoint into
 * the analytics database.
 *
 * @example
 *   await runIndexer({
 *     analytics, rpc: { url: "http://127.0.0.1:8545" },
 *     registry: FacilitatorRegistry.base().withSigners([devnet.facilitatorAccount.address]),
 *     fromBlock: 1, toBlock: 100,
 *   });
 */
export async function runIndexer(options: IndexerOptions): Promise<IndexerSummary> {
  const tools = await openTools(options);
  const start = await findStart(tools);
  const choice = options.senderStrategy ?? DEFAULT_SENDER_STRATEGY;
  const strategy: SenderStrategy =
    choice === "auto" ? await chooseSenderStrategy(tools.client, tools.registry.addresses()) : choice;
  const book = await tools.serial.run(() => loadWalletBook(tools.analytics, tools.chain));
  // Defaults given in time, counted in the chain's blocks at the head (Base's are 200 ms since Denim).
  const clock = clockOf(tools.chain, start.cursor.block, start.cursor.time);
  const reorgDepth = options.reorgDepth ?? blocksIn(clock, start.head, DEFAULT_REORG_SECONDS);
  const history = await openFundingHistory(
    tools,
    blocksIn(clock, start.head, DEFAULT_FUNDING_LOOKBACK_WEEKS * 7 * 86_400),
  );
  const channels = await tools.serial.run(() => loadChannelBook(tools.analytics, tools.chain));
  const state = new RunState(tools.chain, start, book, channels);
  const summary = newSummary(tools.client, state.cursor.block);
  const run: Run = { ...tools, reorgDepth, strategy, history, summary, state };

  run.emit({
    type: "start",
    from: state.cursor.block + 1,
    time: state.cursor.time,
    target: targetFor(options, run.reorgDepth, state.head),
    head: state.head,
    reorgDepth,
    minuteBlocks: blocksIn(clock, start.head, 60),
    resumed: state.committed,
    txFrom: strategy,
  });
  const discovery = startDiscovery(run);
  try {
    await mainLoop(run);
  } catch (error) {
    if (!(run.signal?.aborted && isAbort(error))) throw error;
  } finally {
    await discovery?.stop();
  }
  return finish(run);
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError");
}
