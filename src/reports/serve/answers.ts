/**
 * Rendered answers kept in memory (issue 45): a report, its page, its badge, its evidence and the
 * leaderboard's pages are rendered once for what the store holds and answered as bytes until a write
 * reaches the blocks they were rendered from (src/analytics/changes.ts). Readers asking for one thing
 * while it renders wait for that one rendering.
 */
import { createHash } from "node:crypto";
import type { StoreChanges } from "../../analytics/changes.ts";

/** What a route renders: the body, its media type, and when the figures in it were built. */
export interface Rendered {
  body: string;
  type: string;
  /** The build's `generated_at` (ISO 8601): the answer's `Last-Modified`. */
  builtAt: string;
}

export interface Answer extends Rendered {
  /** A strong validator of the body. */
  etag: string;
  /** `builtAt` as an HTTP date. */
  lastModified: string;
  bytes: number;
}

/** Renders an answer for the window ending at the block it is given. */
export type Render = (end: number) => Promise<Rendered>;

interface Entry {
  answer: Answer;
  /** The epoch of `changes` the answer was last known to be current at. */
  epoch: number;
  /** What was asked (a path) and for which window: the key is both. */
  what: string;
  end: number;
  render: Render;
}

/** Answers rendered at once for a new head (`warm`): as many as the report service has readers, less one. */
const WARM_AT_ONCE = 2;
/**
 * Answers rendered for a new head at most, the most recently asked: the rest are rendered when asked
 * again, so that a reader who waits for a head (the first after a quiet spell) waits for a bounded time.
 */
const WARM_MOST = 256;

export interface AnswersOptions {
  /** Bytes of bodies kept; the least recently asked go first. Default 64 MB. */
  maxBytes?: number;
  /** The chain (its slug) whose windows the answers are of; default Base. */
  chain?: string;
}

export class Answers {
  private readonly entries = new Map<string, Entry>();
  private readonly rendering = new Map<string, Promise<Answer>>();
  private bytes = 0;
  private readonly maxBytes: number;
  /** Renderings done, for tests and the bench: a hit renders nothing. */
  renders = 0;

  /** The chain whose windows the answers are of (its slug): another chain's writes leave them current. */
  private readonly chain: string;

  constructor(
    private readonly changes: StoreChanges,
    options: AnswersOptions = {},
  ) {
    this.maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
    this.chain = options.chain ?? "base";
  }

  /**
   * The answer for `what` (a path) from the window ending at `end`, rendered by `render` unless a kept
   * one is still current: no write since reached block `end`.
   */
  get(what: string, end: number, render: Render): Promise<Answer> {
    const key = `${what}@${end}`;
    const entry = this.entries.get(key);
    if (entry && this.changes.untouchedSince(entry.epoch, end, this.chain)) {
      entry.epoch = this.changes.epoch;
      // Map order is use order: a hit moves to the back, the front is evicted first.
      this.entries.delete(key);
      this.entries.set(key, entry);
      return Promise.resolve(entry.answer);
    }
    const pending = this.rendering.get(key);
    if (pending) return pending;
    // Tagged with the epoch it starts at: a write that commits while it renders makes it stale at once.
    const epoch = this.changes.epoch;
    const next = render(end)
      .then((rendered) => {
        const answer = answerOf(rendered);
        this.renders += 1;
        this.keep(key, { answer, epoch, what, end, render });
        return answer;
      })
      .finally(() => this.rendering.delete(key));
    this.rendering.set(key, next);
    return next;
  }

  /**
   * Renders for the window ending at `to` what readers asked of the one ending at `from` (the latest
   * head before), a few at a time, so that readers switched to `to` find their answers ready; a refusal
   * is left for a reader to meet.
   */
  async warm(from: number, to: number): Promise<void> {
    // Map order is use order: the most recently asked are at the back, taken (popped) first.
    const asked = [...this.entries.values()].filter((e) => e.end === from).slice(-WARM_MOST);
    const next = async (): Promise<void> => {
      for (let e = asked.pop(); e; e = asked.pop())
        await this.get(e.what, to, e.render).catch(() => undefined);
    };
    await Promise.all(Array.from({ length: WARM_AT_ONCE }, next));
  }

  private keep(key: string, entry: Entry): void {
    const old = this.entries.get(key);
    if (old) {
      this.bytes -= old.answer.bytes;
      this.entries.delete(key);
    }
    if (entry.answer.bytes > this.maxBytes) return;
    this.entries.set(key, entry);
    this.bytes += entry.answer.bytes;
    for (const [oldest, kept] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= kept.answer.bytes;
    }
  }
}

function answerOf(rendered: Rendered): Answer {
  const etag = `"${createHash("sha256").update(rendered.body).digest("base64url").slice(0, 27)}"`;
  return {
    ...rendered,
    etag,
    lastModified: new Date(rendered.builtAt).toUTCString(),
    bytes: Buffer.byteLength(rendered.body),
  };
}
