/**
 * Where a report build's time goes, statement by statement (`npx tsx bench/build-profile.ts STORE [--chain SLUG]
 * [--rounds N]`): on a store a bench left (`.bench/chains-three`, `.bench/analytics`), the chain's week built
 * `--rounds` times (each forced by a data version bump), every statement timed, and per statement the median over
 * the rounds. The bench's noise on a shared 2-core VM moves whole builds by 2x; a statement's median over rounds
 * is what tells a fixed cost (the same at 200,000 payments as at 10M) from work.
 */
import { Analytics } from "../src/analytics/duckdb.ts";
import { bumpDataVersion } from "../src/analytics/migrations.ts";
import type { Params } from "../src/analytics/sql.ts";
import { CHAIN_RECORDS, type ChainRecord } from "../src/chain/chains.ts";
import { ReportService } from "../src/reports/index.ts";
import { median } from "./report-yardstick.ts";

const argv = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const i = argv.indexOf(`--${name}`);
  return i < 0 ? undefined : argv[i + 1];
};
const dataDir = argv[0];
if (!dataDir || dataDir.startsWith("--"))
  throw new Error("usage: build-profile.ts STORE [--chain SLUG] [--rounds N]");
const slug = option("chain") ?? "base";
const rounds = Number(option("rounds") ?? 7);
const chain = CHAIN_RECORDS.find((c) => c.slug === slug) as ChainRecord;

const analytics = await Analytics.open({ dataDir, memoryLimit: "1GB", threads: null });
const label = (sql: string) => sql.replace(/\s+/g, " ").trim().slice(0, 110);
let round: { sql: string; ms: number; cpu: number }[] = [];
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
/** `call` timed into this round, by its statement. */
const timed =
  <T>(call: (sql: string, p?: Params) => Promise<T>) =>
  async (sql: string, p?: Params): Promise<T> => {
    const t = performance.now();
    const c = cpuMs();
    try {
      return await call(sql, p);
    } finally {
      round.push({ sql: label(sql), ms: performance.now() - t, cpu: cpuMs() - c });
    }
  };
analytics.run = timed(analytics.run.bind(analytics));
analytics.all = timed(analytics.all.bind(analytics)) as Analytics["all"];

const service = new ReportService(analytics, { publicUrl: "http://127.0.0.1:8402", chain });
const byRound: { sql: string; ms: number; cpu: number }[][] = [];
const cpus: number[] = [];
const walls: number[] = [];
for (let r = 0; r <= rounds; r++) {
  await bumpDataVersion(analytics);
  round = [];
  const t0 = performance.now();
  const c0 = cpuMs();
  await service.build();
  const wall = performance.now() - t0;
  if (r > 0) {
    byRound.push(round);
    walls.push(wall);
    cpus.push(cpuMs() - c0);
  }
}
analytics.close();

// The same statements in the same order every round (a build is one sequence): the i-th of each.
const n = Math.min(...byRound.map((r) => r.length));
const rows = Array.from({ length: n }, (_, i) => ({
  i,
  sql: byRound[0]?.[i]?.sql ?? "",
  ms: median(byRound.map((r) => r[i]?.ms ?? 0)),
  cpu: median(byRound.map((r) => r[i]?.cpu ?? 0)),
}));
const sum = (xs: { ms: number }[]) => xs.reduce((a, b) => a + b.ms, 0);
for (const row of [...rows].sort((a, b) => b.ms - a.ms).slice(0, 40))
  process.stdout.write(
    `${row.ms.toFixed(1).padStart(8)} ms ${row.cpu.toFixed(0).padStart(6)} cpu  #${row.i}  ${row.sql}\n`,
  );
const small = rows.filter((r) => r.ms < 5);
if (option("dump")) (await import("node:fs")).writeFileSync(option("dump") as string, JSON.stringify(rows));
process.stdout.write(
  `${JSON.stringify({
    chain: slug,
    rounds,
    statements: n,
    wall_median_ms: Math.round(median(walls)),
    walls_ms: walls.map(Math.round),
    cpu_median_ms: Math.round(median(cpus)),
    statements_sum_ms: Math.round(sum(rows)),
    under_5ms: small.length,
    under_5ms_sum_ms: Math.round(sum(small)),
    drops: rows.filter((r) => r.sql.startsWith("DROP")).length,
    drops_sum_ms: Math.round(sum(rows.filter((r) => r.sql.startsWith("DROP")))),
  })}\n`,
);
