/**
 * What the follower (`follower.ts`) knows of itself: where the indexer stands, the chain's head as last
 * seen, and whether the RPC answers. It is what `/healthz` shows, and says whether reports lag behind.
 */
import type { LogWriter } from "../common/log.ts";
import type { IndexerEvent } from "./events.ts";

/** A follower within a minute of blocks beyond its reorg depth is current: 30 of 2 s, until the run says (its start event). */
export const CURRENT_WITHIN_BLOCKS = 30;

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

export class FollowerStatus {
  state: FollowerHealth["state"] = "starting";
  indexed: { block: number; time: number } | undefined;
  head: { block: number; at: number } | undefined;
  private readonly rpc = { ok: true, failingSince: 0, lastError: "", lastErrorAt: 0, retries: 0 };

  /** Blocks a minute at the head: the slack past the reorg depth before reports count as lagging. */
  private minuteBlocks = CURRENT_WITHIN_BLOCKS;

  constructor(
    /** Until the run says what it uses (its start event): the option, or the depth on 2 s blocks. */
    private reorgDepth: number,
    /** The follower's own state lines, bounded by the caller. */
    private readonly say: LogWriter,
  ) {}

  /** A request failed to reach the RPC, or got a 5xx or 429. */
  failed(reason: string): void {
    const rpc = this.rpc;
    rpc.lastError = reason;
    rpc.lastErrorAt = Date.now();
    if (!rpc.ok) return;
    rpc.ok = false;
    rpc.failingSince = rpc.lastErrorAt;
    this.say("warn", "rpc failing: the indexer retries; reports are still served", { reason });
  }

  /** A request got an answer. */
  answered(): void {
    const rpc = this.rpc;
    if (rpc.ok) return;
    rpc.ok = true;
    this.say("info", "rpc answers again", { down_s: Math.round((Date.now() - rpc.failingSince) / 1000) });
  }

  /** Follows the indexer's event; says whether it is passed on as a line (a retry is not). */
  see(event: IndexerEvent): boolean {
    switch (event.type) {
      case "retry":
        // Counted and shown in the health, not a line each: `failed` says it once.
        this.rpc.retries++;
        this.rpc.lastError = event.reason;
        this.rpc.lastErrorAt = Date.now();
        return false;
      case "start":
        this.reorgDepth = event.reorgDepth;
        this.minuteBlocks = event.minuteBlocks;
        this.indexed = { block: event.from - 1, time: event.time };
        this.head = { block: event.head, at: Date.now() };
        this.state = event.target > this.indexed.block ? "catching_up" : "following";
        break;
      case "batch":
        this.indexed = { block: event.to, time: event.time };
        this.head = { block: event.head, at: Date.now() };
        this.state = event.to >= event.target ? "following" : "catching_up";
        break;
      case "caught_up":
        this.head = { block: event.head, at: Date.now() };
        this.state = "following";
        break;
      case "reorg":
        this.indexed = { block: event.ancestor, time: event.ancestorTime };
        break;
    }
    return true;
  }

  health(): FollowerHealth {
    const { indexed, head, rpc } = this;
    const now = Date.now();
    const iso = (ms: number) => new Date(ms).toISOString();
    return {
      state: this.state,
      indexed_block: indexed?.block ?? null,
      indexed_block_time: indexed ? iso(indexed.time * 1000) : null,
      chain_head: head?.block ?? null,
      chain_head_seen_at: head ? iso(head.at) : null,
      lag_blocks: indexed && head ? Math.max(0, head.block - indexed.block) : null,
      // A devnet's clock can run ahead of the wall clock (2 s a block, mined on demand).
      lag_seconds: indexed ? Math.max(0, Math.round(now / 1000 - indexed.time)) : null,
      reorg_depth: this.reorgDepth,
      rpc: {
        ok: rpc.ok,
        failing_since: rpc.ok ? null : iso(rpc.failingSince),
        last_error: rpc.lastError || null,
        last_error_at: rpc.lastErrorAt ? iso(rpc.lastErrorAt) : null,
        retries: rpc.retries,
      },
    };
  }

  /** Whether reports lag behind: the RPC fails, or the indexer is more than a minute past its reorg depth. */
  degraded(): boolean {
    const { indexed, head } = this;
    if (!this.rpc.ok || this.state === "starting" || this.state === "waiting_for_rpc") return true;
    return !!indexed && !!head && head.block - indexed.block > this.reorgDepth + this.minuteBlocks;
  }
}
