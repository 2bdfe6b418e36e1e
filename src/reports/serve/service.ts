import type { StoreChanges } from "../../analytics/changes.ts";
import type { Analytics } from "../../analytics/duckdb.ts";
import { dataVersion } from "../../analytics/migrations.ts";
import { AppError, NotFoundError } from "../../common/errors.ts";
import { log } from "../../common/log.ts";
import { reportBuildSeconds, secondsSince } from "../../common/metrics.ts";
import { sealOf } from "../attest/seal.ts";
import { feedAttestation, type SealedWeekRow, sealedWeek, servedRows, storeSeal } from "../attest/store.ts";
import {
  type BoardPage,
  type EvidenceDocument,
  FLAG_FEED_PAGE_SIZE,
  type FlagFeed,
  type FlagRecord,
  LEADERBOARD_PAGE_SIZE,
  type Leaderboard,
  type MerchantDocuments,
  type ReportDetails,
  type ReportWindow,
  type SearchDocument,
  type WalletHistory,
  type WalletWeek,
  type WindowBatches,
} from "../model.ts";
import type { Report } from "../schema.ts";
import { METHODOLOGY_VERSION, methodologyOf } from "../screens/methodology.ts";
import { boardEntries, boardTotals } from "../week/board.ts";
import { evidenceContext, evidenceDocuments } from "../week/evidence-document.ts";
import { evidenceUrl, flagRecord } from "../week/flag-records.ts";
import { type FlagRow, flagBatch, flaggedWallets, flagRows, flagTotals, walletRows } from "../week/flags.ts";
import {
  LICENSE_URL,
  pagePrefix,
  parseStoredReport,
  type ReportContext,
  reportsQuery,
  type StoredReportRow,
} from "../week/report.ts";
import { listingsMatching, SEARCH_LIMIT, SQL_MERCHANT_MATCHES, searchText } from "../week/search.ts";
import { DEFAULT_KEEP_WINDOWS, storeWindow } from "../week/store.ts";
import { resolveWindow, windowDates } from "../week/window.ts";
import { LatestWindow } from "./latest.ts";
import { parseAddress } from "./params.ts";
import { ReaderPool } from "./reader-pool.ts";

/** Merchants a batch of a whole window's read holds: a few megabytes of JSON. */
export const BATCH_REPORTS = 2_000;

/** A stored report's details when no flag names a wallet. */
const NO_FLAGGED_WALLETS = '{"flagged_wallets":{}}';

export interface ReportServiceOptions {
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

/** How far back a window's data reaches for `StoreChanges`: the latest moves with every commit. */
const reachOf = (endBlock: number | undefined): number => endBlock ?? Number.POSITIVE_INFINITY;

/**
 * Reports, materialized per window. A window's reports are built together (rank needs all of them)
 * and kept in the analytics database's `reports` table with the data version they saw; they are rebuilt when an
 * import or the indexer has changed the data since, so `generated_at` is stable between changes.
 * Checking and building windows is one call at a time on the service's connection (a build uses temporary
 * tables and a transaction); reads run side by side on connections of their own (`ReaderPool`), and readers
 * of the latest window are served the last one built while the next head's is built (`latestEnd`).
 */
export class ReportService {
  /**
   * Windows found current, by requested end block, with the epoch of the store's changes they were
   * current at; as many as stay stored, which are these first (`pinned`).
   */
  private readonly current = new Map<number | "latest", { window: ReportWindow; epoch: number }>();
  /** The latest window as readers are served it. */
  private readonly latest: LatestWindow;
  private readonly now: () => Date;
  /** Connections for reads, beside the one that builds (closed with the analytics database). */
  private readonly readers: ReaderPool;

  constructor(
    private readonly analytics: Analytics,
    private readonly options: ReportServiceOptions,
  ) {
    this.now = options.now ?? (() => new Date());
    this.readers = new ReaderPool(analytics, options.readers ?? DEFAULT_READERS);
    this.latest = new LatestWindow(analytics.changes, () => this.build());
  }

  /** The store's writes as they commit: what was rendered stays true until one reaches it. */
  get changes(): StoreChanges {
    return this.analytics.changes;
  }

  /** The base of the page and badge URLs the reports name. */
  get publicUrl(): string {
    return this.options.publicUrl;
  }

  /** One merchant's report for the window ending at `endBlock` (default: the latest checkpoint). */
  async report(address: string, endBlock?: number): Promise<{ report: Report; details: ReportDetails }> {
    const merchant = parseAddress(address);
    return this.reading(endBlock, "report", async (db, window) => {
      const { sql, params } = reportsQuery(await this.context(window, db), merchant);
      // One statement text for every merchant: planned once, its plan kept (a page view's main cost).
      const [row] = await db.allPrepared<StoredReportRow & { address: string }>(sql, params);
      if (!row) throw new NotFoundError(`no merchant ${merchant} is known on Base`, "unknown_merchant");
      const [served] = await servedRows(db, window.end_block, [row], { only: merchant });
      return parseStoredReport(served ?? row);
    });
  }

  /** The evidence behind one merchant's flags (`week/evidence-document.ts`). */
  async evidence(address: string, endBlock?: number): Promise<EvidenceDocument> {
    const merchant = parseAddress(address);
    return this.reading(endBlock, "evidence", async (db, window) => {
      const context = await this.context(window, db);
      const { sql, params } = reportsQuery(context, merchant);
      const [row] = await db.allPrepared<StoredReportRow>(sql, params);
      if (!row) throw new NotFoundError(`no merchant ${merchant} is known on Base`, "unknown_merchant");
      const [document] = await evidenceDocuments(db, evidenceContext(context), [parseStoredReport(row)]);
      return document as EvidenceDocument;
    });
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
      evidenceDocuments(this.analytics, evidenceContext(context), rows.map(parseStoredReport)),
    );
  }

  /**
   * Every merchant's report, its details and its evidence, of one window, by address, in batches: a few
   * statements a batch, where `report` and `evidence` take four or more for each merchant (what `publish`
   * renders every merchant's files from).
   */
  readMerchants(endBlock?: number, size = BATCH_REPORTS): Promise<WindowBatches<MerchantDocuments>> {
    return this.inBatches(endBlock, size, "all", async (context, stored) => {
      const rows = stored.map(parseStoredReport);
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
        await this.sameBuild(end, build);
        const next = await this.analytics.one<{ through: string | null }>(
          `SELECT max(address) AS through FROM (SELECT address FROM reports
             WHERE chain = 'base' AND end_block = $end AND address > $after ORDER BY address LIMIT $size)`,
          { end, after, size },
        );
        if (!next?.through) return undefined;
        const { sql, params } = reportsQuery(first, { after, through: next.through });
        const rows = await this.analytics.all<StoredReportRow & { address: string }>(
          which === "flagged" ? `SELECT * FROM (${sql}) WHERE details <> '${NO_FLAGGED_WALLETS}'` : sql,
          params,
        );
        const served = await servedRows(this.analytics, end, rows, { after, through: next.through });
        return { through: next.through, items: await read(first, served) };
      });
      if (!batch) return;
      after = batch.through;
      if (batch.items.length > 0) yield batch.items;
    }
  }

  /**
   * Seals the week ending at `end` (src/reports/attest/seal.ts), its reports built first unless they are
   * current, in one turn with the builds: from then on the window is never built again nor dropped, and
   * what was sealed is what its attestation commits to. A week sealed before is answered as it was. Refuses
   * a window that is not complete (its last blocks not all final).
   */
  sealWeek(end: number): Promise<SealedWeekRow> {
    return this.serial(async () => {
      const sealed = await sealedWeek(this.analytics, end);
      if (sealed) return sealed;
      const window = await this.ensureWindow(end);
      if (!window.complete) {
        throw new AppError(409, "week_open", `the window ending at block ${end} is not complete: not sealed`);
      }
      const seal = await sealOf(this.analytics, await this.context(window));
      await this.analytics.transaction(() => storeSeal(this.analytics, seal, this.now()));
      return (await sealedWeek(this.analytics, end)) as SealedWeekRow;
    });
  }

  /** Builds the window's reports unless the stored ones are current; resolves to the window. */
  build(endBlock?: number): Promise<ReportWindow> {
    return this.serial(() => this.ensureWindow(endBlock));
  }

  /**
   * The end block of the latest window as readers are served it: the last one built, while the next
   * head's is built (latest.ts; docs/report.md, "Serving readers").
   */
  latestEnd(): Promise<number> {
    return this.latest.end();
  }

  /**
   * Calls `hook` with the end blocks of the previous and the new latest window once the new one is
   * built, before readers are served it (the routes render what readers asked of the previous one).
   */
  onLatestBuilt(hook: (from: number, to: number) => Promise<void>): void {
    this.latest.onBuilt(hook);
  }

  /** Settles once the latest window of every commit so far is built for readers (or its build failed). */
  latestBuilt(): Promise<void> {
    return this.latest.built();
  }

  /**
   * One page of a window's leaderboard: the ranked merchants by rank, then the unranked with the reason,
   * `size` a page (page 1 first), read from the stored reports' figures by their place on the board.
   */
  leaderboard(
    endBlock?: number,
    { page = 1, size = LEADERBOARD_PAGE_SIZE }: BoardPage = {},
  ): Promise<Leaderboard> {
    if (!Number.isSafeInteger(page) || page < 1)
      throw new Error(`a leaderboard page is 1 or more, not ${page}`);
    if (!Number.isSafeInteger(size) || size < 1)
      throw new Error(`a leaderboard page holds 1 or more, not ${size}`);
    return this.reading(endBlock, "leaderboard", async (db, window) => {
      const context = await this.context(window, db);
      const totals = await boardTotals(db, window.end_block);
      const pages = Math.max(1, Math.ceil(totals.merchants / size));
      if (page > pages) {
        throw new NotFoundError(
          `the leaderboard of the window ending at block ${window.end_block} has ${pages} ${pages === 1 ? "page" : "pages"} of ${size}, not ${page}`,
          "no_such_page",
        );
      }
      const { merchants, unranked } = await boardEntries(
        db,
        this.options.publicUrl,
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
    });
  }

  /**
   * The window's merchants whose name or address holds `query`, or one of whose listings' host or URL does,
   * as leaderboard entries (at most `SEARCH_LIMIT`, in the leaderboard's order), and the listings whose host
   * or URL holds it, any merchant's (src/reports/week/search.ts).
   */
  search(query: string, endBlock?: number): Promise<SearchDocument> {
    const text = searchText(query);
    return this.reading(endBlock, "search", async (db, window) => {
      const context = await this.context(window, db);
      const end = window.end_block;
      const q = text.toLowerCase();
      const found = await boardEntries(
        db,
        this.options.publicUrl,
        end,
        SQL_MERCHANT_MATCHES,
        { q },
        SEARCH_LIMIT,
      );
      const matching = await db.one<{ merchants: number }>(
        `SELECT count(*)::DOUBLE AS merchants FROM reports r
           WHERE r.chain = 'base' AND r.end_block = $end AND ${SQL_MERCHANT_MATCHES}`,
        { end, q },
      );
      const { total, listings } = await listingsMatching(db, {
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
    });
  }

  /**
   * One page of a window's flag feed: its flagged wallets by flagged dollars, largest first, then address,
   * `size` a page (page 1 first), each with its merchants and screens; only one merchant's rows when
   * `merchant` is its address (src/reports/week/flags.ts).
   */
  flags(
    endBlock?: number,
    { page = 1, size = FLAG_FEED_PAGE_SIZE, merchant }: BoardPage & { merchant?: string } = {},
  ): Promise<FlagFeed> {
    if (!Number.isSafeInteger(page) || page < 1) throw new Error(`a feed page is 1 or more, not ${page}`);
    if (!Number.isSafeInteger(size) || size < 1) throw new Error(`a feed page holds 1 or more, not ${size}`);
    const only = merchant === undefined ? null : parseAddress(merchant);
    return this.reading(endBlock, "flags", async (db, window) => {
      const context = await this.context(window, db);
      const end = window.end_block;
      if (only !== null) await this.knownMerchant(db, end, only);
      const totals = await flagTotals(db, end, only);
      const pages = Math.max(1, Math.ceil(totals.wallets / size));
      if (page > pages) {
        throw new NotFoundError(
          `the flag feed of the window ending at block ${end}${only === null ? "" : ` at ${only}`} has ${pages} ${pages === 1 ? "page" : "pages"} of ${size}, not ${page}`,
          "no_such_page",
        );
      }
      const rows = await flagRows(db, end, only, { offset: (page - 1) * size, size });
      const attestation = await feedAttestation(db, end);
      return {
        chain: "base" as const,
        generated_at: context.generatedAt,
        license: LICENSE_URL,
        window,
        methodology: methodologyOf(this.options.publicUrl, context.methodology),
        merchant: only,
        totals,
        page: { number: page, size, pages },
        wallets: flaggedWallets(rows, (row) => evidenceUrl(context.publicUrl, end, row), context.methodology),
        ...(attestation ? { attestation } : {}),
      };
    });
  }

  /**
   * One wallet's flags in every stored window, the latest first: where it was flagged, by which screen, and
   * why. The latest window as readers are served it is built first, so that the history reaches this week;
   * older weeks are those still stored (`keepWindows`). A wallet never flagged has no weeks.
   */
  async wallet(address: string): Promise<WalletHistory> {
    const wallet = parseAddress(address);
    const latest = await this.latestEnd();
    return this.reading(latest, "wallet", async (db) => {
      const byWindow = new Map<number, (FlagRow & { generated_at: string; methodology: string })[]>();
      for (const row of await walletRows(db, wallet)) {
        const rows = byWindow.get(row.end_block) ?? [];
        rows.push(row);
        byWindow.set(row.end_block, rows);
      }
      const weeks: WalletWeek[] = [];
      for (const [end, rows] of byWindow) {
        const first = rows[0] as (typeof rows)[number];
        const [flags] = flaggedWallets(rows, (row) => this.evidenceUrl(end, row), first.methodology);
        if (!flags) continue;
        const { wallet: _, ...week } = flags;
        weeks.push({ window: await resolveWindow(db, end), generated_at: first.generated_at, ...week });
      }
      return {
        chain: "base" as const,
        license: LICENSE_URL,
        wallet,
        methodology: methodologyOf(this.options.publicUrl),
        weeks,
      };
    });
  }

  /**
   * Every row of a window's flag feed (a wallet at a merchant under a screen), by wallet, in batches of
   * `size` wallets, as `flags.ndjson` lists them.
   */
  async readFlags(endBlock?: number, size = BATCH_REPORTS): Promise<WindowBatches<FlagRecord>> {
    const [first, build] = await this.serial(async () => {
      const context = await this.context(await this.ensureWindow(endBlock));
      return [context, await this.buildOf(context.window.end_block)] as const;
    });
    return { window: first.window, batches: this.flagBatches(first, build, size) };
  }

  /** A window's flag rows, `size` wallets at a time, each batch in a turn of its own, one build throughout. */
  private async *flagBatches(
    context: ReportContext,
    build: string | undefined,
    size: number,
  ): AsyncGenerator<FlagRecord[]> {
    const end = context.window.end_block;
    let after = "";
    for (;;) {
      const batch = await this.serial(async () => {
        await this.sameBuild(end, build);
        return flagBatch(this.analytics, end, after, size);
      });
      if (!batch) return;
      after = batch.through;
      const records = { end, publicUrl: context.publicUrl, methodology: context.methodology };
      yield batch.rows.map((row) => flagRecord(records, row));
    }
  }

  /** Refuses a read that finds the window built again since it began, or dropped: it would mix two builds. */
  private async sameBuild(end: number, build: string | undefined): Promise<void> {
    const now = await this.buildOf(end);
    if (now === undefined || now !== build) {
      throw new AppError(
        409,
        "window_rebuilt",
        `the reports of the window ending at block ${end} were built again while they were read: ask again`,
      );
    }
  }

  /** Unless the window has a report of `merchant`, a 404 as `report` answers it. */
  private async knownMerchant(db: Analytics, end: number, merchant: string): Promise<void> {
    const known = await db.one(
      "SELECT 1 AS known FROM reports WHERE chain = 'base' AND end_block = $end AND address = $merchant",
      { end, merchant },
    );
    if (!known) throw new NotFoundError(`no merchant ${merchant} is known on Base`, "unknown_merchant");
  }

  private evidenceUrl(end: number, row: FlagRow): string {
    return evidenceUrl(this.options.publicUrl, end, row);
  }

  /** What rendering a built window's reports needs beyond the stored rows. */
  private async context(window: ReportWindow, db = this.analytics): Promise<ReportContext> {
    // A sealed week's links stay those it was sealed with, as its reports' do: its feed's hash counts them.
    const built = await db.one<{ generated_at: string; methodology: string; sealed_url: string | null }>(
      `SELECT w.generated_at, w.methodology, a.public_url AS sealed_url FROM report_windows w
       LEFT JOIN attestations a ON a.end_block = w.end_block WHERE w.chain = 'base' AND w.end_block = $end`,
      { end: window.end_block },
    );
    if (!built)
      throw new Error(`the reports of the window ending at block ${window.end_block} are not built`);
    return {
      window,
      dates: windowDates(window),
      generatedAt: built.generated_at,
      publicUrl: built.sealed_url ?? this.options.publicUrl,
      methodology: built.methodology,
    };
  }

  /**
   * `read` on a reader connection of its own, in one transaction (one snapshot of the store, whatever is
   * built meanwhile), once the window is built: readers wait in the queue only while a window is checked or
   * built, and read side by side (DuckDB runs many readers at once), so a long evidence does not hold a
   * badge, nor the indexer's writes a reader.
   */
  private async reading<T>(
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
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    return this.analytics.exclusive(fn);
  }

  /**
   * The window ending at `endBlock` (default: the latest checkpoint), its reports built. A window found
   * current before, that no write has reached since (src/analytics/changes.ts), is taken as it was: a
   * closed week is built once, however far the indexer moves the latest, and a window is resolved (the
   * payments' latest block read, tens of milliseconds on a large analytics database) only when a write
   * reached it.
   */
  private async ensureWindow(endBlock?: number): Promise<ReportWindow> {
    const key = endBlock ?? "latest";
    const changes = this.analytics.changes;
    const seen = this.current.get(key);
    if (seen && changes.untouchedSince(seen.epoch, reachOf(endBlock)) && (await this.stored(seen.window))) {
      seen.epoch = changes.epoch;
      this.current.delete(key);
      this.current.set(key, seen);
      return seen.window;
    }
    const epoch = changes.epoch;
    const version = await dataVersion(this.analytics);
    const window = await resolveWindow(this.analytics, endBlock);
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
      "SELECT 1 AS stored FROM report_windows WHERE chain = 'base' AND end_block = $end",
      { end: window.end_block },
    );
    return row !== undefined;
  }

  /**
   * Builds the window's reports unless the stored ones saw data version `version` and were built under this
   * program's methodology: a window stored under another (an earlier release's) is built again under this one,
   * and its pages then say so.
   */
  private async buildIfStale(window: ReportWindow, version: bigint): Promise<void> {
    // Page and badge URLs are rendered on read: a new public URL needs no rebuild.
    const cached = await this.analytics.one<{ data_version: bigint; methodology: string | null }>(
      "SELECT data_version, methodology FROM report_windows WHERE chain = 'base' AND end_block = $end",
      { end: window.end_block },
    );
    const stale = cached?.data_version !== version || cached.methodology !== METHODOLOGY_VERSION;
    if (stale && cached && (await sealedWeek(this.analytics, window.end_block))) {
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
      await timed("window", () => storeWindow(this.analytics, window, version, store))();
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
