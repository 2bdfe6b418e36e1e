/**
 * A hash of every stored report column (`npx tsx bench/report-hashes.ts [data dir]`, default .bench/analytics):
 * a change to the report build that must keep every report byte-equal is checked by this line before and after
 * it, on the bench's stores (the store of the last `npm run bench:report` run is left in place).
 */
import path from "node:path";
import { Analytics } from "../src/analytics/duckdb.ts";
import { benchDir } from "./week-file.ts";

const dataDir = process.argv[2] ?? path.join(benchDir, "analytics");
const analytics = await Analytics.open({ dataDir, readOnly: true });
try {
  const columns = (
    await analytics.all<{ name: string }>(
      "SELECT column_name AS name FROM information_schema.columns WHERE table_name = 'reports' ORDER BY ordinal_position",
    )
  ).map((c) => c.name);
  const rows = await analytics.one<Record<string, bigint>>(
    `SELECT count(*) AS n, ${columns
      .map(
        (c) =>
          `md5(string_agg(coalesce(${c}::VARCHAR, '<null>'), chr(1) ORDER BY chain, end_block, address)) AS "${c}"`,
      )
      .join(", ")} FROM reports`,
  );
  const out = Object.fromEntries(Object.entries(rows ?? {}).map(([k, v]) => [k, String(v)]));
  console.log(JSON.stringify(out));
} finally {
  await analytics.close();
}
