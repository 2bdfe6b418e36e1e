/**
 * Headers and transaction senders (`tx.from`) for the blocks a batch needs. Logs do not say who sent a
 * transaction, and that sender is what tells an x402 facilitator's settlement from any other.
 *
 * Four ways, chosen by `strategy` (docs/indexer.md has the measurements and the rule):
 * - "trace": one trace_filter over the batch's blocks for the calls made by the known facilitator
 *   signers (`filterTraces`, asked while the logs are read): one trace per settlement, one call per
 *   batch. The settlements it does not cover (an unknown sender: a facilitator candidate) are read with
 *   eth_getTransactionByHash. Served by anvil, Erigon and reth; not by most hosted Base endpoints.
 * - "mixed": eth_getTransactionByHash for each settlement, batched, except in blocks where settlements
 *   are most of the block (`MIXED_FULL_SHARE`), which come whole with eth_getBlockByNumber(n, true).
 *   Served everywhere; what `auto` picks where trace_filter is not served.
 * - "tx": eth_getTransactionByHash for each settlement, whatever the block.
 * - "block": eth_getBlockByNumber(n, true) for each block holding a settlement: one call gives every
 *   transaction's sender. The payload is the whole block.
 * Each way reads the transaction's input with its sender (a trace's call input is the transaction's for its
 * top-level call): the settlement's ERC-8021 builder codes are decoded from it at no further cost
 * (builder-codes.ts).
 * A block's hash and time come from its logs when they carry `blockTimestamp` (anvil, current geth-based
 * nodes): then only the batch's first and last headers are read. Without it, each settlement block's
 * header is read too.
 */

import type { BlockHeader } from "../chain/block-clock.ts";
import { sleep } from "../common/sleep.ts";
import { parseHeader } from "./block-header.ts";
import { type BuilderCodes, builderCodesOf } from "./builder-codes.ts";
import { hexNumber } from "./decode.ts";
import { chunk, mapPool } from "./pool.ts";
import type { RpcCall, RpcClient } from "./rpc/client.ts";
import { RpcError, RpcGaveUpError } from "./rpc/rpc-errors.ts";

export type SenderStrategy = "block" | "tx" | "trace" | "mixed";
/** "auto" picks one by what the RPC serves: see `chooseSenderStrategy`. */
export type SenderChoice = SenderStrategy | "auto";
export const SENDER_CHOICES: readonly SenderChoice[] = ["auto", "mixed", "block", "tx", "trace"];

/**
 * "mixed" reads a block whole when its settlements are at least this share of its transactions (as far
 * as its logs show them). A full block costs one call where transactions cost one each, and about the
 * same bytes once most of the block is wanted; at Base's density (a few percent) it would cost 20-50x
 * the bytes of the transactions alone.
 */
export const MIXED_FULL_SHARE = 0.5;

/**
 * The way to fetch senders for an RPC, by what it serves: "trace" when it answers trace_filter by sender
 * (asked once, over its latest block), "mixed" anywhere else. One or two calls, once per run.
 */
export async function chooseSenderStrategy(
  client: RpcClient,
  signers: readonly string[],
): Promise<SenderStrategy> {
  const head = await client.call<string>("eth_blockNumber", []);
  const traces = await filterTraces(client, hexNumber(head), hexNumber(head), signers, { probe: true });
  return traces === undefined ? "mixed" : "trace";
}

export interface BlockNeed {
  number: number;
  /** Transactions whose sender we need (lower-case hashes); empty for a header alone. */
  txs: ReadonlySet<string>;
  /** The block's hash and time as its logs give them (`blockTimestamp`): no header needs reading. */
  fromLogs?: { hash: string; timestamp: number };
  /** At least this many transactions are in the block: its logs' highest `transactionIndex` + 1. */
  txCountAtLeast?: number;
}

export interface BlockData {
  header: BlockHeader;
  /** tx hash -> sender (lower-case), for the transactions asked for. */
  senders: Map<string, string>;
  /** tx hash -> the builder codes its input ends with, for those of the transactions asked for that have any. */
  codes: Map<string, BuilderCodes>;
}

/** The chain changed while we read it (a header and a transaction disagree): read the batch again. */
export class ChainMovedError extends Error {
  override name = "ChainMovedError";
}

export interface BlockDataOptions {
  strategy: SenderStrategy;
  /** HTTP requests in flight at once. */
  concurrency: number;
  /** How often a missing block or transaction (a node behind its load balancer) is asked again. */
  missingRetries?: number;
  /**
   * "trace": the calls of the known facilitator signers in the batch's blocks, asked for by the caller
   * (`filterTraces`) while it read the logs; transactions by hash cover what they do not.
   */
  filtered?: Promise<Trace[] | undefined>;
  signal?: AbortSignal;
}

const HEADERS_PER_REQUEST = 100;
const FULL_BLOCKS_PER_REQUEST = 4;
const TXS_PER_REQUEST = 200;

/** A call trace in the Parity/OpenEthereum format (trace_filter): the fields read here. */
export interface Trace {
  action?: { from?: string; input?: string };
  traceAddress?: unknown[];
  transactionHash?: string | null;
  blockHash?: string | null;
  /** A number in the trace format; taken as a quantity too. */
  blockNumber?: number | string | null;
}

interface RawTx {
  hash?: string;
  from?: string;
  input?: string;
  blockNumber?: string | null;
  blockHash?: string | null;
}

/** Whether `strategy` reads `need`'s block whole. */
function readsWhole(need: BlockNeed, strategy: SenderStrategy): boolean {
  if (need.txs.size === 0) return false;
  if (strategy === "block") return true;
  if (strategy !== "mixed" || need.txs.size < 2) return false;
  return need.txs.size >= MIXED_FULL_SHARE * Math.max(need.txCountAtLeast ?? 0, need.txs.size);
}

/** Fetches what `needs` asks for; every block and transaction must be found. */
export async function fetchBlockData(
  client: RpcClient,
  needs: readonly BlockNeed[],
  options: BlockDataOptions,
): Promise<Map<number, BlockData>> {
  const { strategy } = options;
  const whole = new Set(needs.filter((need) => readsWhole(need, strategy)));
  const read = needs.filter((need) => whole.has(need) || !need.fromLogs);
  const blockCalls = new Map<BlockNeed, RpcCall>(
    read.map((need) => [
      need,
      { method: "eth_getBlockByNumber", params: [`0x${need.number.toString(16)}`, whole.has(need)] },
    ]),
  );
  // Requests grouped by size: full blocks are large, headers small.
  const calls = [...blockCalls.values()];
  const groups = [
    ...chunk(
      calls.filter((c) => c.params[1] === false),
      HEADERS_PER_REQUEST,
    ),
    ...chunk(
      calls.filter((c) => c.params[1] === true),
      FULL_BLOCKS_PER_REQUEST,
    ),
  ];
  const answers = await answersOf(client, groups, options);

  const out = new Map<number, BlockData>();
  for (const need of needs) {
    const call = blockCalls.get(need);
    const raw = call && (answers.get(call) as { transactions?: (RawTx | string)[] });
    const header = raw
      ? parseHeader(raw, need.number)
      : { number: need.number, ...(need.fromLogs as { hash: string; timestamp: number }), parentHash: "" };
    const senders = new Map<string, string>();
    const codes = new Map<string, BuilderCodes>();
    if (whole.has(need)) {
      for (const tx of raw?.transactions ?? []) {
        if (typeof tx === "string" || !tx.hash || !tx.from) continue;
        const hash = tx.hash.toLowerCase();
        if (!need.txs.has(hash)) continue;
        senders.set(hash, tx.from.toLowerCase());
        takeCodes(codes, hash, tx.input);
      }
      for (const tx of need.txs) {
        if (!senders.has(tx))
          throw new ChainMovedError(`block ${need.number} no longer holds transaction ${tx}`);
      }
    }
    out.set(need.number, { header, senders, codes });
  }

  if (strategy === "trace") {
    const byBlock = new Map(needs.filter((need) => need.txs.size > 0).map((need) => [need.number, need]));
    for (const trace of (await options.filtered) ?? []) {
      const number = trace.blockNumber;
      const need = byBlock.get(typeof number === "string" ? hexNumber(number) : (number ?? -1));
      if (need) takeSender(trace, need, out.get(need.number) as BlockData);
    }
  }
  // Every sender still missing, by hash: all of them for "tx", the thin blocks' for "mixed", the
  // unknown senders' for "trace".
  const missing = needs.flatMap((need) => {
    const senders = (out.get(need.number) as BlockData).senders;
    return [...need.txs].filter((tx) => !senders.has(tx)).map((tx) => ({ tx, block: need.number }));
  });
  const txCalls = missing.map(({ tx }) => ({ method: "eth_getTransactionByHash", params: [tx] }));
  const txAnswers = await answersOf(client, chunk(txCalls, TXS_PER_REQUEST), options);
  missing.forEach(({ tx, block }, i) => {
    const raw = txAnswers.get(txCalls[i] as RpcCall) as RawTx;
    const data = out.get(block) as BlockData;
    if (!raw.from || !raw.blockNumber || hexNumber(raw.blockNumber) !== block) {
      throw new ChainMovedError(`transaction ${tx} is no longer in block ${block}`);
    }
    if (raw.blockHash?.toLowerCase() !== data.header.hash) {
      throw new ChainMovedError(`transaction ${tx} is in another version of block ${block}`);
    }
    data.senders.set(tx, raw.from.toLowerCase());
    takeCodes(data.codes, tx, raw.input);
  });
  return out;
}

/** Records the builder codes `input` ends with, if any. */
function takeCodes(codes: Map<string, BuilderCodes>, hash: string, input: string | undefined): void {
  const found = builderCodesOf(input);
  if (found) codes.set(hash, found);
}

/** The answers to `groups` of calls, each group one batch, `concurrency` batches at once. */
async function answersOf(
  client: RpcClient,
  groups: RpcCall[][],
  options: BlockDataOptions,
): Promise<Map<RpcCall, unknown>> {
  const answers = new Map<RpcCall, unknown>();
  await mapPool(groups, options.concurrency, async (group) => {
    const results = await batchUntilFound(client, group, options);
    group.forEach((call, i) => {
      answers.set(call, results[i]);
    });
  });
  return answers;
}

/** Records the sender of a transaction `need` asks for: the top-level call (empty trace address) is its. */
function takeSender(trace: Trace, need: BlockNeed, data: BlockData): void {
  const hash = trace.transactionHash?.toLowerCase();
  if (!hash || !need.txs.has(hash) || trace.traceAddress?.length !== 0 || !trace.action?.from) return;
  if (trace.blockHash?.toLowerCase() !== data.header.hash) {
    throw new ChainMovedError(`the traces of block ${need.number} are of another version of it`);
  }
  data.senders.set(hash, trace.action.from.toLowerCase());
  takeCodes(data.codes, hash, trace.action.input);
}

/** Clients whose node does not serve trace_filter: not asked again. */
const noTraceFilter = new WeakSet<RpcClient>();

/**
 * The calls `signers` made in blocks `from` to `to`, in one trace_filter; undefined when the node does
 * not serve it, refuses the range or keeps failing on it (a long range can time out where a block does
 * not), and transactions by hash then cover every settlement. Only an abort rejects. A `probe` (the
 * choice of a way) takes any refusal as "not served".
 */
export async function filterTraces(
  client: RpcClient,
  from: number,
  to: number,
  signers: readonly string[],
  { probe = false } = {},
): Promise<Trace[] | undefined> {
  if (noTraceFilter.has(client)) return undefined;
  if (signers.length === 0 && !probe) return undefined;
  try {
    const traces = await client.call<Trace[] | null>("trace_filter", [
      {
        fromBlock: `0x${from.toString(16)}`,
        toBlock: `0x${to.toString(16)}`,
        // A probe without signers asks for the zero address's calls: an empty answer, if served.
        fromAddress: signers.length > 0 ? signers : ["0x0000000000000000000000000000000000000000"],
      },
    ]);
    return Array.isArray(traces) ? traces : undefined;
  } catch (error) {
    if (error instanceof RpcGaveUpError) return undefined;
    if (!(error instanceof RpcError)) throw error;
    if (error.kind === "fatal" || probe) noTraceFilter.add(client);
    return undefined;
  }
}

/** Headers of `numbers` (in that order); a block the node does not have yet is asked again a few times. */
export async function fetchHeaders(
  client: RpcClient,
  numbers: readonly number[],
  options: { signal?: AbortSignal; missingRetries?: number } = {},
): Promise<BlockHeader[]> {
  const calls = numbers.map((n) => ({
    method: "eth_getBlockByNumber",
    params: [`0x${n.toString(16)}`, false],
  }));
  const results = await batchUntilFound(client, calls, options);
  return results.map((raw, i) => parseHeader(raw, numbers[i] as number));
}

/**
 * A null result for a block or transaction we know exists means the node that answered is behind
 * (providers balance calls over several nodes): ask again a few times before calling it an error.
 */
async function batchUntilFound(
  client: RpcClient,
  calls: RpcCall[],
  options: { signal?: AbortSignal; missingRetries?: number },
): Promise<unknown[]> {
  const results = await client.batch<unknown>(calls);
  const retries = options.missingRetries ?? 5;
  for (let attempt = 1; attempt <= retries; attempt++) {
    const missing = results.flatMap((r, i) => (r == null ? [i] : []));
    if (missing.length === 0) return results;
    await sleep(250 * 2 ** (attempt - 1), options.signal);
    options.signal?.throwIfAborted();
    const again = await client.batch<unknown>(missing.map((i) => calls[i] as RpcCall));
    missing.forEach((index, k) => {
      results[index] = again[k];
    });
  }
  const missing = results.findIndex((r) => r == null);
  if (missing >= 0) {
    const call = calls[missing] as RpcCall;
    throw new ChainMovedError(
      `the RPC has no ${call.method === "eth_getTransactionByHash" ? "transaction" : "block"} ${call.params[0]}`,
    );
  }
  return results;
}
