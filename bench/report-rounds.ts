/**
 * `bench:report`'s ratio with a steadier yardstick (`npx tsx bench/report-rounds.ts [STORE] [--rounds N]`, default
 * `.bench/analytics`, the store the last `npm run bench:report` left; `.bench/chains-one` holds the same week): the
 * build and `bench:report`'s bare GROUP BY alternate round after round on one store, and the ratio is of the
 * medians (and the median of each round's ratio). On a shared 2-core VM the machine's speed moves 2-4x within
 * minutes; a build and its baseline side by side see the same machine, three rounds in a row do not.
 */
import { Analytics } from "../src/analytics/duckdb.ts";
import { bumpDataVersion } from "../src/analytics/migrations.ts";
import { ReportService } from "../src/reports/index.ts";
import { baselineInto, median, storeArguments } from "./report-yardstick.ts";

const { dataDir, rounds } = storeArguments(process.argv.slice(2), 9);
const line = (text: string) => process.stdout.write(`${text}\n`);

const analytics = await Analytics.open({ dataDir, memoryLimit: "1GB", threads: null });
const service = new ReportService(analytics, { publicUrl: "http://127.0.0.1:8402" });
const window = await service.build();
const baseline = async () => {
  const ms = await baselineInto(analytics, "bench_baseline", window);
  await analytics.run("DROP TABLE bench_baseline");
  return ms;
};
const build = async () => {
  await bumpDataVersion(analytics);
  const t0 = performance.now();
  await service.build();
  return performance.now() - t0;
};
await baseline();
const builds: number[] = [];
const baselines: number[] = [];
for (let r = 0; r < rounds; r++) {
  if (r % 2 === 0) {
    builds.push(await build());
    baselines.push(await baseline());
  } else {
    baselines.push(await baseline());
    builds.push(await build());
  }
  line(
    `round ${r + 1}: build ${((builds.at(-1) ?? 0) / 1000).toFixed(2)} s, baseline ${((baselines.at(-1) ?? 0) / 1000).toFixed(2)} s`,
  );
}
analytics.close();
line(
  JSON.stringify({
    store: dataDir,
    rounds,
    build_median_s: Number((median(builds) / 1000).toFixed(3)),
    baseline_median_s: Number((median(baselines) / 1000).toFixed(3)),
    ratio_of_medians: Number((median(builds) / median(baselines)).toFixed(3)),
    median_round_ratio: Number(median(builds.map((b, i) => b / (baselines[i] ?? 1))).toFixed(3)),
    peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
  }),
);
