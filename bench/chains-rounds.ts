/**
 * `bench:chains`' ratio with a steadier yardstick (`npx tsx bench/chains-rounds.ts [--rounds N] [--memory-gb N]`): on the two stores
 * the last `npm run bench:chains` left (`.bench/chains-one`, `.bench/chains-three`), one chain's build and the three
 * chains' builds at once (each on a connection of its own, as `serve` builds them) alternate, round after round, and
 * the ratio is of the medians. On a shared 2-core VM a build's time moves 2-4x within minutes: three rounds one
 * after the other measure the neighbours as much as the code, rounds side by side see the same machine. The
 * process's CPU time of each build is given too: the work done, whatever the neighbours take.
 */
import path from "node:path";
import { Analytics } from "../src/analytics/duckdb.ts";
import { bumpDataVersion } from "../src/analytics/migrations.ts";
import { CHAIN_RECORDS, type ChainRecord } from "../src/chain/chains.ts";
import { chainServices } from "./chain-services.ts";
import { median } from "./report-yardstick.ts";
import { benchDir } from "./week-file.ts";

const argv = process.argv.slice(2);
const at = argv.indexOf("--rounds");
const rounds = at < 0 ? 9 : Number(argv[at + 1]);
const gb = argv.indexOf("--memory-gb");
// bench:chains' default; more tells whether three builds at once spend their extra CPU re-reading what the limit evicted.
const memoryLimit = `${gb < 0 ? 1 : Number(argv[gb + 1])}GB`;
const line = (text: string) => process.stdout.write(`${text}\n`);
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function services(dataDir: string, chains: readonly ChainRecord[]) {
  const analytics = await Analytics.open({ dataDir, memoryLimit, threads: null });
  return { analytics, list: await chainServices(analytics, chains) };
}

async function timed(store: Awaited<ReturnType<typeof services>>) {
  await bumpDataVersion(store.analytics);
  const t0 = performance.now();
  const c0 = cpuMs();
  await Promise.all(store.list.map((s) => s.build()));
  return { wall: performance.now() - t0, cpu: cpuMs() - c0 };
}

const one = await services(path.join(benchDir, "chains-one"), [CHAIN_RECORDS[0] as ChainRecord]);
const three = await services(path.join(benchDir, "chains-three"), CHAIN_RECORDS);
// Warm: the first read of each store loads its tables.
await timed(one);
await timed(three);
const ones: { wall: number; cpu: number }[] = [];
const threes: { wall: number; cpu: number }[] = [];
for (let r = 0; r < rounds; r++) {
  // Alternate which goes first, so that neither always follows the other's leftovers.
  if (r % 2 === 0) {
    ones.push(await timed(one));
    threes.push(await timed(three));
  } else {
    threes.push(await timed(three));
    ones.push(await timed(one));
  }
  const i = ones.length - 1;
  line(
    `round ${r + 1}: one ${((ones[i]?.wall ?? 0) / 1000).toFixed(2)} s, three at once ${((threes[i]?.wall ?? 0) / 1000).toFixed(2)} s`,
  );
}
one.analytics.close();
three.analytics.close();
const oneWall = median(ones.map((x) => x.wall));
const threeWall = median(threes.map((x) => x.wall));
const oneCpu = median(ones.map((x) => x.cpu));
const threeCpu = median(threes.map((x) => x.cpu));
const pairRatios = ones.map((o, i) => (threes[i]?.wall ?? 0) / o.wall);
line(
  JSON.stringify({
    rounds,
    one_wall_median_s: Number((oneWall / 1000).toFixed(3)),
    three_wall_median_s: Number((threeWall / 1000).toFixed(3)),
    ratio_of_medians: Number((threeWall / oneWall).toFixed(3)),
    median_round_ratio: Number(median(pairRatios).toFixed(3)),
    one_cpu_median_s: Number((oneCpu / 1000).toFixed(3)),
    three_cpu_median_s: Number((threeCpu / 1000).toFixed(3)),
    cpu_ratio: Number((threeCpu / oneCpu).toFixed(3)),
  }),
);
