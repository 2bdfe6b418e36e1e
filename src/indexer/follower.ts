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
import { DEFAULT_REORG_DEPTH, type IndexerEvent, type IndexerOptions, runIndexer } from "./indexer.ts";
import { backoffDelay } from "./rpc/backoff.ts";
import { RpcClient } from "./rpc/client.ts";
import { RpcGaveUpError } from "./rpc/rpc-errors.ts";
import { readState } from "./state.ts";

/** Waits between attempts to reach an RPC that is down: 1 s doubling, capped at a minute, full jitter. */
export const DEFAULT_OUTAGE_BACKOFF = { baseMs: 1_000, maxMs: 60_000 };

/** A follower within this many blocks beyond its reorg depth is current: about a minute of Base. */
export const CURRENT_WITHIN_BLOCKS = 30;

/** State lines under a flapping RPC: bounded like any line an outsider can cause. */
const STATE_LOG_LIMIT: LogLimit = { lines: 10, perMs: 60_000 };

export interface FollowerOptions extends Omit<IndexerOptions, "follow" | "signal"> {
  /** Waits between attempts to reach an RPC that is down. */
  outage?: { baseMs?: number; maxMs?: number };
  /** Where the follower's own lines go (state changes), as events the progress reporter prints. */
  onEvent?: (event: IndexerEvent) => void;
  random?: () => number;
}

/** Where the follower stands, as `/healthz` shows it (snake_case JSON). */
export interface FollowerHealth {
  /** `starting` until the indexer has read the chain, `waiting_for_rpc` between attempts to reach it. */
  state: "starting" | "catching_up" | "following" | "waiting_for_rpc";
  /** The last indexed block and its time: everything through it is in the reports. */
  indexed_block: number | null;
  indexed_block_time: string | null;
  /** The chain's head when the RPC last said, and when that was. */
  chain_head: number | null;
  chain_head_seen_at: string | null;
  /** `chain_head - indexed_block`: a follower keeps `reorg_depth` of it on purpose. */
  lag_blocks: number | null;
  /** How old the last indexed block is, by this server's clock: it grows while the RPC is down. */
  lag_seconds: number | null;
  reorg_depth: number;
  rpc: {
    /** The last request reached the RPC and got an answer (not a 5xx or 429). */
    ok: boolean;
    failing_since: string | null;
    last_error: string | null;
    last_error_at: string | null;
    /** Requests retried since the start. */
    retries: number;
  };
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
  const reorgDepth = options.reorgDepth ?? DEFAULT_REORG_DEPTH;
  const say = limitedLog(STATE_LOG_LIMIT, (level: LogLevel, msg: string, fields: LogFields = {}) =>
    emit({ type: "rpc_state", level, msg, fields }),
  );

  let state: FollowerHealth["state"] = "starting";
  let indexed: { block: number; time: number } | undefined;
  let head: { block: number; at: number } | undefined;
  const rpc = { ok: true, failingSince: 0, lastError: "", lastErrorAt: 0, retries: 0 };

  const failed = (reason: string) => {
    rpc.lastError = reason;
    rpc.lastErrorAt = Date.now();
    if (!rpc.ok) return;
    rpc.ok = false;
    rpc.failingSince = rpc.lastErrorAt;
    say("warn", "rpc failing: the indexer retries; reports are still served", { reason });
  };
  const answered = () => {
    if (rpc.ok) return;
    rpc.ok = true;
    say("info", "rpc answers again", { down_s: Math.round((Date.now() - rpc.failingSince) / 1000) });
  };
  // Every request to the RPC says whether it is reachable, whoever sent it (a batch, a poll, a probe).
  const baseFetch = options.rpc.fetch ?? globalThis.fetch;
  const fetch: typeof globalThis.fetch = async (input, init) => {
    try {
      const response = await baseFetch(input, init);
      if (response.status >= 500 || response.status === 429) failed(`HTTP ${response.status}`);
      else answered();
      return response;
    } catch (error) {
      if (!signal.aborted) failed(describeFailure(error));
      throw error;
    }
  };

  const onEvent = (event: IndexerEvent) => {
    switch (event.type) {
      case "retry":
        // Counted and shown in the health, not a line each: `failed` says it once.
        rpc.retries++;
        rpc.lastError = event.reason;
        rpc.lastErrorAt = Date.now();
        return;
      case "start":
        indexed = { block: event.from - 1, time: event.time };
        head = { block: event.head, at: Date.now() };
        state = event.target > indexed.block ? "catching_up" : "following";
        break;
      case "batch":
        indexed = { block: event.to, time: event.time };
        head = { block: event.head, at: Date.now() };
        state = event.to >= event.target ? "following" : "catching_up";
        break;
      case "caught_up":
        head = { block: event.head, at: Date.now() };
        state = "following";
        break;
      case "reorg":
        indexed = { block: event.ancestor, time: event.ancestorTime };
        break;
    }
    emit(event);
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
    state = "waiting_for_rpc";
    say("warn", "rpc unavailable: the indexer waits for it; reports are still served", {
      reason,
      retry_max_s: outage.maxMs / 1000,
    });
    for (let attempt = 1; !signal.aborted; attempt++) {
      await sleep(backoffDelay(attempt, { ...outage, attempts: Infinity }, random), signal);
      if (signal.aborted) return;
      try {
        head = { block: hexNumber(await probe.call<string>("eth_blockNumber", [])), at: Date.now() };
        return;
      } catch (error) {
        if (signal.aborted) return;
        if (!(error instanceof RpcGaveUpError)) throw error;
      }
    }
  }

  const done = (async () => {
    const stored = await readState(options.analytics);
    if (stored) indexed = { block: stored.cursor.block, time: stored.cursor.time };
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
    health() {
      const now = Date.now();
      const iso = (ms: number) => new Date(ms).toISOString();
      return {
        state,
        indexed_block: indexed?.block ?? null,
        indexed_block_time: indexed ? iso(indexed.time * 1000) : null,
        chain_head: head?.block ?? null,
        chain_head_seen_at: head ? iso(head.at) : null,
        lag_blocks: indexed && head ? Math.max(0, head.block - indexed.block) : null,
        // A devnet's clock can run ahead of the wall clock (2 s a block, mined on demand).
        lag_seconds: indexed ? Math.max(0, Math.round(now / 1000 - indexed.time)) : null,
        reorg_depth: reorgDepth,
        rpc: {
          ok: rpc.ok,
          failing_since: rpc.ok ? null : iso(rpc.failingSince),
          last_error: rpc.lastError || null,
          last_error_at: rpc.lastErrorAt ? iso(rpc.lastErrorAt) : null,
          retries: rpc.retries,
        },
      };
    },
    degraded() {
      if (!rpc.ok || state === "starting" || state === "waiting_for_rpc") return true;
      return !!indexed && !!head && head.block - indexed.block > reorgDepth + CURRENT_WITHIN_BLOCKS;
    },
    done,
    async stop() {
      controller.abort();
      await done.catch(() => undefined);
    },
  };
}

/** A failed request in a few words: undici hides the socket's error code in `cause`. */
function describeFailure(error: unknown): string {
  const e = error as { name?: string; message?: string; cause?: { code?: string } };
  if (e.name === "TimeoutError") return "timed out";
  return e.cause?.code ? `${e.message ?? "fetch failed"} (${e.cause.code})` : (e.message ?? String(error));
}
