/**
 * The latest window as the report service's readers are served it (docs/report.md, "Serving readers"):
 * the last one built, while the next head's is built, so that readers never wait for a build that the
 * indexer's next commit would outdate. Each commit starts the next build while readers have asked lately.
 */
import type { StoreChanges } from "../../analytics/changes.ts";
import type { ReportWindow } from "../model.ts";

/** How long after a reader last asked for the latest window each commit's is still built for readers. */
const WARM_MS = 5 * 60_000;

/**
 * A build started by commits waits this many times the last build's time after it: the latest window's builds
 * keep to a fifth of the time however often its chain commits. Arbitrum's blocks (a demo's chain mines one a
 * second idle) rebuilt its latest week back to back, two thirds of a core with nobody reading; a chain with a
 * slow build (Base's week at 10M payments) is rebuilt less often, not late by more than that.
 */
const REST_FACTOR = 4;

export class LatestWindow {
  /** The window last built, with the epoch its build started at. */
  private latest: { window: ReportWindow; epoch: number } | undefined;
  private building: Promise<ReportWindow> | undefined;
  /** A commit landed while the latest was being built: build it again. */
  private again = false;
  /** When a reader last asked (performance.now()); 0: never. */
  private askedAt = 0;
  /** Before this (performance.now()), a commit's build waits: the last build rests (`REST_FACTOR`). */
  private restUntil = 0;
  /** The build a commit asked for during the rest. */
  private waiting: NodeJS.Timeout | undefined;
  private readonly hooks: ((from: number, to: number) => Promise<void>)[] = [];

  constructor(
    private readonly changes: StoreChanges,
    /** Builds the latest window (unless current) and resolves to it. */
    private readonly build: () => Promise<ReportWindow>,
    /** The chain whose latest window it is (its slug): only its commits move it. */
    private readonly chain = "base",
  ) {
    // A failure is met again, and answered, by the next reader who waits for a build. Another chain's commit
    // leaves this window as it is: with several chains followed, each chain's commits rebuilt every chain's
    // latest window (a demo's Base catching up its week rebuilt Arbitrum's at every batch).
    changes.subscribe((_epoch, of) => {
      if (of !== undefined && of !== this.chain) return;
      if (this.askedAt > 0 && performance.now() - this.askedAt < WARM_MS) this.soon();
    });
  }

  /**
   * The end block readers are served: waits for a build only when none is built, under way or waiting for
   * its turn.
   */
  async end(): Promise<number> {
    this.askedAt = performance.now();
    const latest = this.latest;
    if (
      latest &&
      (this.building ||
        this.waiting ||
        this.changes.untouchedSince(latest.epoch, Number.POSITIVE_INFINITY, this.chain))
    )
      return latest.window.end_block;
    return (await this.refresh()).end_block;
  }

  /** Calls `hook(from, to)` once a new latest window is built, before readers are switched to it. */
  onBuilt(hook: (from: number, to: number) => Promise<void>): void {
    this.hooks.push(hook);
  }

  /** Settles once the latest window of every commit so far is built (or its build failed): a waiting one now. */
  async built(): Promise<void> {
    for (;;) {
      if (this.waiting) this.startWaiting().catch(() => undefined);
      if (!this.building) return;
      await this.building.catch(() => undefined);
    }
  }

  /** A commit's build: at once, after the one under way, or when the last one has rested. */
  private soon(): void {
    if (this.building) {
      this.again = true;
      return;
    }
    if (this.waiting) return;
    const wait = this.restUntil - performance.now();
    if (wait <= 0) this.refresh().catch(() => undefined);
    else this.waiting = setTimeout(() => this.startWaiting().catch(() => undefined), wait).unref();
  }

  /** The waiting build, started now. */
  private startWaiting(): Promise<ReportWindow> {
    clearTimeout(this.waiting);
    this.waiting = undefined;
    return this.refresh();
  }

  /** Builds the latest window; one at a time. A commit meanwhile asks for the next (`soon`). */
  private refresh(): Promise<ReportWindow> {
    if (this.building) {
      this.again = true;
      return this.building;
    }
    const run = async () => {
      this.again = false;
      const started = performance.now();
      const epoch = this.changes.epoch;
      const window = await this.build();
      const from = this.latest?.window.end_block;
      // Readers keep the previous head until what they asked of it is ready for this one.
      if (from !== undefined && from !== window.end_block)
        await Promise.all(this.hooks.map((hook) => hook(from, window.end_block).catch(() => undefined)));
      this.latest = { window, epoch };
      const ended = performance.now();
      this.restUntil = ended + REST_FACTOR * (ended - started);
      return window;
    };
    const building = run().finally(() => {
      this.building = undefined;
      if (this.again) {
        this.again = false;
        this.soon();
      }
    });
    this.building = building;
    return building;
  }
}
