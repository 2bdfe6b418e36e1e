import fs from "node:fs";
import path from "node:path";
import { UsageError } from "../common/errors.ts";
import { sleep } from "../common/sleep.ts";
import { dataLayout } from "../config/layout.ts";
import { type CheckRow, checkReports, TOLERANCE } from "../demo/check.ts";
import { readTruth, readTruthComplete, TruthError } from "../demo/truth.ts";
import { configFrom } from "./flag-values.ts";
import type { Flags } from "./flags.ts";
import { withReader } from "./readers.ts";

/**
 * `simulate --check [--data DIR] [--json] [--wait SECONDS]`: compares a window's reports with the demo's
 * ground truth and prints the error per merchant; exit 1 when a merchant is off. The window ends at the
 * latest indexed block, or earlier, where the truth is complete (src/demo/truth.ts): the indexer stores a
 * block as soon as it is mined, the simulator writes its truth after the payments settled. A ground truth
 * with a line that is not a whole record stops it (exit 1, naming the line) rather than blaming the
 * reports for the payments that line lost; it never changes the file. It reads the
 * analytics database as `report` does (src/cli/readers.ts): itself, or while the demo holds it, the demo's
 * report service.
 */
export async function runSimulate(args: string[], flags: Flags): Promise<number> {
  if (args.length > 0 || !flags.check) {
    throw new UsageError("usage: simulate --check [--data DIR] [--json] [--wait SECONDS]");
  }
  const layout = dataLayout(configFrom(flags).dataDir).demo;
  if (!fs.existsSync(layout.truth)) {
    throw new UsageError(
      `no ground truth in ${path.dirname(layout.truth)}: run the demo (npm start) with this data directory first`,
    );
  }
  const { completeTo, truth } = await readGroundTruth(layout.truth, layout.truthComplete);
  const { reports, window } = await withReader(flags, async (reader) => {
    const end = completeTo === undefined ? undefined : Math.min(completeTo, await reader.latestBlock());
    return reader.reports(end);
  });
  const rows = checkReports(truth, reports, window);
  const failed = rows.filter((r) => !r.ok);
  if (flags.json) {
    process.stdout.write(
      `${JSON.stringify({ window, truth_complete_to_block: completeTo ?? null, ok: failed.length === 0, merchants: rows })}\n`,
    );
  } else {
    process.stdout.write(table(rows, window));
  }
  return failed.length === 0 ? 0 : 1;
}

/** How long an unterminated last line may stay so before it counts as cut short, not being appended. */
const TORN_AFTER_MS = 2_000;

/**
 * The mark, then the records: read in that order, the records hold at least every block the mark counts.
 * A line that is not a whole record stops the check (it would count its payment as a report error),
 * except a last line the running demo is appending as it is read: read again, it is whole.
 */
async function readGroundTruth(truthFile: string, completeFile: string) {
  const started = Date.now();
  for (;;) {
    try {
      const completeTo = readTruthComplete(completeFile);
      return { completeTo, truth: readTruth(truthFile) };
    } catch (error) {
      if (!(error instanceof TruthError)) throw error;
      if (error.torn && Date.now() - started < TORN_AFTER_MS) {
        await sleep(100);
        continue;
      }
      throw new TruthError(`${error.message}: ${checkAdvice(error)}`, error.file, error.line, error.torn);
    }
  }
}

function checkAdvice(error: TruthError): string {
  if (error.torn) {
    return "the ground truth lacks that line's payment, for which the check could blame the reports; starting the demo again drops the line (the demo wrote it)";
  }
  const afresh = "restore the file, or start the demo afresh (npm start -- --fresh)";
  if (error.line === undefined) return `the check cannot tell where the ground truth ends; ${afresh}`;
  return `the check would count the payments it lost as report errors; ${afresh}`;
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
