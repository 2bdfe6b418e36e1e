/**
 * Reads one batch of blocks from the chain and turns it into rows, without touching the analytics database, so
 * several batches can be read ahead while earlier ones are committed in order.
 *
 * Consistency: the end block's header is read before the logs and again after them; equal hashes
 * mean the range did not change while it was read (a block's hash vouches for all before it). The
 * first block's header is read too: at commit its parent hash must be the stored checkpoint's hash,
 * else the chain reorganised under us (see `reorg.ts`).
 */

import type { IndexClock } from "../chain/block-clock.ts";
import type { ChainRecord } from "../chain/chains.ts";
import type { FacilitatorRegistry } from "../chain/facilitators.ts";
import {
  type BlockNeed,
  ChainMovedError,
  fetchBlockData,
  fetchHeaders,
  filterTraces,
  type SenderStrategy,
} from "./block-data.ts";
import { type BridgeRow, bridgeSides, datedSides } from "./bridge-messages.ts";
import { type CctpLog, type CctpRoles, decodeCctpLog } from "./cctp-logs.ts";
import type { ChannelLog } from "./channel-logs.ts";
import { type ClassifiedBatch, classifyBatch } from "./classify.ts";
import { decodeLog, hexNumber, positionOf, type X402Log } from "./decode.ts";
import type { LogFetcher } from "./logs.ts";
import type { RawLog } from "./raw-log.ts";
import type { RpcClient } from "./rpc/client.ts";
import { pairSettlements } from "./settlements.ts";
import type { Cursor } from "./state.ts";

export interface FetchContext {
  client: RpcClient;
  /** The chain read: its CCTP domain and USDC name the bridge messages' sides. */
  chain: ChainRecord;
  /** Its CCTP contracts (`cctpContracts`), whose logs the batch's one eth_getLogs returns with USDC's. */
  cctp: CctpRoles;
  logs: LogFetcher;
  registry: FacilitatorRegistry;
  clock: IndexClock;
  strategy: SenderStrategy;
  concurrency: number;
  signal?: AbortSignal;
}

export interface FetchedBatch extends ClassifiedBatch {
  from: number;
  to: number;
  /** The parent hash of block `from` as the chain has it now: the checkpoint's hash, unless it reorganised. */
  parentHash: string;
  end: Cursor;
  /** Blocks whose headers were read: their hashes are kept for reorg checks. */
  hashes: Cursor[];
  logs: number;
  /** The batch-settlement escrow's events: rows only at commit, against the channels known by then. */
  channelLogs: ChannelLog[];
  /** The sides of CCTP messages logged in the batch (`bridge-messages.ts`): every one is kept. */
  bridges: BridgeRow[];
}

export async function fetchBatch(ctx: FetchContext, from: number, to: number): Promise<FetchedBatch> {
  const [before] = await fetchHeaders(ctx.client, [to], { signal: ctx.signal });
  // The signers' traces do not depend on the logs: read both at once (their block hashes are checked
  // against the headers read after the logs, like everything else).
  const filtered =
    ctx.strategy === "trace" ? filterTraces(ctx.client, from, to, ctx.registry.addresses()) : undefined;
  filtered?.catch(() => undefined); // awaited in fetchBlockData; a failure before must not go unhandled
  const raw = await ctx.logs.fetch(from, to);
  const decoded: X402Log[] = [];
  const cctp: CctpLog[] = [];
  for (const log of raw) {
    const role = ctx.cctp.get(log.address.toLowerCase());
    if (role) {
      const side = log.removed ? undefined : decodeCctpLog(log, positionOf(log), role);
      if (side) cctp.push(side);
      continue;
    }
    const x402 = decodeLog(log);
    if (x402) decoded.push(x402);
  }
  const paired = pairSettlements(decoded);

  const needs = new Map<number, Set<string>>();
  const need = (block: number) => {
    let txs = needs.get(block);
    if (!txs) {
      txs = new Set();
      needs.set(block, txs);
    }
    return txs;
  };
  for (const { transfer } of paired.settlements) need(transfer.block).add(transfer.tx);
  // A chain without a clock rule dates each log by its block: where the RPC left a log's time out, its
  // block's header is read with the rest (a settlement's block is read anyway, so it is not read twice).
  const undated = ctx.clock.stamped ? [...decoded, ...cctp].filter((log) => log.blockTime === undefined) : [];
  for (const log of undated) need(log.block);
  need(to);
  need(from);
  const seen = fromLogs(raw);
  const blockNeeds: BlockNeed[] = [...needs].map(([number, txs]) => {
    const logs = seen.get(number);
    return {
      number,
      txs,
      // The batch's ends are always read: their parent hash and the end's stability are checked.
      ...(logs?.hash && number !== from && number !== to && { fromLogs: logs.hash }),
      ...(logs && { txCountAtLeast: logs.txCountAtLeast }),
    };
  });
  const blocks = await fetchBlockData(ctx.client, blockNeeds, {
    strategy: ctx.strategy,
    concurrency: ctx.concurrency,
    filtered,
    signal: ctx.signal,
  });

  const endHeader = blocks.get(to)?.header;
  if (!endHeader || endHeader.hash !== before?.hash) {
    throw new ChainMovedError(`block ${to} changed while blocks ${from}-${to} were read`);
  }
  ctx.clock.checkHeader(endHeader);
  const first = blocks.get(from)?.header;
  if (!first) throw new Error(`internal: no header fetched for block ${from}`);
  ctx.clock.checkHeader(first);
  for (const log of undated) {
    const header = blocks.get(log.block)?.header;
    if (!header) throw new Error(`internal: no header fetched for block ${log.block}`);
    if (header.hash !== log.blockHash) {
      throw new ChainMovedError(`block ${log.block} changed while the batch was read`);
    }
    log.blockTime = header.timestamp;
  }

  const classified = classifyBatch(paired, blocks, ctx.registry, ctx.clock);
  // Paired once dated: a side carries its log's time.
  const bridges = datedSides(bridgeSides(cctp, ctx.chain), blocks, ctx.clock);
  const hashes: Cursor[] = [];
  for (const [number, data] of blocks) {
    if (number >= from) hashes.push({ block: number, hash: data.header.hash, time: data.header.timestamp });
  }
  hashes.sort((a, b) => a.block - b.block);
  return {
    ...classified,
    from,
    to,
    parentHash: first.parentHash,
    end: { block: to, hash: endHeader.hash, time: endHeader.timestamp },
    hashes,
    logs: raw.length,
    channelLogs: paired.channels,
    bridges,
  };
}

/** A block as a batch's logs describe it. */
interface LoggedBlock {
  /** Its hash and time, when every log of it carries the same `blockHash` and a `blockTimestamp`. */
  hash?: { hash: string; timestamp: number };
  /** A floor on its transaction count: its logs' highest `transactionIndex` + 1. */
  txCountAtLeast: number;
}

function fromLogs(logs: readonly RawLog[]): Map<number, LoggedBlock> {
  const blocks = new Map<number, LoggedBlock>();
  for (const log of logs) {
    const number = hexNumber(log.blockNumber);
    const hash = log.blockHash.toLowerCase();
    const timestamp = log.blockTimestamp === undefined ? undefined : hexNumber(log.blockTimestamp);
    const count = hexNumber(log.transactionIndex) + 1;
    const block = blocks.get(number);
    if (!block) {
      blocks.set(number, {
        ...(timestamp !== undefined && { hash: { hash, timestamp } }),
        txCountAtLeast: count,
      });
      continue;
    }
    block.txCountAtLeast = Math.max(block.txCountAtLeast, count);
    // Logs that disagree, or one without a time, leave the header to be read and checked.
    if (timestamp === undefined || block.hash?.hash !== hash || block.hash.timestamp !== timestamp)
      delete block.hash;
  }
  return blocks;
}
