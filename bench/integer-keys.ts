/**
 * What keying the build's aggregations by wallet numbers would save (`npx tsx bench/integer-keys.ts [STORE]
 * [--rounds N]`, default `.bench/analytics`, the store the last `npm run bench:report` left): the structural step
 * docs/benchmarks-log.md names for issue 63's 3x goal, measured before anyone rewrites the build for it.
 *
 * The window's groups are read as the build reads its sealed days (`payment_days`, all of them: a bench store holds
 * one week), once with addresses and once with the numbers a writer would keep beside them (a dictionary made here,
 * untimed, as a writer would have made it). The build's largest aggregations over the groups and the pairs are then run on both, alternating, and the
 * median of each is printed, with what mapping the numbers back to addresses costs for the tables that leave the
 * build by address (the merchants' figures, the pairs the screens join by address). Beside them, in the same
 * process: the build itself and `bench:report`'s bare GROUP BY, so the projected ratio is of one run.
 */
import { Analytics } from "../src/analytics/duckdb.ts";
import { bumpDataVersion } from "../src/analytics/migrations.ts";
import { ReportService } from "../src/reports/index.ts";
import { baselineInto, median, storeArguments } from "./report-yardstick.ts";

const { dataDir, rounds } = storeArguments(process.argv.slice(2), 7);
const line = (text: string) => process.stdout.write(`${text}\n`);

const analytics = await Analytics.open({ dataDir, memoryLimit: "1GB", threads: null });
const service = new ReportService(analytics, { publicUrl: "http://127.0.0.1:8402" });
const window = await service.build();

// Untimed: what the writers would keep. The groups by address as the build copies them, and by number.
await analytics.run(
  `CREATE TEMP TABLE k_wallets AS SELECT wallet, (row_number() OVER (ORDER BY wallet))::INTEGER AS id
   FROM (SELECT payer AS wallet FROM payment_days UNION SELECT pay_to FROM payment_days)`,
);
await analytics.run(
  `CREATE TEMP TABLE k_days_int AS SELECT p.id AS payer, m.id AS pay_to, amount, scheme, day, n, first_block, last_block
   FROM payment_days d JOIN k_wallets p ON p.wallet = d.payer JOIN k_wallets m ON m.wallet = d.pay_to`,
);

/** The pairs' totals and the merchants' totals over them, as the build makes them (aggregates.ts). */
const pairTotals = (g: string) =>
  `SELECT payer, pay_to, sum(n)::BIGINT AS tx, sum(amount::HUGEINT * n) AS amount, min(first_block) AS first_block,
     max(last_block) AS last_block FROM ${g} GROUP BY ALL`;
const merchantTotals = (q: string) =>
  `SELECT pay_to, sum(tx)::BIGINT AS tx, sum(amount) AS amount, count(*) AS buyers, max(amount) AS top_amount
   FROM ${q} GROUP BY pay_to`;

/**
 * One aggregation of the build, as it reads `g` (the groups) and `q` (the pairs' totals); `stored`: it reads the
 * stored days, as the build's copy does, where the others read the copy in memory, as the build's do.
 */
interface Step {
  name: string;
  stored?: boolean;
  sql: (g: string, q: string) => string;
}
const steps: Step[] = [
  {
    name: "groups (the sealed days copied)",
    stored: true,
    sql: (g) =>
      `SELECT payer, pay_to, amount, scheme, (day - DATE '2000-01-01')::INTEGER AS day, n, first_block, last_block FROM ${g}`,
  },
  { name: "pairs' totals", sql: pairTotals },
  { name: "merchants' totals", sql: (_, q) => merchantTotals(q) },
  {
    name: "amounts' histogram",
    sql: (g) => `SELECT pay_to, amount, sum(n) AS n FROM ${g} GROUP BY pay_to, amount`,
  },
  {
    name: "days",
    sql: (g) =>
      `SELECT pay_to, day, sum(n)::BIGINT AS tx, sum(amount::HUGEINT * n) AS amount FROM ${g} GROUP BY ALL`,
  },
  {
    name: "schemes",
    sql: (g) =>
      `SELECT pay_to, scheme, sum(n)::BIGINT AS tx, sum(amount::HUGEINT * n) AS amount FROM ${g} GROUP BY ALL`,
  },
  {
    name: "payers' merchants (probers)",
    sql: (_, q) =>
      `SELECT payer, count(*) AS merchants, count(*) FILTER (tx <= 3) AS light FROM ${q} GROUP BY payer HAVING count(*) >= 5`,
  },
  {
    name: "payers' bands (tiny prices)",
    sql: (g) =>
      `SELECT pay_to, floor(log2(amount))::INTEGER AS band, payer, min(amount) AS lowest FROM ${g} WHERE amount > 0 GROUP BY ALL`,
  },
];

const timed = async (sql: string): Promise<number> => {
  const t0 = performance.now();
  await analytics.run(`CREATE OR REPLACE TEMP TABLE k_out AS ${sql}`);
  return performance.now() - t0;
};
await analytics.run(`CREATE OR REPLACE TEMP TABLE k_pairs_text AS ${pairTotals("payment_days")}`);
await analytics.run(`CREATE OR REPLACE TEMP TABLE k_pairs_int AS ${pairTotals("k_days_int")}`);
await analytics.run("CREATE OR REPLACE TEMP TABLE k_groups_text AS SELECT * FROM payment_days");
await analytics.run("CREATE OR REPLACE TEMP TABLE k_days_int_mem AS SELECT * FROM k_days_int");
await analytics.run(`CREATE OR REPLACE TEMP TABLE k_figures_int AS ${merchantTotals("k_pairs_int")}`);
const times = new Map<string, { text: number[]; int: number[] }>();
const record = (name: string, kind: "text" | "int", ms: number) => {
  const entry = times.get(name) ?? { text: [], int: [] };
  entry[kind].push(ms);
  times.set(name, entry);
};
const builds: number[] = [];
const baselines: number[] = [];
for (let r = 0; r < rounds; r++) {
  for (const step of steps) {
    const text = step.stored ? "payment_days" : "k_groups_text";
    const int = step.stored ? "k_days_int" : "k_days_int_mem";
    const pair = [
      async () => record(step.name, "text", await timed(step.sql(text, "k_pairs_text"))),
      async () => record(step.name, "int", await timed(step.sql(int, "k_pairs_int"))),
    ];
    if (r % 2 === 1) pair.reverse();
    for (const run of pair) await run();
  }
  // What numbers cost on the way out: the merchants' figures, and the pairs the screens join by address.
  record(
    "back to addresses: merchants' figures",
    "int",
    await timed(
      "SELECT w.wallet AS pay_to, f.* EXCLUDE (pay_to) FROM k_figures_int f JOIN k_wallets w ON w.id = f.pay_to",
    ),
  );
  record(
    "back to addresses: the pairs",
    "int",
    await timed(
      `SELECT p.wallet AS payer, m.wallet AS pay_to, q.* EXCLUDE (payer, pay_to) FROM k_pairs_int q
       JOIN k_wallets p ON p.id = q.payer JOIN k_wallets m ON m.id = q.pay_to`,
    ),
  );
  await bumpDataVersion(analytics);
  const t0 = performance.now();
  await service.build();
  builds.push(performance.now() - t0);
  baselines.push(await baselineInto(analytics, "k_out", window));
}
analytics.close();

let text = 0;
let int = 0;
let back = 0;
line(`${"step".padEnd(40)} ${"addresses".padStart(10)} ${"numbers".padStart(10)}`);
for (const [name, t] of times) {
  const a = median(t.text);
  const b = median(t.int);
  if (t.text.length > 0) text += a;
  if (name.startsWith("back")) back += b;
  else int += b;
  line(
    `${name.padEnd(40)} ${t.text.length > 0 ? `${a.toFixed(0)} ms`.padStart(10) : "".padStart(10)} ${`${b.toFixed(0)} ms`.padStart(10)}`,
  );
}
const build = median(builds);
const baseline = median(baselines);
const saved = text - int - back;
line(
  JSON.stringify({
    rounds,
    build_ms: Math.round(build),
    baseline_ms: Math.round(baseline),
    ratio: +(build / baseline).toFixed(2),
    aggregations_by_address_ms: Math.round(text),
    aggregations_by_number_ms: Math.round(int),
    back_to_addresses_ms: Math.round(back),
    saved_ms: Math.round(saved),
    projected_build_ms: Math.round(build - saved),
    projected_ratio: +((build - saved) / baseline).toFixed(2),
    build_for_3x_ms: Math.round(3 * baseline),
  }),
);
