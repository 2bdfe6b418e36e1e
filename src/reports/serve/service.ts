import type { StoreChanges } from "../../analytics/changes.ts";
import type { Analytics } from "../../analytics/duckdb.ts";
import type { AnyChainRecord } from "../../chain/chains.ts";
import { type SealedWeekRow, sealedWeeks } from "../attest/store.ts";
import type {
  BoardPage,
  EvidenceDocument,
  FlagFeed,
  FlagRecord,
  Leaderboard,
  MerchantDocuments,
  ReportDetails,
  ReportWindow,
  SealedWeeksDocument,
  SearchDocument,
  WalletHistory,
  WindowBatches,
} from "../model.ts";
import type { Report } from "../schema.ts";
import { BATCH_REPORTS, readEvidence, readFlags, readMerchants, readReports } from "./batches.ts";
import * as flagReads from "./flag-reads.ts";
import { LatestWindow } from "./latest.ts";
import * as reads from "./reads.ts";
import { sealWeek } from "./sealing.ts";
import { type ReportServiceOptions, ReportWindows } from "./windows.ts";

/**
 * Reports, materialized per window. A window's reports are built together (rank needs all of them)
 * and kept in the analytics database's `reports` table with the data version they saw; they are rebuilt when an
 * import or the indexer has changed the data since, so `generated_at` is stable between changes.
 * Checking and building windows is one call at a time on the service's connection (a build uses temporary
 * tables and a transaction); reads run side by side on connections of their own (`ReaderPool`), and readers
 * of the latest window are served the last one built while the next head's is built (`latestEnd`).
 *
 * The service is the one door to its parts, by what each serves: building windows (windows.ts), answering
 * readers (reads.ts, flag-reads.ts, and whole windows in batches, batches.ts) and sealing weeks (sealing.ts).
 */
export class ReportService {
  /** The windows as built, and the turns reads and builds take on the store. */
  private readonly windows: ReportWindows;
  /** The latest window as readers are served it. */
  private readonly latest: LatestWindow;

  constructor(
    private readonly analytics: Analytics,
    private readonly options: ReportServiceOptions,
  ) {
    this.windows = new ReportWindows(analytics, options);
    this.latest = new LatestWindow(analytics.changes, () => this.build(), this.windows.chain.slug);
  }

  /** The store's writes as they commit: what was rendered stays true until one reaches it. */
  get changes(): StoreChanges {
    return this.analytics.changes;
  }

  /** The base of the page and badge URLs the reports name. */
  get publicUrl(): string {
    return this.options.publicUrl;
  }

  /** The chain whose weeks this service reports. */
  get chain(): AnyChainRecord {
    return this.windows.chain;
  }

  /** One merchant's report for the window ending at `endBlock` (default: the latest checkpoint). */
  report(address: string, endBlock?: number): Promise<{ report: Report; details: ReportDetails }> {
    return reads.report(this.windows, address, endBlock);
  }

  /** The evidence behind one merchant's flags (`week/evidence-document.ts`). */
  evidence(address: string, endBlock?: number): Promise<EvidenceDocument> {
    return reads.evidence(this.windows, address, endBlock);
  }

  /**
   * Every merchant's report of one window as the JSON text it is served as, by address, in batches: a
   * download of the whole window holds one batch at a time.
   */
  readReports(endBlock?: number, size = BATCH_REPORTS): Promise<WindowBatches<string>> {
    return readReports(this.windows, endBlock, size);
  }

  /** The evidence of every merchant with flags in one window, by address, in batches. */
  readEvidence(endBlock?: number, size = BATCH_REPORTS): Promise<WindowBatches<EvidenceDocument>> {
    return readEvidence(this.windows, endBlock, size);
  }

  /** Every merchant's report, its details and its evidence, of one window, by address, in batches. */
  readMerchants(endBlock?: number, size = BATCH_REPORTS): Promise<WindowBatches<MerchantDocuments>> {
    return readMerchants(this.windows, endBlock, size);
  }

  /** Every merchant's report of one window, by address, as objects: for small windows (tests, the demo). */
  async reports(endBlock?: number): Promise<{ window: ReportWindow; reports: Report[] }> {
    const { window, batches } = await this.readReports(endBlock);
    const reports: Report[] = [];
    for await (const batch of batches) for (const body of batch) reports.push(JSON.parse(body) as Report);
    return { window, reports };
  }

  /** Seals the week ending at `end`, its reports built first unless they are current (sealing.ts). */
  sealWeek(end: number): Promise<SealedWeekRow> {
    return sealWeek(this.windows, end);
  }

  /**
   * The sealed weeks, newest first, each with its attestation once mined: which end blocks are attested, so a
   * reader can fetch and `verify` a week without knowing where weeks close.
   */
  async weeks(): Promise<SealedWeeksDocument> {
    const { chain } = this.windows;
    return {
      chain: chain.slug,
      weeks: await this.windows.readingStore("weeks", (db) => sealedWeeks(db, chain)),
    };
  }

  /**
   * `read` on a reader connection of its own, in one transaction (one snapshot of the store): for what spans
   * the chains' services (the leaderboard of every chain, serve/across.ts).
   */
  readStore<T>(kind: string, read: (db: Analytics) => Promise<T>): Promise<T> {
    return this.windows.readingStore(kind, read);
  }

  /** Builds the window's reports unless the stored ones are current; resolves to the window. */
  build(endBlock?: number): Promise<ReportWindow> {
    return this.windows.serial(() => this.windows.ensureWindow(endBlock));
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

  /** One page of a window's leaderboard, `size` a page (page 1 first; reads.ts). */
  leaderboard(endBlock?: number, page: BoardPage = {}): Promise<Leaderboard> {
    return reads.leaderboard(this.windows, endBlock, page);
  }

  /** The window's merchants and listings whose name, host or URL holds `query` (reads.ts). */
  search(query: string, endBlock?: number): Promise<SearchDocument> {
    return reads.search(this.windows, query, endBlock);
  }

  /** One page of a window's flag feed, or of one merchant's rows in it (flag-reads.ts). */
  flags(endBlock?: number, page: BoardPage & { merchant?: string } = {}): Promise<FlagFeed> {
    return flagReads.flags(this.windows, endBlock, page);
  }

  /** One wallet's flags in every stored window, the latest first (flag-reads.ts). */
  wallet(address: string): Promise<WalletHistory> {
    return flagReads.wallet(this.windows, address, () => this.latestEnd());
  }

  /** Every row of a window's flag feed, by wallet, in batches of `size` wallets (`flags.ndjson`). */
  readFlags(endBlock?: number, size = BATCH_REPORTS): Promise<WindowBatches<FlagRecord>> {
    return readFlags(this.windows, endBlock, size);
  }
}
