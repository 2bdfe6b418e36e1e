/**
 * The funding history a run reads at each commit (`../history.ts`), on a log fetcher of its own, and
 * what it remembers of earlier reads from the analytics database.
 */
import type { Analytics } from "../../analytics/duckdb.ts";
import type { ChainRecord } from "../../chain/chains.ts";
import { loadDepositorsRead, loadReadHistories } from "../balances.ts";
import { TRANSFER_TOPIC } from "../decode.ts";
import { skippedEvent } from "../events.ts";
import { FundingHistory, type HistoryMemory, HUB_SENDERS, MAX_FUNDING_LEVELS } from "../history.ts";
import { LogFetcher } from "../logs.ts";
import { DEFAULT_BATCH_BLOCKS, HISTORY_FIRST_SPAN } from "../options.ts";
import { earliestBlock } from "./chain-reads.ts";
import type { RunTools } from "./run.ts";

/**
 * The funding history for this run, or undefined when its lookback is 0. `defaultLookback`: the blocks of
 * 26 weeks by the chain's clock, when the options name none.
 */
export async function openFundingHistory(
  tools: RunTools,
  defaultLookback: number,
): Promise<FundingHistory | undefined> {
  const { options, client, emit, signal } = tools;
  const lookback = options.fundingLookback ?? defaultLookback;
  // Not `<= 0`: a lookback that is no number (NaN) turns the history off too.
  if (!(lookback > 0)) return undefined;
  const batchBlocks = options.batchBlocks ?? DEFAULT_BATCH_BLOCKS;
  // Its own span: the sparse answers of a recipient filter must not grow or shrink the batches'.
  const logs = new LogFetcher(
    client,
    { address: tools.chain.usdc.address, topic0: [TRANSFER_TOPIC] },
    {
      maxSpan: Math.max(1, batchBlocks, lookback),
      initialSpan: Math.max(1, batchBlocks, Math.min(lookback, HISTORY_FIRST_SPAN)),
      onSpanChange: (change) =>
        emit({ type: "span", ...change, reason: `funding history: ${change.reason}` }),
      dated: tools.clockDated,
      signal,
    },
  );
  return new FundingHistory(
    client,
    logs,
    {
      lookback,
      hubSenders: HUB_SENDERS,
      maxLevels: MAX_FUNDING_LEVELS,
      // A chain younger than the lookback (the devnet) is read from its first block.
      floor: await earliestBlock(client),
      usdc: tools.chain.usdc.address,
      concurrency: tools.concurrency,
      signal,
      onSkipped: (log) => emit(skippedEvent(log)),
      onLimit: (limit) => emit({ type: "funding_limit", ...limit }),
    },
    await tools.serial.run(() => loadHistoryMemory(tools.analytics, tools.chain)),
  );
}

/** What earlier funding history reads stored: the history starts from it, and again after a rewind. */
export async function loadHistoryMemory(analytics: Analytics, chain: ChainRecord): Promise<HistoryMemory> {
  return {
    reads: await loadReadHistories(analytics, chain),
    depositors: await loadDepositorsRead(analytics, chain),
  };
}
