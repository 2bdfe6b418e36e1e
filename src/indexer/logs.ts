/**
 * eth_getLogs over block ranges of adaptive size. Providers cap a query's block span (Alchemy 2,000
 * on paid plans, QuickNode and Infura 10,000, some 500 or less) or its result size (10,000 logs at
 * Alchemy and Infura, 20,000 at reth). The span halves (or takes the size the provider suggests) when
 * a range is refused, shrinks when a result is larger than `targetLogs`, and doubles again after a
 * few comfortable answers, up to `maxSpan`.
 */

import { sleep } from "../common/sleep.ts";
import { ChainMovedError, fetchHeaders } from "./block-data.ts";
import { hexNumber } from "./decode.ts";
import type { RawLog } from "./raw-log.ts";
import { backoffDelay, DEFAULT_BACKOFF } from "./rpc/backoff.ts";
import type { RpcClient } from "./rpc/client.ts";
import { RpcError, RpcGaveUpError } from "./rpc/rpc-errors.ts";

export interface LogFilter {
  /** A contract, or several (an OR), as eth_getLogs takes them. */
  address: string | readonly string[];
  /** topics[0] alternatives (an OR), as eth_getLogs takes them. */
  topic0: readonly string[];
}

export interface SpanChange {
  from: number;
  to: number;
  span: number;
  reason: string;
}

export interface LogFetcherOptions {
  /** Largest span (blocks per query). */
  maxSpan: number;
  /** Span to start with. Default `maxSpan`. */
  initialSpan?: number;
  /** A result with more logs than this shrinks the next span. Default 10,000 (the common cap). */
  targetLogs?: number;
  /** Comfortable answers in a row before the span doubles. Default 3. */
  growAfter?: number;
  /** How often a one-block range may be refused before giving up. Default 8. */
  attempts?: number;
  onSpanChange?: (change: SpanChange) => void;
  /**
   * Every log returned carries its block's time (a stamped chain's clock: `IndexClock`): where the RPC leaves
   * `blockTimestamp` out, the headers of those logs' blocks are read, one batch per answer.
   */
  dated?: boolean;
  signal?: AbortSignal;
}

export class LogFetcher {
  /** The current span: what the next range planned should cover. */
  span: number;
  private comfortable = 0;
  private readonly targetLogs: number;
  private readonly growAfter: number;

  constructor(
    private readonly client: RpcClient,
    private readonly filter: LogFilter,
    private readonly options: LogFetcherOptions,
  ) {
    this.span = Math.max(1, Math.min(options.maxSpan, options.initialSpan ?? options.maxSpan));
    this.targetLogs = options.targetLogs ?? 10_000;
    this.growAfter = options.growAfter ?? 3;
  }

  /**
   * Every matching log of blocks `from` to `to` (inclusive), in chain order; with `topic2`, only those
   * whose third topic is one of these (an OR), e.g. the Transfers to a list of padded addresses; with
   * `topic1`, likewise for the second (the channels created with these ids).
   */
  async fetch(
    from: number,
    to: number,
    topic2?: readonly string[],
    topic1?: readonly string[],
  ): Promise<RawLog[]> {
    const topics = topic2
      ? [this.filter.topic0, topic1 ?? null, topic2]
      : topic1
        ? [this.filter.topic0, topic1]
        : [this.filter.topic0];
    const out: RawLog[] = [];
    let cursor = from;
    let refusedOneBlock = 0;
    while (cursor <= to) {
      const end = Math.min(to, cursor + this.span - 1);
      let logs: RawLog[];
      try {
        logs = await this.client.call<RawLog[]>("eth_getLogs", [
          {
            address: this.filter.address,
            topics,
            fromBlock: `0x${cursor.toString(16)}`,
            toBlock: `0x${end.toString(16)}`,
          },
        ]);
      } catch (error) {
        if (!(error instanceof RpcError) || error.kind !== "range") throw error;
        const width = end - cursor + 1;
        if (width === 1) {
          // A single block cannot be split: wait and ask again, a bounded number of times.
          if (++refusedOneBlock >= (this.options.attempts ?? DEFAULT_BACKOFF.attempts)) {
            throw new RpcGaveUpError(
              `eth_getLogs keeps refusing block ${cursor}: ${error.shortMessage}`,
              error,
            );
          }
          await sleep(backoffDelay(refusedOneBlock, DEFAULT_BACKOFF), this.options.signal);
          this.options.signal?.throwIfAborted();
          continue;
        }
        const suggested = error.details.suggestedSpan;
        // reth may "suggest" the very range it refused: only a smaller suggestion is taken.
        this.shrink(
          suggested !== undefined && suggested >= 1 && suggested < width ? suggested : Math.ceil(width / 2),
          {
            from: cursor,
            to: end,
            reason: error.shortMessage,
          },
        );
        continue;
      }
      if (!Array.isArray(logs))
        throw new RpcError("fatal", `eth_getLogs returned ${typeof logs}, not a list`);
      refusedOneBlock = 0;
      checkRange(logs, cursor, end);
      if (this.options.dated) await dateLogs(this.client, logs, this.options.signal);
      for (const log of logs) out.push(log);
      cursor = end + 1;
      this.adapt(logs.length, { from: cursor, to: end });
    }
    return out;
  }

  private adapt(count: number, at: { from: number; to: number }): void {
    if (count > this.targetLogs && this.span > 1) {
      this.comfortable = 0;
      this.shrink(Math.max(1, Math.floor((this.span * this.targetLogs) / count)), {
        ...at,
        reason: `${count} logs in one answer`,
      });
      return;
    }
    if (count > this.targetLogs / 2) {
      this.comfortable = 0;
      return;
    }
    if (++this.comfortable >= this.growAfter && this.span < this.options.maxSpan) {
      this.comfortable = 0;
      this.span = Math.min(this.options.maxSpan, this.span * 2);
      this.options.onSpanChange?.({ ...at, span: this.span, reason: "grown after answers that fit" });
    }
  }

  private shrink(span: number, at: { from: number; to: number; reason: string }): void {
    this.comfortable = 0;
    this.span = Math.max(1, Math.min(this.span, span));
    this.options.onSpanChange?.({ ...at, span: this.span });
  }
}

/** Logs must lie in the range asked for and come in chain order; a provider that breaks this is wrong. */
function checkRange(logs: readonly RawLog[], from: number, to: number): void {
  let previous = -1;
  let previousIndex = -1;
  for (const log of logs) {
    const block = hexNumber(log.blockNumber);
    const index = hexNumber(log.logIndex);
    if (block < from || block > to) {
      throw new RpcError("fatal", `eth_getLogs for blocks ${from}-${to} returned a log of block ${block}`);
    }
    if (block < previous || (block === previous && index <= previousIndex)) {
      throw new RpcError("fatal", `eth_getLogs returned logs out of order at block ${block}`);
    }
    previous = block;
    previousIndex = index;
  }
}

/**
 * Gives each log without a `blockTimestamp` its block's, from the header: the cheapest way a chain without a
 * clock rule dates its logs where the RPC does not (one header per block that has such logs, in one batch; an
 * RPC that serves the field costs nothing more). A header whose hash is not the log's means the chain moved
 * between the two reads.
 */
export async function dateLogs(client: RpcClient, logs: RawLog[], signal?: AbortSignal): Promise<void> {
  const blocks = [
    ...new Set(logs.flatMap((l) => (l.blockTimestamp === undefined ? [hexNumber(l.blockNumber)] : []))),
  ];
  if (blocks.length === 0) return;
  const headers = await fetchHeaders(client, blocks, { signal });
  const byNumber = new Map(headers.map((h) => [h.number, h]));
  for (const log of logs) {
    if (log.blockTimestamp !== undefined) continue;
    const header = byNumber.get(hexNumber(log.blockNumber));
    if (!header || header.hash !== log.blockHash.toLowerCase()) {
      throw new ChainMovedError(`block ${hexNumber(log.blockNumber)} changed while its logs were dated`);
    }
    log.blockTimestamp = `0x${header.timestamp.toString(16)}`;
  }
}
