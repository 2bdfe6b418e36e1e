/** What a run of the indexer is asked to do (`runIndexer`), its defaults, and the mistake of asking wrongly. */

import type { Analytics } from "../analytics/duckdb.ts";
import { WEEK_BLOCKS } from "../chain/base.ts";
import type { IndexClock } from "../chain/block-clock.ts";
import type { ChainRecord } from "../chain/chains.ts";
import type { FacilitatorRegistry } from "../chain/facilitators.ts";
import { AppError } from "../common/errors.ts";
import type { SenderChoice } from "./block-data.ts";
import type { IndexerEvent } from "./events.ts";
import type { BackoffOptions } from "./rpc/backoff.ts";

/**
 * Seconds of confirmations in --follow, and of block hashes kept below the checkpoint: 128 s, which is
 * `DEFAULT_REORG_DEPTH` blocks of 2 s and ten times as many of Base's 200 ms since Denim (`blocksIn`).
 */
export const DEFAULT_REORG_SECONDS = 128;
/** The default reorg depth on 2 s blocks (a devnet, Base before Denim). */
export const DEFAULT_REORG_DEPTH = 64;
/** Largest batch (and eth_getLogs span): Alchemy's paid-plan span limit; smaller where a provider refuses it. */
export const DEFAULT_BATCH_BLOCKS = 2_000;
/** Batches read ahead of the one being committed. */
export const DEFAULT_CONCURRENCY = 4;
/** How `tx.from` is fetched; docs/indexer.md has the measurements behind the choice. */
export const DEFAULT_SENDER_STRATEGY: SenderChoice = "auto";
/** The funding history's default reach: 26 weeks, in blocks by the chain's clock at the head (`blocksIn`). */
export const DEFAULT_FUNDING_LOOKBACK_WEEKS = 26;
/**
 * The oldest inflow a funding history read takes, in blocks before the outflow it paid for: 26 weeks of 2 s
 * blocks (a devnet, Base before Denim; since Denim the default is counted by Base's clock instead).
 * Coverage (`scan.ts`) ends a read at the inflows that explain the wallet's balance, so this binds only
 * money that sat longer in one wallet, or a node without old state (balance unknown). Each doubling of
 * it costs about one more eth_getLogs per such read, as spans grow (docs/indexer.md, measured in
 * docs/benchmarks-log.md); half a year catches a buyer funded a season ahead and left dormant.
 */
export const DEFAULT_FUNDING_LOOKBACK = DEFAULT_FUNDING_LOOKBACK_WEEKS * WEEK_BLOCKS;

/**
 * The blocks of the last `seconds` before block `head`, by `clock`: a default given in time kept in time when
 * blocks come faster (64 blocks were 128 s of Base, and are 12.8 s since Denim).
 */
export function blocksIn(clock: IndexClock, head: number, seconds: number): number {
  return head - clock.blockAtMs(clock.msOf(head) - seconds * 1000);
}

/**
 * The funding history's first span: a recipient filter's answers are sparse, so its spans grow (twice
 * after three answers that fit) up to the whole lookback, one call a level for most commits; starting
 * smaller keeps a hub's first answer (an exchange's weeks of deposits) from being huge, and a provider
 * that caps ranges shrinks it as it does the batches'.
 */
export const HISTORY_FIRST_SPAN = 100_000;

export interface IndexerOptions {
  analytics: Analytics;
  rpc: {
    url: string;
    /** Requests per second (each call of a batch counts); 0 = unlimited. */
    rps?: number;
    timeoutMs?: number;
    backoff?: BackoffOptions;
    maxBatch?: number;
    fetch?: typeof fetch;
  };
  registry: FacilitatorRegistry;
  /**
   * The chain indexed (a record of `chains.ts`): its rows are stored under its slug, its USDC and x402's
   * contracts read, its clock followed, and the RPC's chain id must be its. Default Base.
   */
  chain?: ChainRecord;
  /** First block of a fresh analytics database. Default: the first block at or after the registry's earliest start date. */
  fromBlock?: number;
  /** Last block to index. Default: the head minus `reorgDepth` (and, with `follow`, forever). */
  toBlock?: number;
  follow?: boolean;
  reorgDepth?: number;
  batchBlocks?: number;
  concurrency?: number;
  /** How senders are fetched; default "auto" (trace on anvil, full blocks elsewhere). */
  senderStrategy?: SenderChoice;
  /** How often --follow asks for the head, ms. Default 2,000 (one Base block). */
  pollMs?: number;
  /**
   * The oldest inflow the funding history (`history.ts`) reads, in blocks before the outflow (or first
   * payment) it may have paid for. Default `DEFAULT_FUNDING_LOOKBACK`; 0 = no history (only rule 1 of
   * `funding.ts`).
   */
  fundingLookback?: number;
  discovery?: { url: string; refreshMs?: number; fetch?: typeof fetch };
  signal?: AbortSignal;
  onEvent?: (event: IndexerEvent) => void;
}

/** A usage mistake in the options (a gap after the checkpoint, a range past the head). */
export class IndexerInputError extends AppError {
  constructor(message: string) {
    super(400, "bad_range", message);
  }
}
