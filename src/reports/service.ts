import { BadInputError, NotFoundError } from "../platform/errors.ts";
import type { Store } from "../store/duckdb.ts";
import { dataVersion } from "../store/migrations.ts";
import { refreshListingDocs } from "./listings.ts";
import { LICENSE_URL, type ReportContext, writeReports } from "./report.ts";
import type { Report } from "./schema.ts";
import { aggregateWindow, dropWindowTables } from "./sql.ts";
import { isoUtc, type ReportWindow, resolveWindow, windowDates } from "./window.ts";

/** What the page shows beyond the report: the wallets behind each flag (the 20 largest per kind). */
export interface ReportDetails {
  flagged_wallets: Record<string, { wallet: string; tx: number; usd: number }[]>;
}

export interface LeaderboardEntry {
  rank: number;
  address: string;
  name: string;
  real_usd: number;
  usd: number;
  real_tx: number;
  tx: number;
  real_buyers: number;
  buyers: number;
  page: string;
}

/** Each leaderboard field and the report field it is read from. */
const LEADERBOARD_FIELDS: Record<keyof LeaderboardEntry, keyof Report> = {
  rank: "rank_by_real_revenue",
  address: "address",
  name: "name",
  real_usd: "real_usd",
  usd: "usd",
  real_tx: "real_tx",
  tx: "tx",
  real_buyers: "real_buyers",
  buyers: "buyers",
  page: "page",
};

export interface ReportServiceOptions {
  /** Base of the page and badge URLs, without a trailing slash. */
  publicUrl: string;
  now?: () => Date;
  /** Windows whose reports stay stored; older builds are dropped and rebuilt on demand. Default 16. */
  keepWindows?: number;
}

/**
 * A following indexer moves the latest checkpoint every block, and each new end block is a new window:
 * without a bound the stored reports would grow by a window per page view. A dropped window is rebuilt
 * identically (but for `generated_at`) when asked for again.
 */
export const DEFAULT_KEEP_WINDOWS = 16;

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** Lower-cases a merchant address, or rejects it as bad input. */
export function parseAddress(value: string): string {
  if (!ADDRESS.test(value))
    throw new BadInputError(`"${value}" is not an address: 0x followed by 40 hex digits`, "bad_address");
  return value.toLowerCase();
}

/**
 * Reports, materialized per window. A window's reports are built together (rank needs all of them)
 * and kept in the store's `reports` table with the data version they saw; they are rebuilt when an
 * import or the indexer has changed the data since, so `generated_at` is stable between changes.
 * Calls are serialized: the store has one connection and a build uses temporary tables.
 */
export class ReportService {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly now: () => Date;

  constructor(
    private readonly store: Store,
    private readonly options: ReportServiceOptions,
  ) {
    this.now = options.now ?? (() => new Date());
  }

  /** One merchant's report for the window ending at `endBlock` (default: the latest checkpoint). */
  async report(address: string, endBlock?: number): Promise<{ report: Report; details: ReportDetails }> {
    const merchant = parseAddress(address);
    return this.serial(async () => {
      const window = await this.ensureWindow(endBlock);
      const row = await this.store.one<{ body: string; details: string }>(
        "SELECT body, details FROM reports WHERE chain = 'base' AND end_block = $end AND address = $address",
        { end: window.end_block, address: merchant },
      );
      if (!row) throw new NotFoundError(`no merchant ${merchant} is known on Base`, "unknown_merchant");
      return { report: JSON.parse(row.body) as Report, details: JSON.parse(row.details) as ReportDetails };
    });
  }

  /** Every merchant's report of one window, by address. */
  reports(endBlock?: number): Promise<{ window: ReportWindow; reports: Report[] }> {
    return this.serial(async () => {
      const window = await this.ensureWindow(endBlock);
      const rows = await this.store.all<{ body: string }>(
        "SELECT body FROM reports WHERE chain = 'base' AND end_block = $end ORDER BY address",
        { end: window.end_block },
      );
      return { window, reports: rows.map((r) => JSON.parse(r.body) as Report) };
    });
  }

  /** Builds the window's reports unless the stored ones are current; resolves to the window. */
  build(endBlock?: number): Promise<ReportWindow> {
    return this.serial(() => this.ensureWindow(endBlock));
  }

  /** The ranked merchants of one window, read from the stored reports without parsing them all. */
  leaderboard(endBlock?: number) {
    return this.serial(async () => {
      const window = await this.ensureWindow(endBlock);
      const entry = Object.entries(LEADERBOARD_FIELDS).map(([key, field]) => `'${key}', body->'${field}'`);
      const rows = await this.store.all<{ entry: string }>(
        `SELECT json_object(${entry.join(", ")})::VARCHAR AS entry FROM reports
         WHERE chain = 'base' AND end_block = $end AND (body->>'rank_by_real_revenue') IS NOT NULL
         ORDER BY (body->>'rank_by_real_revenue')::BIGINT, address`,
        { end: window.end_block },
      );
      const built = await this.store.one<{ generated_at: string }>(
        "SELECT generated_at FROM report_windows WHERE chain = 'base' AND end_block = $end",
        { end: window.end_block },
      );
      return {
        chain: "base" as const,
        generated_at: built?.generated_at ?? isoUtc(Math.floor(this.now().getTime() / 1000)),
        license: LICENSE_URL,
        window,
        merchants: rows.map((r) => JSON.parse(r.entry) as LeaderboardEntry),
      };
    });
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async ensureWindow(endBlock?: number): Promise<ReportWindow> {
    const window = await resolveWindow(this.store, endBlock);
    await this.buildIfStale(window);
    return window;
  }

  /** Builds the window's reports unless the stored ones saw the current data. */
  private async buildIfStale(window: ReportWindow): Promise<void> {
    const version = await dataVersion(this.store);
    const cached = await this.store.one<{ data_version: bigint; public_url: string }>(
      "SELECT data_version, public_url FROM report_windows WHERE chain = 'base' AND end_block = $end",
      { end: window.end_block },
    );
    const fresh = cached?.data_version === version && cached.public_url === this.options.publicUrl;
    if (!fresh) await this.write(window, version);
  }

  /**
   * Aggregates the window, then stores its reports in one transaction. The aggregation runs outside
   * that transaction on purpose: DuckDB reads tables created inside an open transaction from its
   * transaction-local storage, which made every step after the first pass about a third slower
   * (0.35-0.4 s of a 3.5 s build of 10 million payments). Its statements then each see the latest
   * committed data, so the transaction checks that the data version is still the one the build
   * started from: every writer bumps it in the transaction of its write, so an equal version means
   * no write landed in between and all the statements saw the same data. Otherwise the window is
   * built again, this time wholly inside the transaction.
   */
  private async write(window: ReportWindow, version: bigint): Promise<void> {
    const dates = windowDates(window);
    const bounds = {
      startBlock: window.start_block,
      endBlock: window.end_block,
      firstDate: dates[0] ?? window.start.slice(0, 10),
    };
    const generatedAt = isoUtc(Math.floor(this.now().getTime() / 1000));
    const context = { window, dates, generatedAt, publicUrl: this.options.publicUrl };
    try {
      // A cache of the listings, kept by its own fingerprint: it may be refreshed apart from the reports.
      await this.store.transaction(() => refreshListingDocs(this.store));
      await aggregateWindow(this.store, bounds);
      const stored = await this.store.transaction(async () => {
        if ((await dataVersion(this.store)) !== version) return false;
        await this.storeReports(context, version);
        return true;
      });
      if (stored) return;
    } finally {
      await dropWindowTables(this.store);
    }
    await this.store.transaction(async () => {
      // A failure rolls the whole transaction back, the window's temporary tables with it.
      await refreshListingDocs(this.store);
      await aggregateWindow(this.store, bounds);
      await this.storeReports(context, await dataVersion(this.store));
      await dropWindowTables(this.store);
    });
  }

  /** Replaces the window's stored reports with those of its aggregated tables (inside a transaction). */
  private async storeReports(context: ReportContext, version: bigint): Promise<void> {
    const end = context.window.end_block;
    await this.store.run("DELETE FROM reports WHERE chain = 'base' AND end_block = $end", { end });
    await writeReports(this.store, context);
    await this.store.run(
      "INSERT OR REPLACE INTO report_windows VALUES ('base', $end, $version, $url, $generated)",
      { end, version, url: this.options.publicUrl, generated: context.generatedAt },
    );
    await this.dropOldWindows(end);
  }

  /** Keeps the reports of the most recently built windows (and always `current`'s). */
  private async dropOldWindows(current: number): Promise<void> {
    const keep = Math.max(1, this.options.keepWindows ?? DEFAULT_KEEP_WINDOWS);
    const stale = `SELECT end_block FROM report_windows WHERE chain = 'base' AND end_block <> $current
      ORDER BY generated_at DESC, end_block DESC OFFSET $offset`;
    const params = { current, offset: keep - 1 };
    await this.store.run(`DELETE FROM reports WHERE chain = 'base' AND end_block IN (${stale})`, params);
    await this.store.run(
      `DELETE FROM report_windows WHERE chain = 'base' AND end_block IN (${stale})`,
      params,
    );
  }
}

export type Leaderboard = Awaited<ReturnType<ReportService["leaderboard"]>>;
