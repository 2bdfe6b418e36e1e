/**
 * A whole window read in batches (a download of every report, the evidence of every flagged merchant, what
 * `publish` renders, the flag feed's datasets): each batch in a turn of its own on the service's connection,
 * so that page views are answered between them, and one build throughout.
 */
import { AppError } from "../../common/errors.ts";
import { servedRows } from "../attest/store.ts";
import type { EvidenceDocument, FlagRecord, MerchantDocuments, WindowBatches } from "../model.ts";
import { sqlChain } from "../scope.ts";
import { evidenceContext, evidenceDocuments } from "../week/evidence-document.ts";
import { flagRecord } from "../week/flag-records.ts";
import { flagBatch } from "../week/flags.ts";
import { parseStoredReport, type ReportContext, reportsQuery, type StoredReportRow } from "../week/report.ts";
import type { ReportWindows } from "./windows.ts";

/** Merchants a batch of a whole window's read holds: a few megabytes of JSON. */
export const BATCH_REPORTS = 2_000;

/** A stored report's details when no flag names a wallet. */
const NO_FLAGGED_WALLETS = '{"flagged_wallets":{}}';

/**
 * Every merchant's report of one window as the JSON text it is served as, by address, in batches: a
 * download of the whole window holds one batch at a time (see `batches`).
 */
export function readReports(
  windows: ReportWindows,
  endBlock?: number,
  size = BATCH_REPORTS,
): Promise<WindowBatches<string>> {
  return inBatches(windows, endBlock, size, "all", async (_, rows) => rows.map((row) => row.body));
}

/** The evidence of every merchant with flags in one window, by address, in batches. */
export function readEvidence(
  windows: ReportWindows,
  endBlock?: number,
  size = BATCH_REPORTS,
): Promise<WindowBatches<EvidenceDocument>> {
  return inBatches(windows, endBlock, size, "flagged", (context, rows) =>
    evidenceDocuments(windows.analytics, evidenceContext(context), rows.map(parseStoredReport)),
  );
}

/**
 * Every merchant's report, its details and its evidence, of one window, by address, in batches: a few
 * statements a batch, where `report` and `evidence` take four or more for each merchant (what `publish`
 * renders every merchant's files from).
 */
export function readMerchants(
  windows: ReportWindows,
  endBlock?: number,
  size = BATCH_REPORTS,
): Promise<WindowBatches<MerchantDocuments>> {
  return inBatches(windows, endBlock, size, "all", async (context, stored) => {
    const rows = stored.map(parseStoredReport);
    const evidence = await evidenceDocuments(windows.analytics, evidenceContext(context), rows);
    return rows.map((row, i) => ({ ...row, evidence: evidence[i] as EvidenceDocument }));
  });
}

/**
 * Every row of a window's flag feed (a wallet at a merchant under a screen), by wallet, in batches of
 * `size` wallets, as `flags.ndjson` lists them.
 */
export async function readFlags(
  windows: ReportWindows,
  endBlock?: number,
  size = BATCH_REPORTS,
): Promise<WindowBatches<FlagRecord>> {
  const [first, build] = await windows.serial(async () => {
    const context = await windows.context(await windows.ensureWindow(endBlock));
    return [context, await buildOf(windows, context.window.end_block)] as const;
  });
  return { window: first.window, batches: flagBatches(windows, first, build, size) };
}

/** Which build of a window's reports is stored: its data version and time; undefined when none is. */
async function buildOf(windows: ReportWindows, end: number): Promise<string | undefined> {
  const built = await windows.analytics.one<{ build: string }>(
    `SELECT data_version::VARCHAR || ' ' || generated_at AS build FROM report_windows
       WHERE ${sqlChain(windows.chain)} AND end_block = $end`,
    { end },
  );
  return built?.build;
}

/** Refuses a read that finds the window built again since it began, or dropped: it would mix two builds. */
async function sameBuild(windows: ReportWindows, end: number, build: string | undefined): Promise<void> {
  const now = await buildOf(windows, end);
  if (now === undefined || now !== build) {
    throw new AppError(
      409,
      "window_rebuilt",
      `the reports of the window ending at block ${end} were built again while they were read: ask again`,
    );
  }
}

/** The window (built if it is not), and its reports read in batches by `read`. */
async function inBatches<T>(
  windows: ReportWindows,
  endBlock: number | undefined,
  size: number,
  which: "all" | "flagged",
  read: (context: ReportContext, rows: StoredReportRow[]) => Promise<T[]>,
): Promise<WindowBatches<T>> {
  const [first, build] = await windows.serial(async () => {
    const context = await windows.context(await windows.ensureWindow(endBlock));
    return [context, await buildOf(windows, context.window.end_block)] as const;
  });
  return { window: first.window, batches: batches(windows, first, build, size, which, read) };
}

/**
 * A built window's reports, `size` merchants at a time by address, each batch read in a turn of its own,
 * so that page views are answered between them. One build throughout: a batch that finds the window
 * built again since the first (the data in it changed and a reader asked for it) or dropped ends the read
 * with an error rather than mix two builds.
 */
async function* batches<T>(
  windows: ReportWindows,
  first: ReportContext,
  build: string | undefined,
  size: number,
  which: "all" | "flagged",
  read: (context: ReportContext, rows: StoredReportRow[]) => Promise<T[]>,
): AsyncGenerator<T[]> {
  const { analytics } = windows;
  const end = first.window.end_block;
  let after = "";
  for (;;) {
    const batch = await windows.serial(async () => {
      await sameBuild(windows, end, build);
      const next = await analytics.one<{ through: string | null }>(
        `SELECT max(address) AS through FROM (SELECT address FROM reports
             WHERE ${sqlChain(windows.chain)} AND end_block = $end AND address > $after ORDER BY address LIMIT $size)`,
        { end, after, size },
      );
      if (!next?.through) return undefined;
      const { sql, params } = reportsQuery(first, { after, through: next.through });
      const rows = await analytics.all<StoredReportRow & { address: string }>(
        which === "flagged" ? `SELECT * FROM (${sql}) WHERE details <> '${NO_FLAGGED_WALLETS}'` : sql,
        params,
      );
      const served = await servedRows(analytics, windows.chain, end, rows, { after, through: next.through });
      return { through: next.through, items: await read(first, served) };
    });
    if (!batch) return;
    after = batch.through;
    if (batch.items.length > 0) yield batch.items;
  }
}

/** A window's flag rows, `size` wallets at a time, each batch in a turn of its own, one build throughout. */
async function* flagBatches(
  windows: ReportWindows,
  context: ReportContext,
  build: string | undefined,
  size: number,
): AsyncGenerator<FlagRecord[]> {
  const end = context.window.end_block;
  let after = "";
  for (;;) {
    const batch = await windows.serial(async () => {
      await sameBuild(windows, end, build);
      return flagBatch(windows.analytics, windows.chain, end, after, size);
    });
    if (!batch) return;
    after = batch.through;
    const records = {
      chain: windows.chain.slug,
      end,
      publicUrl: context.publicUrl,
      methodology: context.methodology,
    };
    yield batch.rows.map((row) => flagRecord(records, row));
  }
}
