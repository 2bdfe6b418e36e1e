/**
 * The indexer as a service follows it (`serve --rpc`): through an RPC outage instead of stopping with it.
 * The report service keeps answering from what is stored while the follower waits for the RPC with
 * capped, jittered exponential backoff, then resumes from the checkpoint and catches up on its own. Its
 * health (how far behind, since when the RPC fails, the last error) is what `/healthz` shows.
 */
import { type LogFields, type LogLevel, type LogLimit, limitedLog } from "../common/log.ts";
import { sleep } from "../common/sleep.ts";
import { ChainMovedError } from "./block-data.ts";
import { hexNumber } from "./decode.ts";
import type { IndexerEvent } from "./events.ts";
import { type FollowerHealth, FollowerStatus } from "./follower-status.ts";
import { runIndexer } from "./indexer.ts";
import { DEFAULT_REORG_DEPTH, type IndexerOptions } from "./options.ts";
import { backoffDelay } from "./rpc/backoff.ts";
import { RpcClient } from "./rpc/client.ts";
import { RpcGaveUpError } from "./rpc/rpc-errors.ts";
import { readState } from "./state.ts";

/** Waits between attempts to reach an RPC that is down: 1 s doubling, capped at a minute, full jitter. */
export const DEFAULT_OUTAGE_BACKOFF = { baseMs: 1_000, maxMs: 60_000 };

/** State lines under a flapping RPC: bounded like any line an outsider can cause. */
const STATE_LOG_LIMIT: LogLimit = { lines: 10, perMs: 60_000 };

export interface FollowerOptions extends Omit<IndexerOptions, "follow" | "signal"> {
  /** Waits between attempts to reach an RPC that is down. */
  outage?: { baseMs?: number; maxMs?: number };
  /** Where the follower's own lines go (state changes), as events the progress reporter prints. */
  onEvent?: (event: IndexerEvent) => void;
  random?: () => number;
}

export interface Follower {
  health(): FollowerHealth;
  /** Whether reports lag behind: the RPC fails, or the indexer is more than a minute past its reorg depth. */
  degraded(): boolean;
  /** Resolves once stopped; rejects when the indexer fails for a reason an outage does not explain. */
  done: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Runs the indexer in follow mode on `analytics` until `stop()` (or its `toBlock`). An outage (the RPC
 * client gave up retrying, or the chain kept moving under a lagging node) is waited out; anything else
 * (a reorg deeper than the kept hashes, a bad range, an RPC that refuses a method, a database error)
 * ends `done` with it.
 *
 * @example
 *   const follower = startFollower({ analytics, rpc: { url }, registry });
 *   app.get("/healthz", (c) => c.json({ indexer: follower.health() }));
 */
export function startFollower(options: FollowerOptions): Follower {
  const controller = new AbortController();
  const signal = controller.signal;
  const emit = options.onEvent ?? (() => {});
  const outage = { ...DEFAULT_OUTAGE_BACKOFF, ...options.outage };
  const random = options.random ?? Math.random;
  const say = limitedLog(STATE_LOG_LIMIT, (level: LogLevel, msg: string, fields: LogFields = {}) =>
    emit({ type: "rpc_state", level, msg, fields }),
  );
  const status = new FollowerStatus(options.reorgDepth ?? DEFAULT_REORG_DEPTH, say);
  const fetch = watchedFetch(options.rpc.fetch ?? globalThis.fetch, status, signal);
  const onEvent = (event: IndexerEvent) => {
    if (status.see(event)) emit(event);
  };

  const probe = new RpcClient({
    url: options.rpc.url,
    timeoutMs: options.rpc.timeoutMs,
    backoff: { attempts: 1 },
    signal,
    fetch,
  });

  /** Asks for the head with backoff until the RPC answers, or the follower is stopped. */
  async function waitForRpc(reason: string): Promise<void> {
    status.state = "waiting_for_rpc";
    say("warn", "rpc unavailable: the indexer waits for it; reports are still served", {
      reason,
      retry_max_s: outage.maxMs / 1000,
    });
    for (let attempt = 1; !signal.aborted; attempt++) {
      await sleep(backoffDelay(attempt, { ...outage, attempts: Infinity }, random), signal);
      if (signal.aborted) return;
      try {
        status.head = { block: hexNumber(await probe.call<string>("eth_blockNumber", [])), at: Date.now() };
        return;
      } catch (error) {
        if (signal.aborted) return;
        if (!(error instanceof RpcGaveUpError)) throw error;
      }
    }
  }

  const done = (async () => {
    const stored = await readState(options.analytics);
    if (stored) status.indexed = { block: stored.cursor.block, time: stored.cursor.time };
    while (!signal.aborted) {
      try {
        // Returns only when stopped, or past a `toBlock`: either way the follower is done.
        await runIndexer({ ...options, rpc: { ...options.rpc, fetch }, follow: true, signal, onEvent });
        return;
      } catch (error) {
        if (signal.aborted) return;
        if (!(error instanceof RpcGaveUpError || error instanceof ChainMovedError)) throw error;
        await waitForRpc((error as Error).message);
      }
    }
  })();
  done.catch(() => undefined);

  return {
    health: () => status.health(),
    degraded: () => status.degraded(),
    done,
    async stop() {
      controller.abort();
      await done.catch(() => undefined);
    },
  };
}

/** Every request to the RPC says whether it is reachable, whoever sent it (a batch, a poll, a probe). */
function watchedFetch(
  baseFetch: typeof globalThis.fetch,
  status: FollowerStatus,
  signal: AbortSignal,
): typeof globalThis.fetch {
  return async (input, init) => {
    try {
      const response = await baseFetch(input, init);
      if (response.status >= 500 || response.status === 429) status.failed(`HTTP ${response.status}`);
      else status.answered();
      return response;
    } catch (error) {
      if (!signal.aborted) status.failed(describeFailure(error));
      throw error;
    }
  };
}

/** A failed request in a few words: undici hides the socket's error code in `cause`. */
function describeFailure(error: unknown): string {
  const e = error as { name?: string; message?: string; cause?: { code?: string } };
  if (e.name === "TimeoutError") return "timed out";
  return e.cause?.code ? `${e.message ?? "fetch failed"} (${e.cause.code})` : (e.message ?? String(error));
}
