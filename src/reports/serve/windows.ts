import type { Analytics } from "../../analytics/duckdb.ts";
import { windowVersion } from "../../analytics/migrations.ts";
import { type AnyChainRecord, BASE_RECORD } from "../../chain/chains.ts";
import { log } from "../../common/log.ts";
import { reportBuildSeconds, secondsSince } from "../../common/metrics.ts";
import { sealedWeek } from "../attest/store.ts";
import type { ReportWindow } from "../model.ts";
import { sqlChain } from "../scope.ts";
import { METHODOLOGY_VERSION } from "../screens/methodology.ts";
import type { ReportContext } from "../week/report.ts";
import { DEFAULT_KEEP_WINDOWS, storeWindow } from "../week/store.ts";
import { resolveWindow, windowDates } from "../week/window.ts";
import { ReaderPool } from "./reader-pool.ts";

export interface ReportServiceOptions {
  /** The chain whose weeks the service reports (default Base): one service a chain, on one store. */
  chain?: AnyChainRecord;
  /** Base of the page and badge URLs, without a trailing slash. */
  publicUrl: string;
  now?: () => Date;
  /** Windows whose reports stay stored; older builds are dropped and rebuilt on demand. Default 16 (week/store.ts). */
  keepWindows?: number;
  /** Connections that read at once (reports, evidence, leaderboard pages, search); default 3. */
  readers?: number;
}

/** Two cores' worth of readers and one more, so one waiting on DuckDB's I/O does not idle a core. */
const DEFAULT_READERS = 3;

/**
 * How far back a window's data reaches for `StoreChanges`: the latest moves with every commit; a week asked for
 * by a block reaches to the end it resolved to (on a stamped chain, the last block of that block's second).
 */
const reachOf = (endBlock: number | undefined): number => endBlock ?? Number.POSITIVE_INFINITY;

/**
 * The report service's windows: which are current, building them, and the turns reads and builds take.
 * Checking and building windows is one call at a time on the service's connection (a build uses temporary
 * tables and a transaction); reads run side by side on connections of their own (`ReaderPool`).
 */
export class ReportWindows {
  /**
   * Windows found current, by requested end block, with the epoch of the store's changes they were
   * current at; as many as stay stored, which are these first (`pinned`).
   */
  private readonly current = new Map<number | "latest", { window: ReportWindow; epoch: number }>();
  readonly now: () => Date;
  /** The chain whose windows these are: every statement reads its rows only. */
  readonly chain: AnyChainRecord;
  /** Connections for reads, beside the one that builds (closed with the analytics database). */
  private readonly readers: ReaderPool;

  constructor(
    readonly analytics: Analytics,
    private readonly options: ReportServiceOptions,
  ) {
    this.now = options.now ?? (() => new Date());
    this.chain = options.chain ?? BASE_RECORD;
    this.readers = new ReaderPool(analytics, options.readers ?? DEFAULT_READERS);
  }

  /** The base of the page and badge URLs the reports name. */
  get publicUrl(): string {
    return this.options.publicUrl;
  }

  /** What rendering a built window's reports needs beyond the stored rows. */
  async context(window: ReportWindow, db = this.analytics): Promise<ReportContext> {
    // A sealed week's links stay those it was sealed with, as its reports' do: its feed's hash counts them.
    const built = await db.one<{ generated_at: string; methodology: string; sealed_url: string | null }>(
      `SELECT w.generated_at, w.methodology, a.public_url AS sealed_url FROM report_windows w
       LEFT JOIN attestations a ON a.chain = w.chain AND a.end_block = w.end_block
       WHERE ${sqlChain(this.chain, "w.")} AND w.end_block = $end`,
      { end: window.end_block },
    );
    if (!built)
      throw new Error(`the reports of the window ending at block ${window.end_block} are not built`);
    return {
      chain: this.chain,
      window,
      dates: windowDates(window),
      generatedAt: built.generated_at,
      publicUrl: built.sealed_url ?? this.options.publicUrl,
      methodology: built.methodology,
    };
  }

  /** `read` on a reader connection of its own, in one transaction, for what belongs to no window. */
  async readingStore<T>(kind: string, read: (db: Analytics) => Promise<T>): Promise<T> {
    return timed(kind, async () => {
      const db = await this.readers.take();
      try {
        return await db.transaction(() => read(db));
      } finally {
        this.readers.give(db);
      }
    })();
  }

  /**
   * `read` on a reader connection of its own, in one transaction (one snapshot of the store, whatever is
   * built meanwhile), once the window is built: readers wait in the queue only while a window is checked or
   * built, and read side by side (DuckDB runs many readers at once), so a long evidence does not hold a
   * badge, nor the indexer's writes a reader.
   */
  async reading<T>(
    endBlock: number | undefined,
    kind: string,
    read: (db: Analytics, window: ReportWindow) => Promise<T>,
  ): Promise<T> {
    return timed(kind, async () => {
      const window = await this.serial(() => this.ensureWindow(endBlock));
      const db = await this.readers.take();
      try {
        return await db.transaction(() => read(db, window));
      } finally {
        this.readers.give(db);
      }
    })();
  }

  /**
   * `fn` in a turn of its own on the service's connection, after those queued before by this service or
   * another sharing it (a test's fresh service beside the served one): a build uses temporary tables and a
   * transaction.
   */
  serial<T>(fn: () => Promise<T>): Promise<T> {
    return this.analytics.exclusive(fn);
  }

  /**
   * The window ending at `endBlock` (default: the latest checkpoint), its reports built. A window found
   * current before, that no write has reached since (src/analytics/changes.ts), is taken as it was: a
   * closed week is built once, however far the indexer moves the latest, and a window is resolved (the
   * payments' latest block read, tens of milliseconds on a large analytics database) only when a write
   * reached it.
   */
  async ensureWindow(endBlock?: number): Promise<ReportWindow> {
    const key = endBlock ?? "latest";
    const changes = this.analytics.changes;
    const seen = this.current.get(key);
    if (
      seen &&
      changes.untouchedSince(
        seen.epoch,
        reachOf(endBlock === undefined ? undefined : seen.window.end_block),
        this.chain.slug,
      ) &&
      (await this.stored(seen.window))
    ) {
      seen.epoch = changes.epoch;
      this.current.delete(key);
      this.current.set(key, seen);
      return seen.window;
    }
    const epoch = changes.epoch;
    const window = await resolveWindow(this.analytics, this.chain, endBlock);
    // Read before the build: a write landing between is then newer than what is stored, and builds it again.
    const version = await windowVersion(this.analytics, window.end_block, this.chain.slug);
    await this.buildIfStale(window, version);
    // The latest window is also the window of its end block: asked for by it, it is current as long.
    for (const k of new Set<number | "latest">([key, window.end_block])) {
      this.current.delete(k);
      this.current.set(k, { window, epoch });
    }
    // Map order is use order: the least recently asked window is forgotten first.
    for (const [old] of this.current) {
      if (this.current.size <= (this.options.keepWindows ?? DEFAULT_KEEP_WINDOWS)) break;
      this.current.delete(old);
    }
    return window;
  }

  /** Whether the window's reports are still stored (another service on this store may have dropped them). */
  private async stored(window: ReportWindow): Promise<boolean> {
    const row = await this.analytics.one(
      `SELECT 1 AS stored FROM report_windows WHERE ${sqlChain(this.chain)} AND end_block = $end`,
      { end: window.end_block },
    );
    return row !== undefined;
  }

  /**
   * Builds the window's reports unless the stored ones saw data version `version` (the writes that reached
   * the window: `windowVersion`) and were built under this program's methodology: a window stored under another (an earlier release's) is built again under this one,
   * and its pages then say so.
   */
  private async buildIfStale(window: ReportWindow, version: bigint): Promise<void> {
    // Page and badge URLs are rendered on read: a new public URL needs no rebuild.
    const cached = await this.analytics.one<{ data_version: bigint; methodology: string | null }>(
      `SELECT data_version, methodology FROM report_windows WHERE ${sqlChain(this.chain)} AND end_block = $end`,
      { end: window.end_block },
    );
    const stale = cached?.data_version !== version || cached.methodology !== METHODOLOGY_VERSION;
    if (stale && cached && (await sealedWeek(this.analytics, this.chain, window.end_block))) {
      refusedRebuild(window.end_block, version, cached.methodology);
      return;
    }
    if (stale) {
      const store = {
        publicUrl: this.options.publicUrl,
        now: this.now,
        keepWindows: this.options.keepWindows,
        // The weeks readers ask for by end block stay stored while no write reaches them.
        pinned: [...this.current.values()].reverse().map((c) => c.window.end_block),
      };
      await timed("window", () => storeWindow(this.analytics, this.chain, window, version, store))();
    }
  }
}

/** Sealed windows whose data changed since, as "end version", each logged once. */
const refusals = new Set<string>();

/**
 * A sealed week is served as sealed: the data under it changed (a late import, a deep reorg) or this
 * program's methodology did, and a rebuild would not be what was attested, so none is made.
 */
function refusedRebuild(end: number, version: bigint, methodology: string | null): void {
  const key = `${end} ${version} ${methodology}`;
  if (refusals.has(key)) return;
  refusals.add(key);
  log("warn", "a sealed week's data or methodology changed: its sealed reports stand, not rebuilt", {
    end_block: end,
    data_version: Number(version),
    built_under: methodology,
    methodology: METHODOLOGY_VERSION,
  });
}

/** `fn`, its run timed into the metrics' `x402m_report_build_seconds` under `kind`, failed or not. */
function timed<T>(kind: string, fn: () => Promise<T>): () => Promise<T> {
  return async () => {
    const start = performance.now();
    try {
      return await fn();
    } finally {
      reportBuildSeconds.observe({ kind }, secondsSince(start));
    }
  };
}
