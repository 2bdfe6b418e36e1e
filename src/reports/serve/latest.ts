/**
 * The latest window as the report service's readers are served it (docs/report.md, "Serving readers"):
 * the last one built, while the next head's is built, so that readers never wait for a build that the
 * indexer's next commit would outdate. Each commit starts the next build while readers have asked lately.
 */
import type { StoreChanges } from "../../analytics/changes.ts";
import type { ReportWindow } from "../model.ts";

/** How long after a reader last asked for the latest window each commit's is still built for readers. */
const WARM_MS = 5 * 60_000;

export class LatestWindow {
  /** The window last built, with the epoch its build started at. */
  private latest: { window: ReportWindow; epoch: number } | undefined;
  private building: Promise<ReportWindow> | undefined;
  /** A commit landed while the latest was being built: build it again. */
  private again = false;
  /** When a reader last asked (performance.now()); 0: never. */
  private askedAt = 0;
  private readonly hooks: ((from: number, to: number) => Promise<void>)[] = [];

  constructor(
    private readonly changes: StoreChanges,
    /** Builds the latest window (unless current) and resolves to it. */
    private readonly build: () => Promise<ReportWindow>,
    /** The chain whose latest window it is (its slug): only its commits move it. */
    private readonly chain = "base",
  ) {
    // A failure is met again, and answered, by the next reader who waits for a build.
    changes.subscribe(() => {
      if (this.askedAt > 0 && performance.now() - this.askedAt < WARM_MS)
        this.refresh().catch(() => undefined);
    });
  }

  /** The end block readers are served: waits for a build only when none is built or under way. */
  async end(): Promise<number> {
    this.askedAt = performance.now();
    const latest = this.latest;
    if (
      latest &&
      (this.building || this.changes.untouchedSince(latest.epoch, Number.POSITIVE_INFINITY, this.chain))
    )
      return latest.window.end_block;
    return (await this.refresh()).end_block;
  }

  /** Calls `hook(from, to)` once a new latest window is built, before readers are switched to it. */
  onBuilt(hook: (from: number, to: number) => Promise<void>): void {
    this.hooks.push(hook);
  }

  /** Settles once the latest window of every commit so far is built (or its build failed). */
  async built(): Promise<void> {
    await this.building?.catch(() => undefined);
  }

  /** Builds the latest window, again as long as commits land meanwhile; one such run at a time. */
  private refresh(): Promise<ReportWindow> {
    if (this.building) {
      this.again = true;
      return this.building;
    }
    const run = async () => {
      for (;;) {
        this.again = false;
        const epoch = this.changes.epoch;
        const window = await this.build();
        const from = this.latest?.window.end_block;
        // Readers keep the previous head until what they asked of it is ready for this one.
        if (from !== undefined && from !== window.end_block)
          await Promise.all(this.hooks.map((hook) => hook(from, window.end_block).catch(() => undefined)));
        this.latest = { window, epoch };
        if (!this.again) return window;
      }
    };
    const building = run().finally(() => {
      this.building = undefined;
    });
    this.building = building;
    return building;
  }
}
