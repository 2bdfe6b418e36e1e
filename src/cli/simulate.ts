import fs from "node:fs";
import path from "node:path";
import { storeChains } from "../chain/chains.ts";
import { UsageError } from "../common/errors.ts";
import { sleep } from "../common/sleep.ts";
import { type DataLayout, dataLayout } from "../config/layout.ts";
import { type CheckRow, checkReports, TOLERANCE } from "../demo/check.ts";
import { readWorld } from "../demo/resume.ts";
import { readTruth, readTruthComplete, TruthError } from "../demo/truth.ts";
import { configFrom } from "./flag-values.ts";
import type { Flags } from "./flags.ts";
import { withReader } from "./readers.ts";

/**
 * `simulate --check [--chain SLUG] [--data DIR] [--json] [--wait SECONDS]`: compares a window's reports with
 * the demo's ground truth and prints the error per merchant; exit 1 when a merchant is off. Each chain the
 * demo plays (Base, and Arbitrum and Solana beside it) is checked against its own truth, or `--chain`'s alone. The window ends at the
 * latest indexed block, or earlier, where the truth is complete (src/demo/truth.ts): the indexer stores a
 * block as soon as it is mined, the simulator writes its truth after the payments settled. A ground truth
 * with a line that is not a whole record stops it (exit 1, naming the line) rather than blaming the
 * reports for the payments that line lost; it never changes the file. It reads the
 * analytics database as `report` does (src/cli/readers.ts): itself, or while the demo holds it, the demo's
 * report service.
 */
export async function runSimulate(args: string[], flags: Flags): Promise<number> {
  if (args.length > 0 || !flags.check) {
    throw new UsageError("usage: simulate --check [--chain SLUG] [--data DIR] [--json] [--wait SECONDS]");
  }
  const layout = dataLayout(configFrom(flags).dataDir).demo;
  if (!fs.existsSync(layout.truth)) {
    throw new UsageError(
      `no ground truth in ${path.dirname(layout.truth)}: run the demo (npm start) with this data directory first`,
    );
  }
  const chains = checkedChains(layout, flags.chain);
  const checks = await withReader(flags, async (reader) => {
    const done: ChainCheck[] = [];
    for (const chain of chains) {
      const files = chain === "base" ? layout : layout.further(chain);
      const { completeTo, truth } = await readGroundTruth(files.truth, files.truthComplete);
      const end =
        completeTo === undefined ? undefined : Math.min(completeTo, await reader.latestBlock(chain));
      const { reports, window } = await reader.reports(end, chain);
      done.push({ chain, completeTo, window, rows: checkReports(truth, reports, window) });
    }
    return done;
  });
  const ok = checks.every((c) => c.rows.every((r) => r.ok));
  if (flags.json) {
    // The first chain's check as before; the others under `chains`, by slug, each the same shape.
    const [first, ...others] = checks.map(checkJson);
    process.stdout.write(
      `${JSON.stringify({ ...first, ok, ...(others.length > 0 && { chains: Object.fromEntries(others.map((o) => [o.chain, o])) }) })}\n`,
    );
  } else {
    process.stdout.write(
      checks.map((c) => table(c.rows, c.window, checks.length > 1 ? c.chain : undefined)).join("\n"),
    );
  }
  return ok ? 0 : 1;
}

interface ChainCheck {
  chain: string;
  completeTo: number | undefined;
  window: { start_block: number; end_block: number };
  rows: CheckRow[];
}

function checkJson(c: ChainCheck) {
  return {
    chain: c.chain,
    window: c.window,
    truth_complete_to_block: c.completeTo ?? null,
    ok: c.rows.every((r) => !!r.ok),
    merchants: c.rows,
  };
}

/**
 * The chains to check: `--chain`'s, or Base and every chain the demo's world plays. A chain the world does
 * not play has no ground truth to check against.
 */
function checkedChains(layout: DataLayout["demo"], flag: string | undefined): string[] {
  const world = readWorld(layout.world);
  const played = [
    "base",
    ...(world.state === "whole"
      ? [...(world.world.chains ?? []), ...(world.world.solana ? ["solana"] : [])]
      : []),
  ];
  if (flag === undefined) return played;
  if (!played.includes(flag)) {
    throw new UsageError(`--chain ${flag}: the demo in this directory plays ${played.join(" and ")}`);
  }
  if (flag !== "base" && !fs.existsSync(layout.further(flag).truth)) {
    throw new UsageError(
      `no ground truth for ${flag} in ${layout.further(flag).dir}: the demo has not played it yet`,
    );
  }
  return [flag];
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

function table(rows: CheckRow[], window: { start_block: number; end_block: number }, chain?: string): string {
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
    `${chain ? `${storeChains.chainBySlug(chain).name}, ` : ""}${chain === "solana" ? "slots" : "blocks"} ${window.start_block + 1} to ${window.end_block}: real revenue against the simulator's ground truth (tolerance ${TOLERANCE * 100}%)`,
    "",
    fmt(head),
    ...body.map(fmt),
    "",
    failed === 0
      ? `all ${rows.length} merchants within ${TOLERANCE * 100}%`
      : `${failed} of ${rows.length} merchants off`,
  ].join("\n")}\n`;
}
