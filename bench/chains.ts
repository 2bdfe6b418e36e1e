/**
 * Reports over several chains (`npm run bench:chains [-- --payments N] [--funding SHARE]`, or `npm run bench:report --
 * --chains 3`, issue 67): the same
 * synthetic week (bench/week-file.ts, the one `bench:report` reads) built as one chain's, and split over Base,
 * Polygon and Arbitrum in one store, each chain's week built by its own report service on a connection of its
 * own, all at once, as `serve` builds them. The goal: the three chains' weeks within 10% of the one chain's, in
 * the same run (the chains cost their sum, not more). The same three builds one after another are printed too:
 * each build has a fixed cost of about 140 statements (0.3 s at 200,000 payments), which three chains pay three
 * times over when nothing overlaps.
 *
 * The split: a payment goes to its merchant's chain (by its address), a transfer to its receiver's, so a buyer
 * pays on several chains as buyers do; the merchants' names and listings stay Base's lines (they are every
 * chain's), and each chain has its checkpoint at the week's end. Polygon's and Arbitrum's blocks are numbered
 * 100M and 200M above Base's (their own numbering, so each import takes the bulk way) and keep Base's times: a
 * valid stamped chain, whose week the report reads by its stored times.
 *
 * Prints each build's time, the means and the ratio, and one final JSON line.
 */
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { DEFAULT_END_BLOCK, DEFAULT_END_TIME } from "../scripts/synthetic.ts";
import { Analytics } from "../src/analytics/duckdb.ts";
import { importNdjson } from "../src/analytics/import.ts";
import { bumpDataVersion } from "../src/analytics/migrations.ts";
import { CHAIN_RECORDS, type ChainRecord } from "../src/chain/chains.ts";
import type { ReportService } from "../src/reports/index.ts";
import { chainServices } from "./chain-services.ts";
import { benchDir, readThrough, weekFile } from "./week-file.ts";

const GOAL_RATIO = 1.1;
const ROUNDS = 3;
const FULL = { payments: 10_000_000, merchants: 50_000, buyers: 500_000 };
/** Where each chain's block numbers start beside Base's: far apart, as the real chains' are. */
const OFFSET: Record<string, number> = { base: 0, polygon: 100_000_000, arbitrum: 200_000_000 };

const argv = process.argv.slice(2);
const flag = (name: string): number | undefined => {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const n = Number(String(argv[i + 1]).replaceAll("_", ""));
  if (!Number.isFinite(n) || n < 0) throw new Error(`bad --${name}: ${argv[i + 1]}`);
  return n;
};
for (const arg of argv.filter((a) => a.startsWith("--")))
  if (!["--payments", "--funding", "--memory-gb", "--chains"].includes(arg))
    throw new Error(`unknown ${arg}: use --payments N, --funding SHARE, --memory-gb N, --chains 3`);
// `bench:report -- --chains 3` comes here: the three chains the project knows, no other count.
if ((flag("chains") ?? CHAIN_RECORDS.length) !== CHAIN_RECORDS.length)
  throw new Error(`--chains: the week is split over the ${CHAIN_RECORDS.length} chains the project knows`);
const payments = flag("payments") ?? FULL.payments;
const scale = payments / FULL.payments;
const params = {
  seed: 1,
  merchants: Math.max(30, Math.round(FULL.merchants * scale)),
  buyers: Math.max(200, Math.round(FULL.buyers * scale)),
  payments,
  endBlock: DEFAULT_END_BLOCK,
  endTime: DEFAULT_END_TIME,
  funding: flag("funding") ?? 0,
};
const memoryLimit = `${flag("memory-gb") ?? 1}GB`;
const line = (text = "") => process.stdout.write(`${text}\n`);
const seconds = (ms: number) => Number((ms / 1000).toFixed(2));

const { dataFile } = await weekFile(params, line);

/** The chain of an address: by a hash of it (FNV-1a), a third each. */
function chainOf(address: string): ChainRecord {
  let h = 0x811c9dc5;
  for (let i = 0; i < address.length; i++) h = Math.imul(h ^ address.charCodeAt(i), 0x01000193) >>> 0;
  return CHAIN_RECORDS[h % CHAIN_RECORDS.length] as ChainRecord;
}

/** The week split into one file a chain (one chain a file, as the import asks). */
async function split(): Promise<Map<string, string>> {
  const files = new Map(CHAIN_RECORDS.map((c) => [c.slug, path.join(benchDir, `chains-${c.slug}.ndjson`)]));
  const out = new Map(CHAIN_RECORDS.map((c) => [c.slug, fs.createWriteStream(files.get(c.slug) as string)]));
  const write = (chain: ChainRecord, text: string) => {
    const stream = out.get(chain.slug) as fs.WriteStream;
    return stream.write(`${text}\n`) ? undefined : new Promise<void>((r) => stream.once("drain", () => r()));
  };
  const moved = (text: string, chain: ChainRecord) =>
    chain.slug === "base"
      ? text
      : text
          .replace('"chain":"base"', `"chain":"${chain.slug}"`)
          .replace(
            /"block_number":(\d+)/,
            (_, n: string) => `"block_number":${Number(n) + (OFFSET[chain.slug] ?? 0)}`,
          );
  for await (const text of readline.createInterface({ input: fs.createReadStream(dataFile) })) {
    if (text === "") continue;
    const to = /"(?:pay_to|to)":"(0x[0-9a-f]{40})"/.exec(text)?.[1];
    if (text.startsWith('{"type":"checkpoint"')) {
      for (const chain of CHAIN_RECORDS) await write(chain, moved(text, chain));
    } else if (to && (text.startsWith('{"type":"payment"') || text.startsWith('{"type":"transfer"'))) {
      const chain = chainOf(to);
      await write(chain, moved(text, chain));
    } else {
      await write(CHAIN_RECORDS[0] as ChainRecord, text);
    }
  }
  await Promise.all([...out.values()].map((s) => new Promise<void>((r) => s.end(() => r()))));
  return files;
}

/**
 * Builds the week's reports of `chains` ROUNDS times: each chain by its own service on a connection of its own,
 * all at once as `serve` builds them (src/services/reports.ts), or one after another; each round's wall time,
 * and each chain's.
 */
async function builds(
  analytics: Analytics,
  chains: readonly ChainRecord[],
  together: boolean,
): Promise<{ wall: number; chains: number[] }[]> {
  const services = await chainServices(analytics, chains);
  const timed = async (service: ReportService) => {
    const t0 = performance.now();
    await service.build();
    return performance.now() - t0;
  };
  const rounds: { wall: number; chains: number[] }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await bumpDataVersion(analytics);
    const t0 = performance.now();
    const times: number[] = [];
    if (together) times.push(...(await Promise.all(services.map(timed))));
    else for (const service of services) times.push(await timed(service));
    rounds.push({ wall: performance.now() - t0, chains: times });
  }
  return rounds;
}

async function store(name: string, files: readonly string[]): Promise<Analytics> {
  const dataDir = path.join(benchDir, name);
  fs.rmSync(dataDir, { recursive: true, force: true });
  const analytics = await Analytics.open({ dataDir, memoryLimit, threads: null });
  const t0 = performance.now();
  for (const file of files) {
    readThrough(file);
    await importNdjson(analytics, file);
  }
  line(`import     ${name}: ${seconds(performance.now() - t0)} s`);
  return analytics;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

// One chain, then the three, each in a store of its own, one after the other (never both open).
const one = await store("chains-one", [dataFile]);
await builds(one, [CHAIN_RECORDS[0] as ChainRecord], false); // warm: the first read loads the table
const oneRounds = await builds(one, [CHAIN_RECORDS[0] as ChainRecord], false);
one.close();
const files = await split();
const three = await store("chains-three", [...files.values()]);
const counts = await three.all<{ chain: string; n: bigint }>(
  "SELECT chain, count(*) AS n FROM payments GROUP BY chain ORDER BY chain",
);
await builds(three, CHAIN_RECORDS, true);
const threeRounds = await builds(three, CHAIN_RECORDS, true);
const serialRounds = await builds(three, CHAIN_RECORDS, false);
three.close();
for (const file of files.values()) fs.rmSync(file, { force: true });

const oneMs = mean(oneRounds.map((r) => r.wall));
const threeMs = mean(threeRounds.map((r) => r.wall));
const serialMs = mean(serialRounds.map((r) => r.wall));
const ratio = Number((threeMs / oneMs).toFixed(3));
const list = (rounds: { wall: number; chains: number[] }[]) =>
  rounds.map((r) => `${seconds(r.wall)} (${r.chains.map(seconds).join(", ")})`).join("; ");
line(`payments   ${counts.map((c) => `${c.chain} ${Number(c.n).toLocaleString("en-US")}`).join(", ")}`);
line(`one chain  ${oneRounds.map((r) => seconds(r.wall)).join(", ")} s: mean ${seconds(oneMs)} s`);
line(`three      at once, each its own connection: ${list(threeRounds)} s: mean ${seconds(threeMs)} s`);
line(`           one after another: ${list(serialRounds)} s: mean ${seconds(serialMs)} s`);
line(
  `ratio      ${ratio} (three chains at once / one chain)   goal <= ${GOAL_RATIO}: ${ratio <= GOAL_RATIO ? "met" : "MISSED"}`,
);
line(
  JSON.stringify({
    payments,
    funding: params.funding,
    one_chain_seconds: seconds(oneMs),
    three_chains_seconds: seconds(threeMs),
    three_chains_one_after_another_seconds: seconds(serialMs),
    per_chain_seconds: CHAIN_RECORDS.map((c, i) => [
      c.slug,
      seconds(mean(serialRounds.map((r) => r.chains[i] ?? 0))),
    ]),
    ratio,
    goal: GOAL_RATIO,
    peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
  }),
);
