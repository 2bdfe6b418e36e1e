/**
 * The x402 payments indexer: reads USDC settlements on Base from a JSON-RPC endpoint into the analytics database
 * the reports read. See docs/indexer.md.
 */

export {
  type BlockData,
  chooseSenderStrategy,
  SENDER_CHOICES,
  type SenderChoice,
  type SenderStrategy,
} from "./block-data.ts";
export { type CandidateSummary, listCandidates } from "./candidates.ts";
export { type DiscoveryOptions, type DiscoveryResult, fetchListings } from "./discovery.ts";
export { DEFAULT_DISCOVERY_REFRESH_MS } from "./discovery-refresh.ts";
export type { IndexerEvent, IndexerSummary } from "./events.ts";
export { DEFAULT_OUTAGE_BACKOFF, type Follower, type FollowerOptions, startFollower } from "./follower.ts";
export type { FollowerHealth } from "./follower-status.ts";
export { runIndexer } from "./indexer.ts";
export {
  DEFAULT_BATCH_BLOCKS,
  DEFAULT_CONCURRENCY,
  DEFAULT_FUNDING_LOOKBACK,
  DEFAULT_FUNDING_LOOKBACK_WEEKS,
  DEFAULT_REORG_DEPTH,
  DEFAULT_REORG_SECONDS,
  DEFAULT_SENDER_STRATEGY,
  IndexerInputError,
  type IndexerOptions,
} from "./options.ts";
export { createReporter, type Reporter } from "./progress.ts";
export { RpcClient, type RpcClientOptions } from "./rpc/client.ts";
export { RpcError, RpcGaveUpError } from "./rpc/rpc-errors.ts";
export { indexSolana, type SolanaIndexOptions, type SolanaIndexSummary } from "./solana/reader.ts";
