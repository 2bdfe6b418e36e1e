/**
 * The indexer's main loop: read batches of blocks ahead (several in flight), commit them in order,
 * each with its checkpoint; check at every commit that the chain still holds the checkpoint's block,
 * and rewind past a reorg; in `follow` mode, keep tailing the head `reorgDepth` blocks behind it.
 */

import type { Analytics } from "../analytics/duckdb.ts";
import { upsertListings } from "../analytics/listings.ts";
import { BASE_USDC, BLOCK_SECONDS, WEEK_BLOCKS, X402_UPTO_PROXY_ADDRESS } from "../chain/base.ts";
import { DEVNET_FACILITATOR_SIGNER, isAnvil } from "../chain/devnet/signer.ts";
import type { FacilitatorRegistry } from "../chain/facilitators.ts";
import { AppError } from "../common/errors.ts";
import type { LogFields, LogLevel } from "../common/log.ts";
import { sleep } from "../common/sleep.ts";
import { loadDepositorsRead, loadReadHistories } from "./balances.ts";
import {
  ChainMovedError,
  chooseSenderStrategy,
  fetchHeaders,
  type SenderChoice,
  type SenderStrategy,
} from "./block-data.ts";
import { BlockClock, type BlockHeader, parseHeader } from "./blocks.ts";
import type { SkippedLog } from "./classify.ts";
import { countEvent } from "./counted.ts";
import {
  AUTHORIZATION_USED_TOPIC,
  hexNumber,
  TRANSFER_TOPIC,
  UPTO_SETTLED_TOPIC,
  UPTO_SETTLED_WITH_PERMIT_TOPIC,
} from "./decode.ts";
import { startListingsRefresh } from "./discovery-refresh.ts";
import { type FetchContext, type FetchedBatch, fetchBatch } from "./fetch-batch.ts";
import type { WalletBook } from "./funding.ts";
import {
  FundingHistory,
  type FundingLimit,
  type HistoryMemory,
  HUB_SENDERS,
  MAX_FUNDING_LEVELS,
} from "./history.ts";
import { LogFetcher, type SpanChange } from "./logs.ts";
import { findCommonAncestor, rewindTo } from "./reorg.ts";
import type { BackoffOptions } from "./rpc/backoff.ts";
import { type RetryEvent, RpcClient } from "./rpc/client.ts";
import { RpcGaveUpError } from "./rpc/rpc-errors.ts";
import { Serial } from "./serial.ts";
import { type Cursor, loadWalletBook, readState } from "./state.ts";
import { BatchWriter } from "./writer.ts";

/** Blocks of confirmations in --follow, and how far back block hashes are kept: 64 blocks, 128 s of Base. */
export const DEFAULT_REORG_DEPTH = 64;
/** Largest batch (and eth_getLogs span): Alchemy's paid-plan span limit; smaller where a provider refuses it. */
export const DEFAULT_BATCH_BLOCKS = 2_000;
/** Batches read ahead of the one being committed. */
export const DEFAULT_CONCURRENCY = 4;
/** How `tx.from` is fetched; docs/indexer.md has the measurements behind the choice. */
export const DEFAULT_SENDER_STRATEGY: SenderChoice = "auto";
/**
 * The oldest inflow a funding history read takes, in blocks before the outflow it paid for: 26 weeks.
 * Coverage (`scan.ts`) ends a read at the inflows that explain the wallet's balance, so this binds only
 * money that sat longer in one wallet, or a node without old state (balance unknown). Each doubling of
 * it costs about one more eth_getLogs per such read, as spans grow (docs/indexer.md, measured in
 * docs/benchmarks.md); half a year catches a buyer funded a season ahead and left dormant.
 */
export const DEFAULT_FUNDING_LOOKBACK = 26 * WEEK_BLOCKS;

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

export type IndexerEvent =
  | {
      type: "start";
      from: number;
      /** Unix seconds of block `from - 1`, where the run stands (the checkpoint, when resumed). */
      time: number;
      target: number;
      head: number;
      resumed: boolean;
      txFrom: SenderStrategy;
    }
  | {
      type: "batch";
      from: number;
      to: number;
      /** Unix seconds of block `to`. */
      time: number;
      target: number;
      /** The chain's head as last read. */
      head: number;
      logs: number;
      payments: number;
      candidates: number;
      transfers: number;
      /** Funding history rows this batch added. */
      history: number;
    }
  /** The funding history stopped short: the level cap, or a node without a block's state (once a run). */
  | ({ type: "funding_limit" } & FundingLimit)
  | { type: "reorg"; checkpoint: number; ancestor: number; ancestorTime: number }
  | { type: "chain_moved"; from: number; to: number; reason: string }
  | ({ type: "retry" } & RetryEvent)
  | ({ type: "span" } & SpanChange)
  | { type: "listings"; listings: number; items: number; pages: number }
  | { type: "listings_failed"; reason: string }
  | { type: "caught_up"; block: number; head: number }
  /** A USDC Transfer above `MAX_USDC_AMOUNT`, stored nowhere (`classify.ts`); `amount` in decimal digits. */
  | { type: "skipped"; tx: string; logIndex: number; block: number; amount: string }
  /** A change in whether the RPC answers, from the follower (follower.ts): a log line of its own. */
  | { type: "rpc_state"; level: LogLevel; msg: string; fields: LogFields }
  /** A run that stops, not a follower: what it indexed and how much of that a reorg could still change. */
  | ({ type: "finished"; reorgDepth: number; heldBack: number } & Pick<
      IndexerSummary,
      "block" | "indexed" | "head" | "unconfirmed"
    >);

export interface IndexerSummary {
  /** The checkpoint when the run ended. */
  block: number;
  payments: number;
  candidates: number;
  transfers: number;
  /** Transfers stored as funding history (`history.ts`), beside the `transfers` the commit rule kept. */
  history: number;
  batches: number;
  reorgs: number;
  /** The blocks this run committed, or null when it committed none. */
  indexed: { from: number; to: number } | null;
  /** The chain's head when the run ended. */
  head: number;
  /**
   * How many of the indexed blocks are within `reorgDepth` of the head, so not final yet: an explicit
   * --to-block near the head, or a chain younger than the depth. A later run corrects a reorg of them.
   */
  unconfirmed: number;
  stopped: "done" | "signal";
  rpc: RpcClient["stats"];
}

/** A usage mistake in the options (a gap after the checkpoint, a range past the head). */
export class IndexerInputError extends AppError {
  constructor(message: string) {
    super(400, "bad_range", message);
  }
}

const MAX_CHAIN_MOVED = 8;
/** Most rows in one commit when batches read ahead are committed together. */
const MAX_GROUP_ROWS = 50_000;

/** A batch being read; `value` is set once it is. */
interface Pending {
  promise: Promise<FetchedBatch>;
  value?: FetchedBatch;
}

const size = (b: FetchedBatch) => b.payments.length + b.candidates.length + b.transfers.length;

/** Events carry numbers and strings only, so that any listener can print them as JSON. */
const skippedEvent = (log: SkippedLog): IndexerEvent => ({
  type: "skipped",
  ...log,
  amount: String(log.amount),
});

/** Consecutive batches as one. */
function merge(group: readonly FetchedBatch[]): FetchedBatch {
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
  };
}

/**
 * Indexes x402 payments on Base from a JSON-RPC endpoint into the analytics database.
 *
 * @example
 *   await runIndexer({
 *     analytics, rpc: { url: "http://127.0.0.1:8545" },
 *     registry: FacilitatorRegistry.base().withSigners([devnet.facilitatorAccount.address]),
 *     fromBlock: 1, toBlock: 100,
 *   });
 */
export async function runIndexer(options: IndexerOptions): Promise<IndexerSummary> {
  const onEvent = options.onEvent;
  // Every event goes to the metrics too (counted.ts).
  const emit = (event: IndexerEvent) => {
    countEvent(event);
    onEvent?.(event);
  };
  const signal = options.signal;
  const reorgDepth = options.reorgDepth ?? DEFAULT_REORG_DEPTH;
  const concurrency = Math.max(1, options.concurrency ?? DEFAULT_CONCURRENCY);
  const client = new RpcClient({
    ...options.rpc,
    signal,
    onRetry: (event) => emit({ type: "retry", ...event }),
  });
  const logs = new LogFetcher(
    client,
    // USDC's transfers and EIP-3009 settlements, and the upto proxy's settlements: one query for both.
    {
      address: [BASE_USDC, X402_UPTO_PROXY_ADDRESS],
      topic0: [TRANSFER_TOPIC, AUTHORIZATION_USED_TOPIC, UPTO_SETTLED_TOPIC, UPTO_SETTLED_WITH_PERMIT_TOPIC],
    },
    {
      maxSpan: Math.max(1, options.batchBlocks ?? DEFAULT_BATCH_BLOCKS),
      onSpanChange: (change) => emit({ type: "span", ...change }),
      signal,
    },
  );
  const registry = await withDevnetSigner(client, options.registry);
  const serial = new Serial();
  const analytics = options.analytics;
  const writer = new BatchWriter(analytics);
  const summary: IndexerSummary = {
    block: -1,
    payments: 0,
    candidates: 0,
    transfers: 0,
    history: 0,
    batches: 0,
    reorgs: 0,
    indexed: null,
    head: -1,
    unconfirmed: 0,
    stopped: "done",
    rpc: client.stats,
  };

  const header = async (block: number) => (await fetchHeaders(client, [block], { signal }))[0] as BlockHeader;
  const headNumber = async () => hexNumber(await client.call<string>("eth_blockNumber", []));

  // Where to start: after the stored checkpoint, else at the first block asked for.
  const state = await serial.run(() => readState(analytics));
  let head = await headNumber();
  let startBlock: number;
  let cursor: Cursor;
  let committed: boolean;
  if (state) {
    startBlock = state.startBlock;
    cursor = state.cursor;
    committed = true;
    if (options.fromBlock !== undefined && options.fromBlock > cursor.block + 1) {
      throw new IndexerInputError(
        `--from-block ${options.fromBlock} would leave blocks ${cursor.block + 1}-${options.fromBlock - 1} unindexed ` +
          `after this analytics database's checkpoint ${cursor.block}; use a fresh --data directory for another range`,
      );
    }
  } else {
    startBlock = options.fromBlock ?? (await defaultFromBlock(client, registry, head));
    if (startBlock > head)
      throw new IndexerInputError(`--from-block ${startBlock} is past the chain head ${head}`);
    cursor = await cursorBefore(startBlock);
    committed = false;
  }
  if (options.toBlock !== undefined && options.toBlock > head && !options.follow) {
    throw new IndexerInputError(
      `--to-block ${options.toBlock} is past the chain head ${head} (use --follow to wait for it)`,
    );
  }
  const choice = options.senderStrategy ?? DEFAULT_SENDER_STRATEGY;
  const strategy: SenderStrategy =
    choice === "auto" ? await chooseSenderStrategy(client, registry.addresses()) : choice;
  let clock = new BlockClock(cursor.block, cursor.time);
  let book: WalletBook = await serial.run(() => loadWalletBook(analytics));
  const memory = async (): Promise<HistoryMemory> => ({
    reads: await loadReadHistories(analytics),
    depositors: await loadDepositorsRead(analytics),
  });
  const lookback = options.fundingLookback ?? DEFAULT_FUNDING_LOOKBACK;
  const history =
    lookback > 0
      ? new FundingHistory(
          client,
          // Its own span: the sparse answers of a recipient filter must not grow or shrink the batches'.
          new LogFetcher(
            client,
            { address: BASE_USDC, topic0: [TRANSFER_TOPIC] },
            {
              maxSpan: Math.max(1, options.batchBlocks ?? DEFAULT_BATCH_BLOCKS, lookback),
              initialSpan: Math.max(
                1,
                options.batchBlocks ?? DEFAULT_BATCH_BLOCKS,
                Math.min(lookback, HISTORY_FIRST_SPAN),
              ),
              onSpanChange: (change) =>
                emit({ type: "span", ...change, reason: `funding history: ${change.reason}` }),
              signal,
            },
          ),
          {
            lookback,
            hubSenders: HUB_SENDERS,
            maxLevels: MAX_FUNDING_LEVELS,
            // A chain younger than the lookback (the devnet) is read from its first block.
            floor: await earliestBlock(client),
            concurrency,
            signal,
            onSkipped: (log) => emit(skippedEvent(log)),
            onLimit: (limit) => emit({ type: "funding_limit", ...limit }),
          },
          await serial.run(memory),
        )
      : undefined;
  summary.block = cursor.block;

  const targetFor = (h: number) =>
    options.toBlock !== undefined && !options.follow
      ? Math.min(options.toBlock, h)
      : Math.min(options.toBlock ?? Infinity, h - reorgDepth);
  emit({
    type: "start",
    from: cursor.block + 1,
    time: cursor.time,
    target: targetFor(head),
    head,
    resumed: committed,
    txFrom: strategy,
  });

  const discovery = options.discovery
    ? startListingsRefresh({
        ...options.discovery,
        follow: options.follow ?? false,
        write: (listings) => serial.run(() => upsertListings(analytics, listings)),
        emit,
        signal,
      })
    : undefined;

  let chainMoved = 0;
  let reportedCaughtUp = -1;
  /** The lowest block this run committed (a reorg can rewind below where it began). */
  let firstIndexed: number | undefined;
  try {
    for (;;) {
      if (signal?.aborted) break;
      const target = targetFor(head);
      if (cursor.block < target) {
        const outcome = await backfill(target);
        if (outcome === "moved") {
          if (++chainMoved >= MAX_CHAIN_MOVED) {
            throw new ChainMovedError(
              `the chain kept changing under the indexer ${chainMoved} times in a row`,
            );
          }
          await sleep(BLOCK_SECONDS * 500, signal);
          await checkReorg();
        } else chainMoved = 0;
        if (outcome !== "stopped") head = await headNumber();
        continue;
      }
      if (!options.follow || (options.toBlock !== undefined && cursor.block >= options.toBlock)) break;
      if (reportedCaughtUp !== cursor.block) emit({ type: "caught_up", block: cursor.block, head });
      reportedCaughtUp = cursor.block;
      await sleep(options.pollMs ?? BLOCK_SECONDS * 1000, signal);
      if (signal?.aborted) break;
      head = await headNumber();
    }
  } catch (error) {
    if (!(signal?.aborted && isAbort(error))) throw error;
  } finally {
    await discovery?.stop();
  }
  summary.stopped = signal?.aborted ? "signal" : "done";
  summary.block = cursor.block;
  summary.head = head;
  if (firstIndexed !== undefined && cursor.block >= firstIndexed) {
    summary.indexed = { from: firstIndexed, to: cursor.block };
    summary.unconfirmed = Math.max(0, cursor.block - Math.max(firstIndexed - 1, head - reorgDepth));
  }
  if (!options.follow) {
    emit({
      type: "finished",
      block: cursor.block,
      indexed: summary.indexed,
      head,
      unconfirmed: summary.unconfirmed,
      reorgDepth,
      // Blocks after the checkpoint left unindexed only because they are within the reorg depth.
      heldBack:
        options.toBlock === undefined ? Math.max(0, head - Math.max(cursor.block, head - reorgDepth)) : 0,
    });
  }
  return summary;

  /** Reads batches up to `target` (several ahead) and commits them in order. */
  async function backfill(target: number): Promise<"done" | "reorg" | "moved" | "stopped"> {
    const ctx: FetchContext = {
      client,
      logs,
      registry: registry,
      clock,
      strategy,
      concurrency,
      signal,
    };
    const inflight: Pending[] = [];
    let next = cursor.block + 1;
    const fill = () => {
      while (inflight.length < concurrency && next <= target && !signal?.aborted) {
        const to = Math.min(target, next + logs.span - 1);
        const pending: Pending = { promise: fetchBatch(ctx, next, to) };
        // Batches abandoned after a reorg may still fail: their errors are not ours any more.
        pending.promise.then(
          (value) => {
            pending.value = value;
          },
          () => {},
        );
        inflight.push(pending);
        next = to + 1;
      }
    };
    fill();
    while (inflight.length > 0) {
      if (signal?.aborted) return "stopped";
      const group: FetchedBatch[] = [];
      try {
        group.push(await (inflight.shift() as Pending).promise);
      } catch (error) {
        if (error instanceof ChainMovedError) {
          emit({ type: "chain_moved", from: cursor.block + 1, to: target, reason: error.message });
          return "moved";
        }
        throw error;
      }
      if (group[0]?.parentHash !== cursor.hash) {
        // The checkpoint still on the chain means the node answered from another fork for a moment.
        return (await checkReorg()) ? "reorg" : "moved";
      }
      // Batches already read behind it join the same transaction: fewer commits when reading
      // outruns writing. Each must follow the one before it on the chain.
      let rows = size(group[0] as FetchedBatch);
      for (let ahead = inflight[0]?.value; ahead && rows < MAX_GROUP_ROWS; ahead = inflight[0]?.value) {
        if (ahead.parentHash !== (group.at(-1) as FetchedBatch).end.hash) break;
        group.push(ahead);
        rows += size(ahead);
        inflight.shift();
      }
      fill();
      try {
        await commit(merge(group));
      } catch (error) {
        // Only the funding history throws this at commit, before anything is written.
        if (!(error instanceof ChainMovedError)) throw error;
        emit({ type: "chain_moved", from: cursor.block + 1, to: target, reason: error.message });
        return "moved";
      }
    }
    return "done";
  }

  async function commit(batch: FetchedBatch): Promise<void> {
    // Read against the book before this batch: it says which payers are new.
    const funding = history ? await history.collect(batch, book, clock) : undefined;
    for (const log of batch.skipped) emit(skippedEvent(log));
    book.addPayments(batch.payments);
    const transfers = book.select(batch.transfers);
    const previous = committed ? cursor : undefined;
    const counts = await serial.run(() =>
      writer.commit(
        { ...batch, transfers, history: funding?.transfers, balances: funding?.balances },
        { startBlock, previous, reorgDepth },
      ),
    );
    if (funding) history?.remember(funding);
    committed = true;
    cursor = batch.end;
    firstIndexed = Math.min(firstIndexed ?? batch.from, batch.from);
    summary.batches++;
    summary.payments += counts.payments;
    summary.candidates += counts.candidates;
    summary.transfers += counts.transfers;
    summary.history += counts.history;
    summary.block = cursor.block;
    emit({
      type: "batch",
      from: batch.from,
      to: batch.to,
      time: batch.end.time,
      target: targetFor(head),
      head,
      logs: batch.logs,
      ...counts,
    });
  }

  /** If the chain no longer holds the checkpoint's block, rewinds to the common ancestor; says whether it did. */
  async function checkReorg(): Promise<boolean> {
    if (!committed) {
      // Nothing stored yet: just start again from the chain as it is now.
      cursor = await cursorBefore(startBlock);
      clock = new BlockClock(cursor.block, cursor.time);
      return false;
    }
    // A node that cannot serve the checkpoint's block even after retries fails the run (ChainMovedError)
    // rather than triggering a rewind on no evidence.
    const now = await header(cursor.block);
    if (now.hash === cursor.hash) return false;
    const ancestor = await serial.run(() => findCommonAncestor(analytics, client, cursor));
    await serial.run(() => rewindTo(analytics, ancestor));
    emit({ type: "reorg", checkpoint: cursor.block, ancestor: ancestor.block, ancestorTime: ancestor.time });
    summary.reorgs++;
    cursor = ancestor;
    clock = new BlockClock(cursor.block, cursor.time);
    book = await serial.run(() => loadWalletBook(analytics));
    if (history) history.reset(await serial.run(memory));
    return true;
  }

  /** The cursor standing just before `block`: the parent's hash and time, from `block`'s own header. */
  async function cursorBefore(block: number): Promise<Cursor> {
    const h = await header(block).catch((error) => {
      // An RPC that is down says nothing about the block: that is an outage, not a bad range.
      if (error instanceof RpcGaveUpError) throw error;
      throw new IndexerInputError(`cannot start at block ${block}: ${(error as Error).message}`);
    });
    return { block: block - 1, hash: h.parentHash, time: h.timestamp - BLOCK_SECONDS };
  }
}

/**
 * The chain's first block the node serves: Base's is 0, a test devnet may start higher (anvil's
 * `--number`), and a node that expired old history may answer its oldest kept one (and refuse logs below it).
 */
async function earliestBlock(client: RpcClient): Promise<number> {
  const earliest = await client.call<{ number?: string } | null>("eth_getBlockByNumber", ["earliest", false]);
  return earliest?.number ? hexNumber(earliest.number) : 0;
}

/**
 * On anvil (the project's devnet), its facilitator's signer is a facilitator too: without it every
 * settlement of `devnet` would be a candidate and no merchant found, unless the user knew to say
 * `--facilitator`. A node that does not answer `web3_clientVersion` is no anvil.
 */
async function withDevnetSigner(
  client: RpcClient,
  registry: FacilitatorRegistry,
): Promise<FacilitatorRegistry> {
  const version = await client.call<string>("web3_clientVersion", []).catch(() => "");
  if (typeof version !== "string" || !isAnvil(version)) return registry;
  if (registry.addresses().includes(DEVNET_FACILITATOR_SIGNER.toLowerCase())) return registry;
  return registry.withSigners([DEVNET_FACILITATOR_SIGNER], "the devnet's facilitator (anvil)");
}

/**
 * The first block at or after the registry's earliest start date (Base's clock: 2 s a block back
 * from the head), or the chain's earliest block.
 */
async function defaultFromBlock(
  client: RpcClient,
  registry: FacilitatorRegistry,
  head: number,
): Promise<number> {
  const [latest, earliest] = await client.batch<unknown>([
    { method: "eth_getBlockByNumber", params: [`0x${head.toString(16)}`, false] },
    { method: "eth_getBlockByNumber", params: ["earliest", false] },
  ]);
  const headHeader = parseHeader(latest, head);
  const first = earliest ? hexNumber((earliest as { number: string }).number) : 0;
  const since = registry.earliestSince();
  const back = Math.floor((headHeader.timestamp - since) / BLOCK_SECONDS);
  return Math.max(first, head - back, 0);
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError");
}
