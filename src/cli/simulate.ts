import fs from "node:fs";
import path from "node:path";
import { dataLayout } from "../config/layout.ts";
import { type CheckRow, checkReports, TOLERANCE } from "../demo/check.ts";
import { readTruth, readTruthComplete } from "../demo/truth.ts";
import { configFrom, type Flags, UsageError } from "./args.ts";
import { withReader } from "./readers.ts";

/**
 * `simulate --check [--data DIR] [--json] [--wait SECONDS]`: compares a window's reports with the demo's
 * ground truth and prints the error per merchant; exit 1 when a merchant is off. The window ends at the
 * latest indexed block, or earlier, where the truth is complete (src/demo/truth.ts): the indexer stores a
 * block as soon as it is mined, the simulator writes its truth after the payments settled. It reads the
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
  // The mark before the records: the records read after it hold at least every block it counts.
  const completeTo = readTruthComplete(layout.truthComplete);
  const truth = readTruth(layout.truth);
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
