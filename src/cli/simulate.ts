import fs from "node:fs";
import path from "node:path";
import { AnalyticsBusyError, openAnalytics } from "../analytics/duckdb.ts";
import { type CheckRow, checkReports, TOLERANCE } from "../demo/check.ts";
import { readTruth } from "../demo/truth.ts";
import type { Report } from "../reports/schema.ts";
import { ReportService } from "../reports/service.ts";
import { configFrom, type Flags, UsageError } from "./args.ts";

/**
 * `simulate --check [--data DIR] [--json]`: compares the latest window's reports with the demo's ground
 * truth and prints the error per merchant; exit 1 when a merchant is off. Reads the analytics database, or, while the
 * demo holds it, the running report service's dataset (`--public-url`, default the configured port).
 */
export async function runSimulate(args: string[], flags: Flags): Promise<number> {
  if (args.length > 0 || !flags.check) throw new UsageError("usage: simulate --check [--data DIR] [--json]");
  const config = configFrom(flags);
  const truthFile = path.join(config.dataDir, "demo", "truth.ndjson");
  if (!fs.existsSync(truthFile)) {
    throw new UsageError(
      `no ground truth in ${path.dirname(truthFile)}: run the demo (npm start) with this data directory first`,
    );
  }
  const { reports, window } = await latestReports(flags);
  const rows = checkReports(readTruth(truthFile), reports, window);
  const failed = rows.filter((r) => !r.ok);
  if (flags.json) {
    process.stdout.write(`${JSON.stringify({ window, ok: failed.length === 0, merchants: rows })}\n`);
  } else {
    process.stdout.write(table(rows, window));
  }
  return failed.length === 0 ? 0 : 1;
}

async function latestReports(
  flags: Flags,
): Promise<{ reports: Report[]; window: { start_block: number; end_block: number } }> {
  const config = configFrom(flags);
  try {
    const analytics = await openAnalytics(config);
    try {
      const service = new ReportService(analytics, {
        publicUrl: config.publicUrl ?? `http://127.0.0.1:${config.port}`,
      });
      const { window, reports } = await service.reports();
      return { window, reports };
    } finally {
      analytics.close();
    }
  } catch (error) {
    if (!(error instanceof AnalyticsBusyError)) throw error;
  }
  // The demo is running and holds the analytics database: ask its report service.
  const base = config.publicUrl ?? `http://127.0.0.1:${config.port}`;
  const response = await fetch(`${base}/v1/datasets/base/reports.ndjson`).catch((error: Error) => {
    throw new Error(
      `the analytics database is in use and the report service at ${base} does not answer (${error.message})`,
    );
  });
  if (!response.ok) throw new Error(`${base} answered ${response.status} for the dataset`);
  const reports = (await response.text())
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Report);
  const first = reports[0];
  if (!first) throw new Error("the report service has no reports yet");
  return { reports, window: first.window };
}

function table(rows: CheckRow[], window: { start_block: number; end_block: number }): string {
  const pct = (n: number | null) => (n === null ? "-" : `${(n * 100).toFixed(1)}%`);
  const money = (n: number) => `$${n.toFixed(2)}`;
  const head = ["merchant", "reported", "paid (truth)", "genuine", "real", "error", "genuine lost", ""];
  const body = rows.map((r) => [
    r.name,
    money(r.usd),
    money(r.truth_usd),
    money(r.genuine_usd),
    money(r.real_usd),
    pct(r.error),
    pct(r.genuine_lost),
    r.ok ? "ok" : `FAIL: ${r.reason}`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => (row[i] as string).length)));
  const fmt = (cells: string[]) =>
    cells
      .map((c, i) =>
        i === 0 || i === cells.length - 1 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number),
      )
      .join("  ")
      .trimEnd();
  const failed = rows.filter((r) => !r.ok).length;
  return `${[
    `blocks ${window.start_block + 1} to ${window.end_block}: real revenue against the simulator's ground truth (tolerance ${TOLERANCE * 100}%)`,
    "",
    fmt(head),
    ...body.map(fmt),
    "",
    failed === 0
      ? `all ${rows.length} merchants within ${TOLERANCE * 100}%`
      : `${failed} of ${rows.length} merchants off`,
  ].join("\n")}\n`;
}
