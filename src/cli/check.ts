/**
 * `x402-merchants check`: is the analytics store whole? It reads everything (every block's checksum, every
 * table through DuckDB, the project's invariants: src/analytics/integrity.ts), changes nothing, prints one
 * line per thing checked and what to do, and exits 0 when the store is whole, 1 when it is not.
 *
 * It needs the file itself, opened read-only, which DuckDB allows only while no other process has the store
 * open for writing: it cannot ask a running report service as `report` does. Beside a command that will end
 * (a `report`, an `import`) it waits, up to `--wait` seconds; beside a server it says which one to stop.
 */
import { Analytics } from "../analytics/duckdb.ts";
import { type CheckLine, checkContents, checkFile } from "../analytics/integrity.ts";
import {
  AnalyticsBusyError,
  AnalyticsDamagedError,
  AnalyticsVersionError,
} from "../analytics/store-errors.ts";
import { type AppError, UsageError } from "../common/errors.ts";
import { sleep } from "../common/sleep.ts";
import { dataLayout } from "../config/layout.ts";
import { readServiceRecord } from "../config/service-record.ts";
import { checkSealedWeeks } from "../reports/index.ts";
import type { Config } from "../services/index.ts";
import { configFrom, parseWaitMs } from "./flag-values.ts";
import { DEFAULT_WAIT_SECONDS, type Flags } from "./flags.ts";

export async function runCheck(args: string[], flags: Flags): Promise<number> {
  if (args.length > 0) throw new UsageError("check takes no arguments");
  const config = configFrom(flags);
  const waitMs = parseWaitMs(flags.wait, DEFAULT_WAIT_SECONDS);
  const file = dataLayout(config.dataDir).analytics.file;

  const lines: CheckLine[] = [];
  const opened = await openReadOnly(config, waitMs);
  if (opened instanceof Analytics) {
    try {
      lines.push(...checkFile(file), ...(await checkContents(opened)));
      // Unless the store cannot be read: the sealed weeks are read through the same tables.
      if (lines.every((line) => line.ok)) lines.push(...(await checkSealedWeeks(opened)));
    } finally {
      opened.close();
    }
  } else {
    // DuckDB could not open it (its catalog is damaged, another version wrote it): what the file shows, then why.
    const problem = opened instanceof AnalyticsVersionError ? "version" : "damage";
    const text =
      opened instanceof AnalyticsDamagedError ? `DuckDB cannot open it: ${opened.damage}` : opened.message;
    lines.push(...checkFile(file), { ok: false, subject: "open", text, problem });
  }
  const whole = lines.every((line) => line.ok);
  if (flags.json) {
    process.stdout.write(`${JSON.stringify({ file, whole, lines })}\n`);
  } else {
    process.stdout.write(render(file, lines, whole));
  }
  return whole ? 0 : 1;
}

/** The store opened read-only, or the refusal DuckDB gave (damage, another version): that is a finding. */
async function openReadOnly(config: Config, waitMs: number): Promise<Analytics | AppError> {
  const deadline = Date.now() + waitMs;
  for (let pause = 50; ; pause = Math.min(pause * 2, 500)) {
    try {
      return await Analytics.open({
        dataDir: config.dataDir,
        memoryLimit: config.duckdbMemory,
        threads: config.duckdbThreads,
        readOnly: true,
      });
    } catch (error) {
      // Findings about the store; a file it may not read (AnalyticsFileError) is the command's failure.
      if (error instanceof AnalyticsDamagedError || error instanceof AnalyticsVersionError) return error;
      if (!(error instanceof AnalyticsBusyError)) throw error;
      const service = readServiceRecord(config.dataDir);
      const left = deadline - Date.now();
      if (service?.pid === error.holder.pid || left <= 0) throw held(config, error, waitMs, service?.url);
      await sleep(Math.min(pause, left));
    }
  }
}

function held(config: Config, busy: AnalyticsBusyError, waitMs: number, serviceUrl?: string): AppError {
  const { pid, program } = busy.holder;
  const file = dataLayout(config.dataDir).analytics.file;
  const what = "check reads the file itself, which DuckDB allows only while no other process has it open";
  return new AnalyticsBusyError(
    serviceUrl
      ? `the analytics store ${file} is held by the report service at ${serviceUrl} (PID ${pid}): ${what}; stop that service (Ctrl-C, or kill ${pid}), run check, then start it again`
      : `the analytics store ${file} is held by PID ${pid} (${program}), still after ${waitMs / 1000} s: ${what}; let that command finish or stop it, then run check again (--wait SECONDS waits longer)`,
    busy.holder,
  );
}

function render(file: string, lines: CheckLine[], whole: boolean): string {
  const width = Math.max(...lines.map((l) => l.subject.length));
  const body = lines
    .map((l) => `  ${l.ok ? "ok  " : "FAIL"}  ${l.subject.padEnd(width)}  ${l.text}\n`)
    .join("");
  return `x402-merchants check: ${file}\n${body}${verdict(lines, whole)}\n`;
}

function verdict(lines: CheckLine[], whole: boolean): string {
  if (whole) return "whole: nothing to do.";
  const failed = lines.filter((l) => !l.ok);
  const count = `${failed.length} ${failed.length === 1 ? "problem" : "problems"}`;
  const remedy =
    "Restore the store from a backup (stop every process using it, then replace analytics.duckdb and its .wal together), or index or import again into a new data directory (--data DIR) and move to it.";
  if (failed.some((l) => l.problem === "damage")) return `damaged: ${count}. Nothing was changed. ${remedy}`;
  if (failed.some((l) => l.problem === "version")) {
    return `not this program's: ${count}. Nothing was changed. Open it with the x402-merchants that wrote it, or give this one another data directory (--data DIR).`;
  }
  return `not whole: ${count} in the data it holds (its blocks read whole). ${remedy}`;
}
