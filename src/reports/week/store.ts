/**
 * Storing a window's reports: aggregated (aggregates.ts), written as rows (report.ts) with the data version
 * they saw in `report_windows`, and the oldest windows dropped. The report service calls it when a window's
 * stored reports are missing or stale (src/reports/serve/service.ts).
 */
import type { Analytics } from "../../analytics/duckdb.ts";
import { windowVersion } from "../../analytics/migrations.ts";
import { isTransactionConflict } from "../../analytics/store-errors.ts";
import type { AnyChainRecord } from "../../chain/chains.ts";
import type { ReportWindow } from "../model.ts";
import { sqlChain, sqlSlug } from "../scope.ts";
import { METHODOLOGY_VERSION } from "../screens/methodology.ts";
import { aggregateWindow, dropWindowTables } from "./aggregates.ts";
import { dropFlags, writeFlags } from "./flags.ts";
import { type ReportContext, writeReports } from "./report.ts";
import { firstDate, isoUtc, windowDates } from "./window.ts";

/**
 * A following indexer moves the latest checkpoint every block, and each new end block is a new window:
 * without a bound the stored reports would grow by a window per page view. A dropped window is rebuilt
 * identically (but for `generated_at`) when asked for again.
 */
export const DEFAULT_KEEP_WINDOWS = 16;

/** How many times a build whose commit lost to another writer is tried again before the error stands. */
const CONFLICT_ATTEMPTS = 3;

export interface StoreOptions {
  /** Base of the page and badge URLs, without a trailing slash. */
  publicUrl: string;
  /** The build's `generated_at`. */
  now: () => Date;
  /** Windows whose reports stay stored; default `DEFAULT_KEEP_WINDOWS`. */
  keepWindows?: number;
  /**
   * End blocks of windows kept before the most recently built, the most recently asked first: the
   * latest window moving every block must not push out a week readers are reading.
   */
  pinned?: readonly number[];
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
export async function storeWindow(
  analytics: Analytics,
  chain: AnyChainRecord,
  window: ReportWindow,
  version: bigint,
  options: StoreOptions,
): Promise<void> {
  const dates = windowDates(window);
  const bounds = {
    chain,
    startBlock: window.start_block,
    endBlock: window.end_block,
    firstDate: firstDate(window, dates),
    startTime: Date.parse(window.start),
    endTime: Date.parse(window.end),
  };
  const generatedAt = isoUtc(Math.floor(options.now().getTime() / 1000));
  const context = {
    chain,
    window,
    dates,
    generatedAt,
    publicUrl: options.publicUrl,
    methodology: METHODOLOGY_VERSION,
  };
  try {
    await aggregateWindow(analytics, bounds);
    const stored = await analytics
      .transaction(async () => {
        if ((await windowVersion(analytics, window.end_block, chain.slug)) !== version) return false;
        await storeReports(analytics, context, version, options);
        return true;
      })
      // A writer on another connection committed first: build it again below, on its data.
      .catch((error: unknown) => (isTransactionConflict(error) ? false : Promise.reject(error)));
    if (stored) return;
  } finally {
    await dropWindowTables(analytics);
  }
  for (let attempt = 1; ; attempt++) {
    try {
      await analytics.transaction(async () => {
        // A failure rolls the whole transaction back, the window's temporary tables with it.
        await aggregateWindow(analytics, bounds);
        await storeReports(
          analytics,
          context,
          await windowVersion(analytics, window.end_block, chain.slug),
          options,
        );
        await dropWindowTables(analytics);
      });
      return;
    } catch (error) {
      if (!isTransactionConflict(error) || attempt >= CONFLICT_ATTEMPTS) throw error;
    }
  }
}

/**
 * Replaces the window's stored reports and its flag feed with those of its aggregated tables (inside a
 * transaction): a reader never sees the feed of one build beside the reports of another.
 */
async function storeReports(
  analytics: Analytics,
  context: ReportContext,
  version: bigint,
  options: StoreOptions,
): Promise<void> {
  const { chain } = context;
  const end = context.window.end_block;
  await analytics.run(`DELETE FROM reports WHERE ${sqlChain(chain)} AND end_block = $end`, { end });
  await writeReports(analytics, context);
  await writeFlags(analytics, chain, context.window);
  await analytics.run(
    `INSERT OR REPLACE INTO report_windows VALUES (${sqlSlug(chain)}, $end, $version, $url, $generated, $methodology)`,
    {
      end,
      version,
      url: options.publicUrl,
      generated: context.generatedAt,
      methodology: context.methodology,
    },
  );
  await dropOldWindows(analytics, chain, end, options.keepWindows, options.pinned ?? []);
}

/**
 * Keeps the reports of `keepWindows` windows: `current`'s, the pinned (the most recently asked first),
 * then the most recently built; and those of every sealed week.
 */
async function dropOldWindows(
  analytics: Analytics,
  chain: AnyChainRecord,
  current: number,
  keepWindows: number | undefined,
  pinned: readonly number[],
): Promise<void> {
  const keep = Math.max(1, keepWindows ?? DEFAULT_KEEP_WINDOWS);
  const spared = [...new Set([current, ...pinned.filter(Number.isSafeInteger)])].slice(0, keep);
  // A sealed week (src/reports/attest/) is kept for good, beside the windows counted here.
  const stale = `SELECT end_block FROM report_windows WHERE ${sqlChain(chain)} AND end_block NOT IN (${spared.join(", ")})
      AND end_block NOT IN (SELECT end_block FROM attestations)
    ORDER BY generated_at DESC, end_block DESC OFFSET $offset`;
  const params = { offset: keep - spared.length };
  await analytics.run(`DELETE FROM reports WHERE ${sqlChain(chain)} AND end_block IN (${stale})`, params);
  await dropFlags(analytics, chain, stale, params);
  await analytics.run(
    `DELETE FROM report_windows WHERE ${sqlChain(chain)} AND end_block IN (${stale})`,
    params,
  );
}
