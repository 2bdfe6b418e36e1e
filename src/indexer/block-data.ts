/**
 * Headers and transaction senders (`tx.from`) for the blocks a batch needs. Logs do not say who sent a
 * transaction, and that sender is what tells an x402 facilitator's settlement from any other.
 *
 * Three ways, chosen by `strategy` (docs/indexer.md has the measurements):
 * - "block": eth_getBlockByNumber(n, true) for each block holding a settlement: one call gives the
 *   header and every transaction's sender. Served everywhere; the payload is the whole block.
 * - "tx": eth_getBlockByNumber(n, false) for the header plus eth_getTransactionByHash for each
 *   settlement: more calls, fewer bytes when settlements are a small share of a block.
 * - "trace": the header plus the top-level call traces, which name each transaction's sender: first
 *   one trace_filter over the batch's blocks for the calls made by the known facilitator signers
 *   (`filterTraces`, asked while the logs are read: one trace per settlement instead of every call of
 *   every block), then trace_block(n)
 *   for blocks whose settlements it did not cover (an unknown sender: a facilitator candidate). Not
 *   served by most hosted Base endpoints (nor the public one), and costly where a node re-executes
 *   blocks to trace them; anvil stores traces when it mines, and answers 5-7x faster than with full
 *   blocks (it recovers every sender from its signature for those).
 * Blocks without settlements only need their header (hash and time), whatever the way.
 */
import { type BlockHeader, parseHeader } from "./blocks.ts";
import { hexNumber } from "./decode.ts";
import { chunk, mapPool } from "./pool.ts";
import type { RpcCall, RpcClient } from "./rpc/client.ts";
import { RpcError, RpcGaveUpError } from "./rpc/errors.ts";
import { sleep } from "./rpc/rate-limit.ts";

export type SenderStrategy = "block" | "tx" | "trace";
/** "auto" picks one from the RPC's client: see `chooseSenderStrategy`. */
export type SenderChoice = SenderStrategy | "auto";
export const SENDER_CHOICES: readonly SenderChoice[] = ["auto", "block", "tx", "trace"];

/**
 * The way to fetch senders for an RPC: "trace" on anvil (it keeps the traces of what it mines, and
 * must recover every sender's signature to serve full blocks, 7x slower), "block" anywhere else
 * (served by every node and provider; trace_block is often missing, or re-executes the block).
 */
export async function chooseSenderStrategy(client: RpcClient): Promise<SenderStrategy> {
  const version = await client.call<string>("web3_clientVersion", []).catch(() => "");
  return /^anvil\//i.test(version) ? "trace" : "block";
}

export interface BlockNeed {
  number: number;
  /** Transactions whose sender we need (lower-case hashes); empty for a header alone. */
  txs: ReadonlySet<string>;
}

export interface BlockData {
  header: BlockHeader;
  /** tx hash -> sender (lower-case), for the transactions asked for. */
  senders: Map<string, string>;
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
   * (`filterTraces`) while it read the logs; trace_block covers what they do not.
   */
  filtered?: Promise<Trace[] | undefined>;
  signal?: AbortSignal;
}

const HEADERS_PER_REQUEST = 100;
const FULL_BLOCKS_PER_REQUEST = 4;
const TXS_PER_REQUEST = 200;
const TRACES_PER_REQUEST = 2;

/** A call trace in the Parity/OpenEthereum format (trace_block, trace_filter): the fields read here. */
export interface Trace {
  action?: { from?: string };
  traceAddress?: unknown[];
  transactionHash?: string | null;
  blockHash?: string | null;
  /** A number in the trace format; taken as a quantity too. */
  blockNumber?: number | string | null;
}

interface RawTx {
  hash?: string;
  from?: string;
  blockNumber?: string | null;
  blockHash?: string | null;
}

/** Fetches what `needs` asks for; every block and transaction must be found. */
export async function fetchBlockData(
  client: RpcClient,
  needs: readonly BlockNeed[],
  options: BlockDataOptions,
): Promise<Map<number, BlockData>> {
  const full = options.strategy === "block";
  const calls: RpcCall[] = needs.map((need) => ({
    method: "eth_getBlockByNumber",
    params: [`0x${need.number.toString(16)}`, full && need.txs.size > 0],
  }));
  const txNeeds =
    options.strategy !== "tx"
      ? []
      : needs.flatMap((need) => [...need.txs].map((tx) => ({ tx, block: need.number })));
  const txCalls: RpcCall[] = txNeeds.map(({ tx }) => ({ method: "eth_getTransactionByHash", params: [tx] }));
  const traced = options.strategy === "trace" ? needs.filter((need) => need.txs.size > 0) : [];

  // Requests grouped by size: full blocks are large, headers and transactions small.
  const groups: RpcCall[][] = [];
  const small = calls.filter((c) => c.params[1] === false);
  const large = calls.filter((c) => c.params[1] === true);
  groups.push(...chunk(small, HEADERS_PER_REQUEST), ...chunk(large, FULL_BLOCKS_PER_REQUEST));
  groups.push(...chunk(txCalls, TXS_PER_REQUEST));
  const answers = new Map<RpcCall, unknown>();
  await mapPool(groups, options.concurrency, async (group) => {
    const results = await batchUntilFound(client, group, options);
    group.forEach((call, i) => {
      answers.set(call, results[i]);
    });
  });

  const out = new Map<number, BlockData>();
  needs.forEach((need, i) => {
    const raw = answers.get(calls[i] as RpcCall) as { transactions?: (RawTx | string)[] };
    const header = parseHeader(raw, need.number);
    const senders = new Map<string, string>();
    if (full && need.txs.size > 0) {
      for (const tx of raw.transactions ?? []) {
        if (typeof tx === "string" || !tx.hash || !tx.from) continue;
        const hash = tx.hash.toLowerCase();
        if (need.txs.has(hash)) senders.set(hash, tx.from.toLowerCase());
      }
      for (const tx of need.txs) {
        if (!senders.has(tx))
          throw new ChainMovedError(`block ${need.number} no longer holds transaction ${tx}`);
      }
    }
    out.set(need.number, { header, senders });
  });
  txNeeds.forEach(({ tx, block }, i) => {
    const raw = answers.get(txCalls[i] as RpcCall) as RawTx;
    const data = out.get(block) as BlockData;
    if (!raw.from || !raw.blockNumber || hexNumber(raw.blockNumber) !== block) {
      throw new ChainMovedError(`transaction ${tx} is no longer in block ${block}`);
    }
    if (raw.blockHash?.toLowerCase() !== data.header.hash) {
      throw new ChainMovedError(`transaction ${tx} is in another version of block ${block}`);
    }
    data.senders.set(tx, raw.from.toLowerCase());
  });
  if (traced.length > 0) {
    const byBlock = new Map(traced.map((need) => [need.number, need]));
    for (const trace of (await options.filtered) ?? []) {
      const number = trace.blockNumber;
      const need = byBlock.get(typeof number === "string" ? hexNumber(number) : (number ?? -1));
      if (need) takeSender(trace, need, out.get(need.number) as BlockData);
    }
    const rest = traced.filter((need) => {
      const senders = (out.get(need.number) as BlockData).senders;
      return [...need.txs].some((tx) => !senders.has(tx));
    });
    const calls = rest.map((need) => ({
      method: "trace_block",
      params: [`0x${need.number.toString(16)}`],
    }));
    const results = new Map<RpcCall, unknown>();
    await mapPool(chunk(calls, TRACES_PER_REQUEST), options.concurrency, async (group) => {
      const answers = await batchUntilFound(client, group, options);
      group.forEach((call, i) => {
        results.set(call, answers[i]);
      });
    });
    rest.forEach((need, i) => {
      const data = out.get(need.number) as BlockData;
      for (const trace of results.get(calls[i] as RpcCall) as Trace[]) takeSender(trace, need, data);
      for (const tx of need.txs) {
        if (!data.senders.has(tx))
          throw new ChainMovedError(`block ${need.number} has no trace of transaction ${tx}`);
      }
    });
  }
  return out;
}

/** Records the sender of a transaction `need` asks for: the top-level call (empty trace address) is its. */
function takeSender(trace: Trace, need: BlockNeed, data: BlockData): void {
  const hash = trace.transactionHash?.toLowerCase();
  if (!hash || !need.txs.has(hash) || trace.traceAddress?.length !== 0 || !trace.action?.from) return;
  if (trace.blockHash?.toLowerCase() !== data.header.hash) {
    throw new ChainMovedError(`the traces of block ${need.number} are of another version of it`);
  }
  data.senders.set(hash, trace.action.from.toLowerCase());
}

/** Clients whose node does not serve trace_filter: not asked again. */
const noTraceFilter = new WeakSet<RpcClient>();

/**
 * The calls `signers` made in blocks `from` to `to`, in one trace_filter; undefined when the node does
 * not serve it, refuses the range or keeps failing on it (a long range can time out where a block
 * does not), and trace_block then covers every block. Only an abort rejects.
 */
export async function filterTraces(
  client: RpcClient,
  from: number,
  to: number,
  signers: readonly string[],
): Promise<Trace[] | undefined> {
  if (signers.length === 0 || noTraceFilter.has(client)) return undefined;
  try {
    const traces = await client.call<Trace[] | null>("trace_filter", [
      { fromBlock: `0x${from.toString(16)}`, toBlock: `0x${to.toString(16)}`, fromAddress: signers },
    ]);
    return Array.isArray(traces) ? traces : undefined;
  } catch (error) {
    if (error instanceof RpcGaveUpError) return undefined;
    if (!(error instanceof RpcError)) throw error;
    if (error.kind === "fatal") noTraceFilter.add(client);
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
