import type { Analytics, Params } from "../analytics/duckdb.ts";
import { dataVersion } from "../analytics/migrations.ts";
import { isTransactionConflict } from "../analytics/store-errors.ts";
import { AppError, BadInputError, NotFoundError } from "../common/errors.ts";
import { reportBuildSeconds, secondsSince } from "../common/metrics.ts";
import { aggregateWindow, dropWindowTables } from "./aggregates.ts";
import { type EvidenceDocument, evidenceDocuments } from "./evidence/document.ts";
import type { EvidenceFacts } from "./evidence/facts.ts";
import {
  LEADERBOARD_COLUMNS,
  LICENSE_URL,
  pagePrefix,
  type ReportContext,
  reportsQuery,
  writeReports,
} from "./report.ts";
import type { Report } from "./schema.ts";
import { listingsMatching, SEARCH_LIMIT, SQL_MERCHANT_MATCHES, searchText } from "./search.ts";
import { isoUtc, type ReportWindow, resolveWindow, windowDates } from "./window.ts";

/** What the page shows beyond the report: the wallets behind each flag (the 20 largest per kind). */
export interface ReportDetails {
  /** Per flag kind, its largest wallets (at most 20), largest first. */
  flagged_wallets: Record<string, { wallet: string; tx: number; usd: number; evidence?: EvidenceFacts }[]>;
  /** Per flag kind with more wallets than that, the rest in one row. */
  more_wallets?: Record<string, { wallets: number; tx: number; usd: number }>;
  /** The reported and real totals in atomic units (decimal text), unrounded: cents hide small merchants' figures. */
  exact?: { amount: string; real_amount: string };
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

/** What every page of one merchant is rendered from. */
export interface MerchantDocuments {
  report: Report;
  details: ReportDetails;
  evidence: EvidenceDocument;
}

/** Merchants a batch of a whole window's read holds: a few megabytes of JSON. */
export const BATCH_REPORTS = 2_000;

/** A window, and its merchants' documents in batches by address, read as they are asked for. */
export interface WindowBatches<T> {
  window: ReportWindow;
  batches: AsyncIterable<T[]>;
}

/** A stored report's details when no flag names a wallet. */
const NO_FLAGGED_WALLETS = '{"flagged_wallets":{}}';

/** Merchants a page of the leaderboard's JSON holds. */
export const LEADERBOARD_PAGE_SIZE = 1000;

/** Which page of the leaderboard, of how many merchants. */
export interface BoardPage {
  /** 1-based; default 1. */
  page?: number;
  /** Default `LEADERBOARD_PAGE_SIZE`. */
  size?: number;
}

/** A window's merchants, counted. */
export interface BoardTotals {
  merchants: number;
  ranked: number;
  unranked: number;
}

/** Why a merchant of the window has no rank (src/reports/rank.ts). */
export type UnrankedReason = "frozen" | "no_passing_payment" | "below_one_cent";

/** A merchant of the window without a rank, listed below the ranking with the reason. */
export type UnrankedEntry = Omit<LeaderboardEntry, "rank"> & { reason: UnrankedReason };

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

/** Resolved windows kept per data version: end blocks asked for by readers, any number of them. */
const WINDOWS_KEPT = 64;

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

export const isAddress = (value: string): boolean => ADDRESS.test(value);

/** Lower-cases a merchant address, or rejects it as bad input. */
export function parseAddress(value: string): string {
  if (!isAddress(value))
    throw new BadInputError(`"${value}" is not an address: 0x followed by 40 hex digits`, "bad_address");
  return value.toLowerCase();
}

/**
 * Reports, materialized per window. A window's reports are built together (rank needs all of them)
 * and kept in the analytics database's `reports` table with the data version they saw; they are rebuilt when an
 * import or the indexer has changed the data since, so `generated_at` is stable between changes.
 * Calls are serialized: the analytics database has one connection and a build uses temporary tables.
 */
export class ReportService {
  private queue: Promise<unknown> = Promise.resolve();
  /** Resolved windows by requested end block, valid at data version `windowsVersion`. */
  private readonly windows = new Map<number | "latest", ReportWindow>();
  private windowsVersion = -1n;
  private readonly now: () => Date;

  constructor(
    private readonly analytics: Analytics,
    private readonly options: ReportServiceOptions,
  ) {
    this.now = options.now ?? (() => new Date());
  }

  /** The base of the page and badge URLs the reports name. */
  get publicUrl(): string {
    return this.options.publicUrl;
  }

  /** One merchant's report for the window ending at `endBlock` (default: the latest checkpoint). */
  async report(address: string, endBlock?: number): Promise<{ report: Report; details: ReportDetails }> {
    const merchant = parseAddress(address);
    return this.serial(
      timed("report", async () => {
        const window = await this.ensureWindow(endBlock);
        const { sql, params } = reportsQuery(await this.context(window), merchant);
        // One statement text for every merchant: planned once, its plan kept (a page view's main cost).
        const [row] = await this.analytics.allPrepared<StoredReportRow>(sql, params);
        if (!row) throw new NotFoundError(`no merchant ${merchant} is known on Base`, "unknown_merchant");
        return parsed(row);
      }),
    );
  }

  /** The evidence behind one merchant's flags (`evidence/document.ts`). */
  async evidence(address: string, endBlock?: number): Promise<EvidenceDocument> {
    const merchant = parseAddress(address);
    return this.serial(
      timed("evidence", async () => {
        const window = await this.ensureWindow(endBlock);
        const context = await this.context(window);
        const { sql, params } = reportsQuery(context, merchant);
        const [row] = await this.analytics.allPrepared<StoredReportRow>(sql, params);
        if (!row) throw new NotFoundError(`no merchant ${merchant} is known on Base`, "unknown_merchant");
        const [document] = await evidenceDocuments(this.analytics, evidenceContext(context), [parsed(row)]);
        return document as EvidenceDocument;
      }),
    );
  }

  /**
   * Every merchant's report of one window as the JSON text it is served as, by address, in batches: a
   * download of the whole window holds one batch at a time (see `batches`).
   */
  readReports(endBlock?: number, size = BATCH_REPORTS): Promise<WindowBatches<string>> {
    return this.inBatches(endBlock, size, "all", async (_, rows) => rows.map((row) => row.body));
  }

  /** The evidence of every merchant with flags in one window, by address, in batches. */
  readEvidence(endBlock?: number, size = BATCH_REPORTS): Promise<WindowBatches<EvidenceDocument>> {
    return this.inBatches(endBlock, size, "flagged", (context, rows) =>
      evidenceDocuments(this.analytics, evidenceContext(context), rows.map(parsed)),
    );
  }

  /**
   * Every merchant's report, its details and its evidence, of one window, by address, in batches: a few
   * statements a batch, where `report` and `evidence` take four or more for each merchant (what `publish`
   * renders every merchant's files from).
   */
  readMerchants(endBlock?: number, size = BATCH_REPORTS): Promise<WindowBatches<MerchantDocuments>> {
    return this.inBatches(endBlock, size, "all", async (context, stored) => {
      const rows = stored.map(parsed);
      const evidence = await evidenceDocuments(this.analytics, evidenceContext(context), rows);
      return rows.map((row, i) => ({ ...row, evidence: evidence[i] as EvidenceDocument }));
    });
  }

  /** Every merchant's report of one window, by address, as objects: for small windows (tests, the demo). */
  async reports(endBlock?: number): Promise<{ window: ReportWindow; reports: Report[] }> {
    const { window, batches } = await this.readReports(endBlock);
    const reports: Report[] = [];
    for await (const batch of batches) for (const body of batch) reports.push(JSON.parse(body) as Report);
    return { window, reports };
  }

  /** Which build of a window's reports is stored: its data version and time; undefined when none is. */
  private async buildOf(end: number): Promise<string | undefined> {
    const built = await this.analytics.one<{ build: string }>(
      `SELECT data_version::VARCHAR || ' ' || generated_at AS build FROM report_windows
       WHERE chain = 'base' AND end_block = $end`,
      { end },
    );
    return built?.build;
  }

  /** The window (built if it is not), and its reports read in batches by `read`. */
  private async inBatches<T>(
    endBlock: number | undefined,
    size: number,
    which: "all" | "flagged",
    read: (context: ReportContext, rows: StoredReportRow[]) => Promise<T[]>,
  ): Promise<WindowBatches<T>> {
    const [first, build] = await this.serial(async () => {
      const context = await this.context(await this.ensureWindow(endBlock));
      return [context, await this.buildOf(context.window.end_block)] as const;
    });
    return { window: first.window, batches: this.batches(first, build, size, which, read) };
  }

  /**
   * A built window's reports, `size` merchants at a time by address, each batch read in a turn of its own,
   * so that page views are answered between them. One build throughout: a batch that finds the window
   * built again since the first (the data in it changed and a reader asked for it) or dropped ends the read
   * with an error rather than mix two builds.
   */
  private async *batches<T>(
    first: ReportContext,
    build: string | undefined,
    size: number,
    which: "all" | "flagged",
    read: (context: ReportContext, rows: StoredReportRow[]) => Promise<T[]>,
  ): AsyncGenerator<T[]> {
    const end = first.window.end_block;
    let after = "";
    for (;;) {
      const batch = await this.serial(async () => {
        const now = await this.buildOf(end);
        if (now === undefined || now !== build) {
          throw new AppError(
            409,
            "window_rebuilt",
            `the reports of the window ending at block ${end} were built again while they were read: ask again`,
          );
        }
        const next = await this.analytics.one<{ through: string | null }>(
          `SELECT max(address) AS through FROM (SELECT address FROM reports
             WHERE chain = 'base' AND end_block = $end AND address > $after ORDER BY address LIMIT $size)`,
          { end, after, size },
        );
        if (!next?.through) return undefined;
        const { sql, params } = reportsQuery(first, { after, through: next.through });
        const rows = await this.analytics.all<StoredReportRow>(
          which === "flagged" ? `SELECT * FROM (${sql}) WHERE details <> '${NO_FLAGGED_WALLETS}'` : sql,
          params,
        );
        return { through: next.through, items: await read(first, rows) };
      });
      if (!batch) return;
      after = batch.through;
      if (batch.items.length > 0) yield batch.items;
    }
  }

  /** Builds the window's reports unless the stored ones are current; resolves to the window. */
  build(endBlock?: number): Promise<ReportWindow> {
    return this.serial(() => this.ensureWindow(endBlock));
  }

  /**
   * One page of a window's leaderboard: the ranked merchants by rank, then the unranked with the reason,
   * `size` a page (page 1 first), read from the stored reports' figures by their place on the board.
   */
  leaderboard(endBlock?: number, { page = 1, size = LEADERBOARD_PAGE_SIZE }: BoardPage = {}) {
    if (!Number.isSafeInteger(page) || page < 1)
      throw new Error(`a leaderboard page is 1 or more, not ${page}`);
    if (!Number.isSafeInteger(size) || size < 1)
      throw new Error(`a leaderboard page holds 1 or more, not ${size}`);
    return this.serial(
      timed("leaderboard", async () => {
        const window = await this.ensureWindow(endBlock);
        const context = await this.context(window);
        const totals = await this.boardTotals(window.end_block);
        const pages = Math.max(1, Math.ceil(totals.merchants / size));
        if (page > pages) {
          throw new NotFoundError(
            `the leaderboard of the window ending at block ${window.end_block} has ${pages} ${pages === 1 ? "page" : "pages"} of ${size}, not ${page}`,
            "no_such_page",
          );
        }
        const { merchants, unranked } = await this.boardEntries(
          window.end_block,
          "r.board_place > $after AND r.board_place <= $last",
          { after: (page - 1) * size, last: page * size },
        );
        return {
          chain: "base" as const,
          generated_at: context.generatedAt,
          license: LICENSE_URL,
          window,
          totals,
          page: { number: page, size, pages },
          merchants,
          unranked,
        };
      }),
    );
  }

  /**
   * The window's merchants whose name or address holds `query`, or one of whose listings' host or URL does,
   * as leaderboard entries (at most `SEARCH_LIMIT`, in the leaderboard's order), and the listings whose host
   * or URL holds it, any merchant's (src/reports/search.ts).
   */
  search(query: string, endBlock?: number) {
    const text = searchText(query);
    return this.serial(
      timed("search", async () => {
        const window = await this.ensureWindow(endBlock);
        const context = await this.context(window);
        const end = window.end_block;
        const q = text.toLowerCase();
        const found = await this.boardEntries(end, SQL_MERCHANT_MATCHES, { q }, SEARCH_LIMIT);
        const matching = await this.analytics.one<{ merchants: number }>(
          `SELECT count(*)::DOUBLE AS merchants FROM reports r
           WHERE r.chain = 'base' AND r.end_block = $end AND ${SQL_MERCHANT_MATCHES}`,
          { end, q },
        );
        const { total, listings } = await listingsMatching(this.analytics, {
          end,
          q,
          page_prefix: pagePrefix(this.options.publicUrl),
        });
        return {
          chain: "base" as const,
          generated_at: context.generatedAt,
          license: LICENSE_URL,
          window,
          query: text,
          totals: { merchants: matching?.merchants ?? 0, listings: total },
          ...found,
          listings,
        };
      }),
    );
  }

  /**
   * Leaderboard entries of a built window's stored reports `r` that `where` selects, in the leaderboard's
   * order (at most `limit`): the ranked with their rank, then the unranked with the reason.
   */
  private async boardEntries(
    end: number,
    where: string,
    params: Exclude<Params, unknown[]>,
    limit?: number,
  ): Promise<{ merchants: LeaderboardEntry[]; unranked: UnrankedEntry[] }> {
    const entry = Object.entries(LEADERBOARD_COLUMNS).map(([key, sql]) => `${sql} AS ${key}`);
    const rows = await this.analytics.all<
      Omit<LeaderboardEntry, "rank"> & { rank: number | null; frozen: boolean } & Record<string, unknown>
    >(
      `SELECT ${entry.join(", ")}, r.frozen FROM reports r
       WHERE r.chain = 'base' AND r.end_block = $end AND ${where}
       ORDER BY r.board_place${limit === undefined ? "" : ` LIMIT ${limit}`}`,
      { ...params, end, page_prefix: pagePrefix(this.options.publicUrl) },
    );
    const merchants: LeaderboardEntry[] = [];
    const unranked: UnrankedEntry[] = [];
    for (const { rank, frozen, ...row } of rows) {
      if (rank !== null) merchants.push({ rank, ...row });
      else unranked.push({ ...row, reason: unrankedReason(frozen, row.real_tx) });
    }
    return { merchants, unranked };
  }

  /** How many merchants a built window has, ranked and not. */
  private async boardTotals(end: number): Promise<BoardTotals> {
    const counts = await this.analytics.one<{ merchants: number; ranked: number }>(
      `SELECT count(*)::DOUBLE AS merchants, count(rank)::DOUBLE AS ranked FROM reports
       WHERE chain = 'base' AND end_block = $end`,
      { end },
    );
    const merchants = counts?.merchants ?? 0;
    const ranked = counts?.ranked ?? 0;
    return { merchants, ranked, unranked: merchants - ranked };
  }

  /** What rendering a built window's reports needs beyond the stored rows. */
  private async context(window: ReportWindow): Promise<ReportContext> {
    const built = await this.analytics.one<{ generated_at: string }>(
      "SELECT generated_at FROM report_windows WHERE chain = 'base' AND end_block = $end",
      { end: window.end_block },
    );
    if (!built)
      throw new Error(`the reports of the window ending at block ${window.end_block} are not built`);
    return {
      window,
      dates: windowDates(window),
      generatedAt: built.generated_at,
      publicUrl: this.options.publicUrl,
    };
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * The window ending at `endBlock` (default: the latest checkpoint), its reports built. Resolving a
   * window reads the payments' latest block, tens of milliseconds on a large analytics database, on every request;
   * it depends only on stored data, so it is kept until the data version moves.
   */
  private async ensureWindow(endBlock?: number): Promise<ReportWindow> {
    const version = await dataVersion(this.analytics);
    if (version !== this.windowsVersion) {
      this.windows.clear();
      this.windowsVersion = version;
    }
    const key = endBlock ?? "latest";
    let window = this.windows.get(key);
    if (!window) {
      window = await resolveWindow(this.analytics, endBlock);
      if (this.windows.size >= WINDOWS_KEPT) this.windows.clear();
      this.windows.set(key, window);
    }
    await this.buildIfStale(window, version);
    return window;
  }

  /** Builds the window's reports unless the stored ones saw data version `version`. */
  private async buildIfStale(window: ReportWindow, version: bigint): Promise<void> {
    // Page and badge URLs are rendered on read: a new public URL needs no rebuild.
    const cached = await this.analytics.one<{ data_version: bigint }>(
      "SELECT data_version FROM report_windows WHERE chain = 'base' AND end_block = $end",
      { end: window.end_block },
    );
    if (cached?.data_version !== version) await timed("window", () => this.write(window, version))();
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
      firstDate: firstDate(window, dates),
    };
    const generatedAt = isoUtc(Math.floor(this.now().getTime() / 1000));
    const context = { window, dates, generatedAt, publicUrl: this.options.publicUrl };
    try {
      await aggregateWindow(this.analytics, bounds);
      const stored = await this.analytics
        .transaction(async () => {
          if ((await dataVersion(this.analytics)) !== version) return false;
          await this.storeReports(context, version);
          return true;
        })
        // A writer on another connection committed first: build it again below, on its data.
        .catch((error: unknown) => (isTransactionConflict(error) ? false : Promise.reject(error)));
      if (stored) return;
    } finally {
      await dropWindowTables(this.analytics);
    }
    for (let attempt = 1; ; attempt++) {
      try {
        await this.analytics.transaction(async () => {
          // A failure rolls the whole transaction back, the window's temporary tables with it.
          await aggregateWindow(this.analytics, bounds);
          await this.storeReports(context, await dataVersion(this.analytics));
          await dropWindowTables(this.analytics);
        });
        return;
      } catch (error) {
        if (!isTransactionConflict(error) || attempt >= CONFLICT_ATTEMPTS) throw error;
      }
    }
  }

  /** Replaces the window's stored reports with those of its aggregated tables (inside a transaction). */
  private async storeReports(context: ReportContext, version: bigint): Promise<void> {
    const end = context.window.end_block;
    await this.analytics.run("DELETE FROM reports WHERE chain = 'base' AND end_block = $end", { end });
    await writeReports(this.analytics, context);
    await this.analytics.run(
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
    await this.analytics.run(`DELETE FROM reports WHERE chain = 'base' AND end_block IN (${stale})`, params);
    await this.analytics.run(
      `DELETE FROM report_windows WHERE chain = 'base' AND end_block IN (${stale})`,
      params,
    );
  }
}

/** How many times a build whose commit lost to another writer is tried again before the error stands. */
const CONFLICT_ATTEMPTS = 3;

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

export type Leaderboard = Awaited<ReturnType<ReportService["leaderboard"]>>;

/** What `/v1/search/base` answers (src/reports/search.ts). */
export type SearchDocument = Awaited<ReturnType<ReportService["search"]>>;

/** The leaderboard's JSON: page 1 here, page N at `/pages/N`. */
export const LEADERBOARD_PATH = "/v1/leaderboard/base";

/** Where page `n` of the leaderboard's JSON is. */
export const leaderboardPath = (n: number): string =>
  n === 1 ? LEADERBOARD_PATH : `${LEADERBOARD_PATH}/pages/${n}`;

/**
 * A page of the leaderboard as its JSON states it: with the URLs of the pages before and after it, kept to
 * its window (the latest moves on with every block indexed).
 */
export function leaderboardDocument(board: Leaderboard, publicUrl: string) {
  const { number, pages } = board.page;
  const link = (n: number) => `${publicUrl}${leaderboardPath(n)}?end_block=${board.window.end_block}`;
  return {
    ...board,
    page: {
      ...board.page,
      previous: number > 1 ? link(number - 1) : null,
      next: number < pages ? link(number + 1) : null,
    },
  };
}

export type LeaderboardDocument = ReturnType<typeof leaderboardDocument>;

/** A row of `reportsQuery`. */
type StoredReportRow = { body: string; details: string; amount: string; real_amount: string };

function parsed(row: StoredReportRow): {
  report: Report;
  details: ReportDetails;
} {
  const details = JSON.parse(row.details) as ReportDetails;
  details.exact = { amount: row.amount, real_amount: row.real_amount };
  return { report: JSON.parse(row.body) as Report, details };
}

/** Day 0 of the screens' `day`: the window's first date, or its start's for a window of no whole date. */
function firstDate(window: ReportWindow, dates: readonly string[]): string {
  return dates[0] ?? window.start.slice(0, 10);
}

function evidenceContext(context: ReportContext) {
  return {
    window: context.window,
    firstDate: firstDate(context.window, context.dates),
    generatedAt: context.generatedAt,
    publicUrl: context.publicUrl,
  };
}

function unrankedReason(frozen: boolean, realTx: number): UnrankedReason {
  if (frozen) return "frozen";
  return realTx === 0 ? "no_passing_payment" : "below_one_cent";
}
