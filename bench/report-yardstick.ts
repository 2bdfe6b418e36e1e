/**
 * What the report benchmarks hold the build to, in one place: `bench:report`'s bare GROUP BY (the baseline every
 * ratio divides by), the store and rounds the store-reading scripts take, and the median they report.
 */
import path from "node:path";
import type { Analytics } from "../src/analytics/duckdb.ts";
import { benchDir } from "./week-file.ts";

/** The explorer-style GROUP BY over the window's payments (docs/benchmarks.md, "How to run each", item 3). */
export const BASELINE_SQL = `SELECT pay_to, count(*) AS tx, sum(amount) AS amount, count(DISTINCT payer) AS buyers,
       quantile_cont(amount, [0.25, 0.5, 0.75]) AS quartiles
     FROM payments WHERE block_number > $start AND block_number <= $end GROUP BY pay_to`;

/** The baseline over blocks `start_block` + 1 .. `end_block`, materialized as `table` (which the caller drops). */
export async function baselineInto(
  analytics: Analytics,
  table: string,
  window: { start_block: number; end_block: number },
): Promise<number> {
  const t0 = performance.now();
  await analytics.run(`CREATE OR REPLACE TEMP TABLE ${table} AS ${BASELINE_SQL}`, {
    start: window.start_block,
    end: window.end_block,
  });
  return performance.now() - t0;
}

export const median = (xs: readonly number[]) =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** `[STORE] [--rounds N]`: the store a bench left (`.bench/analytics` by default) and how many rounds. */
export function storeArguments(
  argv: readonly string[],
  defaultRounds: number,
): { dataDir: string; rounds: number } {
  const at = argv.indexOf("--rounds");
  const first = argv[0];
  return {
    dataDir: first && !first.startsWith("--") ? first : path.join(benchDir, "analytics"),
    rounds: at < 0 ? defaultRounds : Number(argv[at + 1]),
  };
}
