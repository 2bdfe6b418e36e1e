/**
 * Report benchmark (`npm run bench:report [-- --payments N]`).
 *
 * 1. Generates a synthetic week (scripts/synthetic.ts) of N payments (default 10 million, with about
 *    50,000 merchants and 500,000 buyers; both scale with N) into .bench/, in a child process so its
 *    memory does not count here. The file is reused when one with the same parameters and generator exists.
 * 2. Reads the file once (this VM's page cache drops idle files and its disk is slow; the read is printed,
 *    not counted), then imports it with `importNdjson` into a fresh analytics database in .bench/analytics.
 * 3. Runs the baseline once untimed (a warm-up: the first read after the import loads the table, and
 *    the baseline, run after each build, would otherwise find it loaded by the build). Then builds and
 *    stores every merchant's report for the window with `ReportService.build()` and runs the baseline;
 *    three times (the later builds forced by a data version bump). The ratio is mean build / mean
 *    baseline. The baseline: a bare GROUP BY pay_to with count, sum, count distinct payers and quartiles
 *    over the same blocks, materialized into a temp table.
 * 4. Reads every report back as objects (as the dataset download does: the JSON is rendered from the
 *    stored rows, then parsed), timed apart from the build.
 * 5. Measures a floor for any full build: one scan grouping the window's payments by (merchant, payer),
 *    (merchant, day) and (merchant, amount) (GROUPING SETS).
 *
 * Prints the figures beside their goals, the time of every SQL statement of the import and of the
 * build (the analytics database's `run` and `all` are wrapped to time them), and one final JSON line of all figures.
 *
 * Flags: --payments N, --merchants N, --buyers N, --seed N, --threads N (DuckDB threads; default: all cores),
 * --memory-gb N (DuckDB's memory limit in GB, fractions allowed; default 1, the service's default),
 * --funding SHARE (the share of buyers with a funding history before the window, which the clusters read; default 0),
 * --chains 3 (the same week split over three chains in one store, beside it as one chain's: bench/chains.ts),
 * --chain solana (the same week as Solana lines beside it as Base's, import and build: bench/report-solana.ts).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { DEFAULT_END_BLOCK, DEFAULT_END_TIME } from "../scripts/synthetic.ts";
import { Analytics } from "../src/analytics/duckdb.ts";
import { importNdjson } from "../src/analytics/import.ts";
import { bumpDataVersion } from "../src/analytics/migrations.ts";
import type { Params } from "../src/analytics/sql.ts";
import { RANKING_PAGE_SIZE, ReportService, reportRoutes, resolveWindow } from "../src/reports/index.ts";
import { CLUSTER_TABLES } from "../src/reports/provenance/clusters.ts";
import { EVIDENCE_TABLES } from "../src/reports/week/evidence-facts.ts";
import { MONEY_GRAPH_TABLES } from "../src/reports/week/money-graph.ts";
import { baselineInto } from "./report-yardstick.ts";
import { benchDir, readThrough, weekFile } from "./week-file.ts";

/** Peak RSS: 2 GB for a week of up to 10M payments, 4 GB beyond (issue 20: 100M, spilling to disk allowed). */
const GOALS = {
  importRowsPerSecond: 300_000,
  reportsSeconds: 15,
  peakRssMb: 2048,
  ratio: 3,
  oneReportMs: 50,
};
const FULL = { payments: 10_000_000, merchants: 50_000, buyers: 500_000 };

function parseFlags(argv: string[]): Map<string, number> {
  const flags = new Map<string, number>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const [key, inline] = arg.startsWith("--") ? arg.slice(2).split("=", 2) : [undefined, undefined];
    const value = inline ?? argv[++i];
    const n = Number(String(value).replaceAll("_", ""));
    if (
      !key ||
      !["payments", "merchants", "buyers", "seed", "threads", "memory-gb", "funding"].includes(key) ||
      !(key === "memory-gb" || key === "funding" ? Number.isFinite(n) : Number.isSafeInteger(n)) ||
      n < 0 ||
      (key === "funding" && n > 1) ||
      (key === "memory-gb" && n === 0)
    ) {
      throw new Error(
        `bad argument ${arg}: use --payments N, --merchants N, --buyers N, --seed N, --threads N, --memory-gb N, --funding SHARE`,
      );
    }
    flags.set(key, n);
  }
  return flags;
}

// `--chains 3` (issue 67): the week split over Base, Polygon and Arbitrum in one store, beside it as one chain's
// (bench/chains.ts, also `npm run bench:chains`).
if (process.argv.includes("--chains")) {
  await import("./chains.ts");
  process.exit(0);
}
// `--chain solana` (issue 86): a Solana week beside an EVM week of the same size (bench/report-solana.ts).
if (process.argv.includes("--chain")) {
  const chain = process.argv[process.argv.indexOf("--chain") + 1];
  if (chain !== "solana") throw new Error(`--chain: only solana is measured beside Base, not ${chain}`);
  await import("./report-solana.ts");
  process.exit(0);
}
const flags = parseFlags(process.argv.slice(2));
const payments = flags.get("payments") ?? FULL.payments;
const scale = payments / FULL.payments;
const params = {
  seed: flags.get("seed") ?? 1,
  merchants: flags.get("merchants") ?? Math.max(30, Math.round(FULL.merchants * scale)),
  buyers: flags.get("buyers") ?? Math.max(200, Math.round(FULL.buyers * scale)),
  payments,
  endBlock: DEFAULT_END_BLOCK,
  endTime: DEFAULT_END_TIME,
  funding: flags.get("funding") ?? 0,
};
const threads = flags.get("threads");
/** DuckDB's memory limit (the service's default, X402M_DUCKDB_MEMORY, is 1 GB); beyond it DuckDB spills to disk. */
const memoryGb = flags.get("memory-gb") ?? 1;

const line = (text = "") => process.stdout.write(`${text}\n`);
const seconds = (ms: number) => Number((ms / 1000).toFixed(2));
const mb = (kb: number) => Math.round(kb / 1024);
const fmt = (n: number) => n.toLocaleString("en-US");

// --- 1. The data file, reused when its parameters and generator match.
const { dataFile, summary, generateSeconds } = await weekFile(params, line);
// --- 2. Import into a fresh analytics database, timing every statement.
const dataDir = path.join(benchDir, "analytics");
fs.rmSync(dataDir, { recursive: true, force: true });
const analytics = await Analytics.open({ dataDir, memoryLimit: `${memoryGb}GB`, threads: threads ?? null });

interface Timed {
  stage: string;
  sql: string;
  ms: number;
}
const timings: Timed[] = [];
let stage = "open";
const run = analytics.run.bind(analytics);
const all = analytics.all.bind(analytics);
const label = (sql: string) => sql.replace(/\s+/g, " ").trim().slice(0, 120);
analytics.run = async (sql: string, p?: Params) => {
  const t = performance.now();
  try {
    return await run(sql, p);
  } finally {
    timings.push({ stage, sql: label(sql), ms: performance.now() - t });
  }
};
analytics.all = (async (sql: string, p?: Params) => {
  const t = performance.now();
  try {
    return await all(sql, p);
  } finally {
    timings.push({ stage, sql: label(sql), ms: performance.now() - t });
  }
}) as Analytics["all"];

// This VM's disk reads cold files at 60-300 MB/s and its page cache drops idle files quickly; read the
// file once so that the import is measured, not the disk. The cold read is printed too.
let t0 = performance.now();
readThrough(dataFile);
const warmMs = performance.now() - t0;

stage = "import";
t0 = performance.now();
const counts = await importNdjson(analytics, dataFile).catch((error: unknown) => {
  // Which statement gave up, and after how long: the figure that says what to change.
  const last = timings.at(-1);
  if (last) line(`import failed in ${Math.round(last.ms)} ms of: ${last.sql}`);
  throw error;
});
const importMs = performance.now() - t0;
const rowsRead = Object.values(counts).reduce((n, c) => n + c.read, 0);
const importRowsPerSecond = Math.round(rowsRead / (importMs / 1000));
const rssAfterImport = mb(process.resourceUsage().maxRSS);

// --- 3. Every merchant's report, then the baseline on the same blocks; three times, the later builds
// forced by a data version bump. The ratio is mean build / mean baseline over all three.
// First, one untimed read of the window's payments (the baseline query): the first statement after
// the import loads the table from disk, and the baseline, always run after a build, would otherwise
// read what the build had to load. Printed as the warm-up.
const ROUNDS = 3;
const service = new ReportService(analytics, { publicUrl: "http://127.0.0.1:8402" });
stage = "warm-up";
t0 = performance.now();
{
  const w = await resolveWindow(analytics);
  await baselineInto(analytics, "bench_warm", w);
  await analytics.run("DROP TABLE bench_warm");
}
const warmUpMs = performance.now() - t0;
const rounds: { buildMs: number; baselineMs: number }[] = [];
let window: Awaited<ReturnType<ReportService["build"]>> | undefined;
let baselineRows = 0;
for (let round = 0; round < ROUNDS; round++) {
  if (round > 0) await bumpDataVersion(analytics);
  stage = "reports";
  t0 = performance.now();
  window = await service.build();
  const buildMs = performance.now() - t0;

  stage = "baseline";
  rounds.push({ buildMs, baselineMs: await baselineInto(analytics, "bench_baseline", window) });
  baselineRows = Number(
    (await analytics.one<{ n: bigint }>("SELECT count(*) AS n FROM bench_baseline"))?.n ?? 0n,
  );
  await analytics.run("DROP TABLE bench_baseline");
}
if (!window) throw new Error("no build ran");
const reportsMs = rounds.reduce((n, r) => n + r.buildMs, 0) / rounds.length;
const baselineMs = rounds.reduce((n, r) => n + r.baselineMs, 0) / rounds.length;
const rssAfterReports = mb(process.resourceUsage().maxRSS);

stage = "stats";
const stats = await analytics.one<{ reports: bigint; flagged: bigint }>(
  "SELECT count(*) AS reports, count(*) FILTER (flags <> '{}') AS flagged FROM reports WHERE end_block = $end",
  { end: window.end_block },
);
const reportCount = Number(stats?.reports ?? 0n);

// The dataset download: every report as NDJSON from its route, written a batch at a time as the reader takes
// it, and each line parsed into an object as a reader would, then dropped. Not part of the build.
stage = "read";
const routes = reportRoutes(service);
t0 = performance.now();
const download = await routes.request(`/v1/datasets/base/reports.ndjson?end_block=${window.end_block}`);
const addresses: string[] = [];
let reportBytes = 0;
const lines = readline.createInterface({
  input: Readable.fromWeb(download.body as NodeReadableStream<Uint8Array>),
  crlfDelay: Number.POSITIVE_INFINITY,
});
for await (const text of lines) {
  reportBytes += Buffer.byteLength(text) + 1;
  addresses.push((JSON.parse(text) as { address: string }).address);
}
const readMs = performance.now() - t0;
if (addresses.length !== reportCount) throw new Error(`read ${addresses.length} reports of ${reportCount}`);
const rssAfterRead = mb(process.resourceUsage().maxRSS);

// What one reader waits for once the week is built: one merchant's report (its stored row read and
// parsed, as GET /v1/reports/base/{address} does before rendering), for 21 merchants spread over the
// list, and the leaderboard.
stage = "one";
const step = Math.max(1, Math.floor(addresses.length / 21));
const oneMs: number[] = [];
for (let i = 0; i < addresses.length && oneMs.length < 21; i += step) {
  const address = addresses[i] as string;
  t0 = performance.now();
  await service.report(address, window.end_block);
  oneMs.push(performance.now() - t0);
}
oneMs.sort((a, b) => a - b);
// The leaderboard as its readers ask for it, through the routes (rendering included): the JSON's first and
// last pages, the home page and the ranking's last page; the median of five each.
const routeMs = async (url: string) => {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    t0 = performance.now();
    const response = await routes.request(url);
    await response.arrayBuffer();
    times.push(performance.now() - t0);
    if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
  }
  return Number((times.sort((a, b) => a - b)[2] as number).toFixed(1));
};
const board = await service.leaderboard(window.end_block);
const end = `?end_block=${window.end_block}`;
const leaderboardMs = {
  json_first: await routeMs(`/v1/leaderboard/base${end}`),
  json_last: await routeMs(`/v1/leaderboard/base/pages/${board.page.pages}${end}`),
  home: await routeMs(`/${end}`),
  ranking_last: await routeMs(
    `/ranking/${Math.max(1, Math.ceil(board.totals.merchants / RANKING_PAGE_SIZE))}${end}`,
  ),
};

// --- 4. The floor of any build of every report: one scan of the window's payments grouped by the three
// keys every report needs (payer per merchant: buyers, top buyer, screens; day: the daily figures; amount:
// median and quartiles). Writing the reports is not counted: a floor.
stage = "floor";
t0 = performance.now();
await analytics.run(
  `CREATE TEMP TABLE bench_floor AS
   SELECT pay_to, payer, block_time::DATE AS day, amount, count(*) AS tx, sum(amount) AS total
   FROM payments WHERE block_number > $start AND block_number <= $end
   GROUP BY GROUPING SETS ((pay_to, payer), (pay_to, day), (pay_to, amount))`,
  { start: window.start_block, end: window.end_block },
);
const floorMs = performance.now() - t0;
await analytics.run("DROP TABLE bench_floor");
analytics.close();

const flaggedReports = Number(stats?.flagged ?? 0n);
const ratio = reportsMs / baselineMs;
const peakRssMb = mb(process.resourceUsage().maxRSS);
const rssGoalMb = params.payments > FULL.payments ? 2 * GOALS.peakRssMb : GOALS.peakRssMb;
const figures = {
  date: new Date().toISOString().slice(0, 10),
  node: process.version,
  cpu: os.cpus()[0]?.model ?? "unknown",
  cores: os.cpus().length,
  duckdb_threads: threads ?? os.cpus().length,
  duckdb_memory_gb: memoryGb,
  params,
  rows_generated: summary.lines,
  payments: summary.payments,
  bytes: summary.bytes,
  generate_seconds: generateSeconds,
  file_read_seconds: seconds(warmMs),
  warm_up_seconds: seconds(warmUpMs),
  import_seconds: seconds(importMs),
  import_rows_per_second: importRowsPerSecond,
  reports_seconds: seconds(reportsMs),
  rounds: rounds.map((r) => ({ build_seconds: seconds(r.buildMs), baseline_seconds: seconds(r.baselineMs) })),
  read_back_seconds: seconds(readMs),
  one_report_ms: {
    p50: Number((oneMs[Math.floor(oneMs.length / 2)] ?? 0).toFixed(1)),
    max: Number((oneMs.at(-1) ?? 0).toFixed(1)),
  },
  leaderboard_ms: leaderboardMs,
  reports: reportCount,
  flagged_reports: flaggedReports,
  baseline_seconds: seconds(baselineMs),
  baseline_rows: baselineRows,
  ratio: Number(ratio.toFixed(2)),
  floor_seconds: seconds(floorMs),
  report_mb: Number((reportBytes / 1e6).toFixed(1)),
  floor_ratio: Number((floorMs / baselineMs).toFixed(2)),
  peak_rss_mb: peakRssMb,
  rss_after_import_mb: rssAfterImport,
  rss_after_reports_mb: rssAfterReports,
  rss_after_read_mb: rssAfterRead,
  goals: {
    import_rows_per_second: GOALS.importRowsPerSecond,
    reports_seconds: GOALS.reportsSeconds,
    peak_rss_mb: rssGoalMb,
    one_report_ms: GOALS.oneReportMs,
    ratio: GOALS.ratio,
  },
  met: {
    import: importRowsPerSecond >= GOALS.importRowsPerSecond,
    reports: reportsMs / 1000 <= GOALS.reportsSeconds,
    peak_rss: peakRssMb <= rssGoalMb,
    one_report: (oneMs.at(-1) ?? 0) <= GOALS.oneReportMs,
    ratio: ratio <= GOALS.ratio,
  },
};

// Every statement's time, for a closer look than the ten slowest below (`.bench/` is gitignored).
fs.writeFileSync(path.join(benchDir, "timings.json"), `${JSON.stringify(timings)}\n`);
const ok = (met: boolean) => (met ? "met" : "MISSED");
line();
line("statements (ms), slowest first per stage:");
for (const s of ["import", "warm-up", "reports", "baseline", "read", "floor"]) {
  const rows = timings.filter((t) => t.stage === s);
  const total = rows.reduce((n, t) => n + t.ms, 0);
  line(`  ${s}: ${Math.round(total)} ms in ${rows.length} statements`);
  for (const t of [...rows].sort((a, b) => b.ms - a.ms).slice(0, 10)) {
    if (t.ms >= 20) line(`    ${Math.round(t.ms).toString().padStart(7)}  ${t.sql}`);
  }
}
// The day groups the import keeps for the reports (src/analytics/payment-days.ts), and the build's read of the window's groups.
const dayGroupsMs = timings
  .filter((t) => t.stage === "import" && /\b(payment_days|sealed_days)\b/.test(t.sql))
  .reduce((n, t) => n + t.ms, 0);
line(
  `  day groups kept by the import (grouping, recording, checks): ${Math.round(dayGroupsMs)} ms, ${((100 * dayGroupsMs) / importMs).toFixed(1)}% of the import`,
);
const groupsMs =
  timings
    .filter(
      (t) =>
        t.stage === "reports" &&
        /rw_groups AS|FROM sealed_days|FROM payments WHERE chain = 'base' AND asset = '0x[0-9a-f]+' AND block_time/.test(
          t.sql,
        ),
    )
    .reduce((n, t) => n + t.ms, 0) / rounds.length;
line(
  `  the window's payment groups (stored days read, edges grouped, days checked), per build: ${Math.round(groupsMs)} ms`,
);
const reportsSql = timings.filter((t) => t.stage === "reports").reduce((n, t) => n + t.ms, 0);
line(`  reports outside SQL, per build: ${Math.round(reportsMs - reportsSql / rounds.length)} ms`);
// The screens that follow money between wallets (src/reports/week/money-graph.ts): their statements' share.
const graphTables = new RegExp(`\\b(${MONEY_GRAPH_TABLES.join("|")})\\b`);
const graphMs =
  timings
    .filter(
      (t) =>
        t.stage === "reports" &&
        /^(CREATE OR REPLACE TEMP TABLE|INSERT INTO|SELECT \* FROM rw_cycle_edges)/.test(t.sql),
    )
    .filter((t) => graphTables.test(t.sql.slice(0, 60)))
    .reduce((n, t) => n + t.ms, 0) / rounds.length;
line(
  `  money-graph screens (hubs, funding paths, tiny prices, rings, hub links), per build: ${Math.round(graphMs)} ms, ${((100 * graphMs) / reportsMs).toFixed(0)}% of the build`,
);
// The clusters and their hubs (src/reports/provenance/clusters.ts): the statements that make or read their tables first.
const clusterTables = CLUSTER_TABLES.join("|");
const clusterStatement = new RegExp(
  `^((CREATE OR REPLACE TEMP TABLE|UPDATE|DELETE FROM|INSERT INTO) (${clusterTables})\\b|WITH (src|first|candidates) AS)`,
);
const clusterMs =
  timings.filter((t) => t.stage === "reports" && clusterStatement.test(t.sql)).reduce((n, t) => n + t.ms, 0) /
  rounds.length;
line(
  `  clusters (hubs, funding links to their fixed point, first funders, behaviour), per build: ${Math.round(clusterMs)} ms, ${((100 * clusterMs) / reportsMs).toFixed(1)}% of the build`,
);
// The evidence's facts (src/reports/week/evidence-facts.ts), kept with the details of the wallets the pages name.
const evidenceTables = new RegExp(`\\b(${EVIDENCE_TABLES.filter((t) => t !== "rw_wallets").join("|")})\\b`);
const evidenceMs =
  timings
    .filter((t) => t.stage === "reports" && evidenceTables.test(t.sql.slice(0, 80)))
    .reduce((n, t) => n + t.ms, 0) / rounds.length;
line(
  `  evidence facts (funding paths, cycles, patterns of the named wallets), per build: ${Math.round(evidenceMs)} ms, ${((100 * evidenceMs) / reportsMs).toFixed(1)}% of the build`,
);
line();
line(
  `rows generated    ${fmt(summary.lines)} (${fmt(summary.payments)} payments, ${fmt(summary.transfers)} transfers, ${fmt(summary.listings)} listings)`,
);
line(`file read         ${figures.file_read_seconds} s before the import (page cache warm-up, not counted)`);
line(
  `import            ${figures.import_seconds} s, ${fmt(importRowsPerSecond)} rows/s   goal >= ${fmt(GOALS.importRowsPerSecond)} rows/s: ${ok(figures.met.import)}`,
);
line(
  `warm-up           ${figures.warm_up_seconds} s: the baseline query once, untimed, so that neither side reads the table cold`,
);
line(
  `all reports       ${figures.reports_seconds} s for ${fmt(reportCount)} reports (${fmt(flaggedReports)} with flags, ${figures.report_mb} MB of JSON), mean of ${rounds.length} builds   goal <= ${GOALS.reportsSeconds} s: ${ok(figures.met.reports)}`,
);
line(
  `baseline          ${figures.baseline_seconds} s (${fmt(baselineRows)} merchants), mean of ${rounds.length} runs`,
);
line(
  `rounds            ${rounds.map((r, i) => `${i + 1}: build ${seconds(r.buildMs)} s, baseline ${seconds(r.baselineMs)} s`).join("; ")}`,
);
line(
  `ratio             ${figures.ratio} (reports / baseline)   goal <= ${GOALS.ratio}: ${ok(figures.met.ratio)}`,
);
line(
  `floor             ${figures.floor_seconds} s: one grouping scan by (merchant, payer), (merchant, day), (merchant, amount); floor / baseline ${figures.floor_ratio}`,
);
line(
  `download          ${figures.read_back_seconds} s: every report as NDJSON from its route, each line parsed (not part of the build)`,
);
line(
  `one report        p50 ${figures.one_report_ms.p50} ms, max ${figures.one_report_ms.max} ms of ${oneMs.length} merchants   goal <= ${GOALS.oneReportMs} ms: ${ok(figures.met.one_report)}`,
);
line(
  `leaderboard       JSON page 1 ${leaderboardMs.json_first} ms, last ${leaderboardMs.json_last} ms; home page ${leaderboardMs.home} ms, last ${leaderboardMs.ranking_last} ms (${fmt(board.totals.merchants)} merchants, ${fmt(board.totals.ranked)} ranked; medians of 5)`,
);
line(
  `peak RSS          ${peakRssMb} MB (after import ${rssAfterImport} MB, the builds ${rssAfterReports} MB, the download ${rssAfterRead} MB)   goal <= ${rssGoalMb} MB: ${ok(figures.met.peak_rss)}`,
);
line(`node              ${figures.node}`);
line(`cpu               ${figures.cpu} x ${figures.cores}`);
line(`date              ${figures.date}`);
line(JSON.stringify(figures));
