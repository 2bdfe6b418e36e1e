/**
 * A Solana week beside an EVM week of the same size (`npm run bench:report -- --chain solana [--payments N]`,
 * issue 86: "a Solana week of 1M payments imports and builds its reports within 1.5x the time of an EVM week of the
 * same size on the same machine").
 *
 * The EVM week is `bench:report`'s (scripts/synthetic.ts through bench/week-file.ts, the same parameters for the
 * same `--payments`). The Solana week is that file rewritten line by line as `index --chain solana` writes Solana
 * lines (docs/import.md, "Solana lines"), so both weeks have the same wallets, payments, transfers, listings and
 * merchants, the same shape and the same times:
 * - every `0x` address becomes a base58 public key (32 bytes: the SHA-256 of the address), the same address the same
 *   key, and every transaction hash a base58 signature (64 bytes: the hash and its SHA-256);
 * - `chain` becomes `solana`, USDC's address the mint's; a block becomes one of its five 0.4 s slots (a Base block is
 *   2 s), the payments of one block spread over them by their hash, each slot dated by its block's time, the
 *   checkpoint at the week's last slot. Slots no line names are the skipped ones.
 * It is cached in .bench/ beside the EVM week (its name says the converter's version).
 *
 * Each round imports each week into a fresh store (the file read through first, as `bench:report` does, uncounted),
 * builds every report once untimed (the first build loads the tables), then `--builds` times (default 2, a data
 * version bump between), EVM then Solana, the other way round the next round; `--rounds` rounds (default 3). Each
 * side's best round counts: its import and its mean build, and the goal is on their sum. The slowest statements of
 * each side's import and build are printed to say where a difference comes from, and each side's CPU (this process's,
 * DuckDB's threads included), which a shared machine's load moves less than the wall time.
 *
 * Flags: --payments N (default 100,000: a quick run; the goal is at 1,000,000), --rounds N, --builds N,
 * --memory-gb N (DuckDB's limit, default 1).
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { getBase58Decoder } from "@solana/kit";
import { DEFAULT_END_BLOCK, DEFAULT_END_TIME } from "../scripts/synthetic.ts";
import { Analytics } from "../src/analytics/duckdb.ts";
import { importNdjson } from "../src/analytics/import.ts";
import { bumpDataVersion } from "../src/analytics/migrations.ts";
import type { Params } from "../src/analytics/sql.ts";
import { type AnyChainRecord, BASE_RECORD, SOLANA_RECORD } from "../src/chain/chains.ts";
import { SOLANA_USDC_MINT } from "../src/chain/solana/constants.ts";
import { ReportService } from "../src/reports/index.ts";
import { benchDir, readThrough, weekFile } from "./week-file.ts";

const GOAL_RATIO = 1.5;
/** The converter's version: a change to how a line is rewritten makes a new file. */
const CONVERTER = 1;
const SLOTS_PER_BLOCK = 5;
const FULL = { payments: 10_000_000, merchants: 50_000, buyers: 500_000 };

const argv = process.argv.slice(2);
const known = ["--chain", "--payments", "--rounds", "--builds", "--memory-gb"];
for (const arg of argv.filter((a) => a.startsWith("--")))
  if (!known.includes(arg)) throw new Error(`unknown ${arg}: use ${known.join(" N, ")} N`);
const flag = (name: string, fallback: number, whole = true): number => {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const n = Number(String(argv[i + 1]).replaceAll("_", ""));
  if (!(whole ? Number.isSafeInteger(n) : Number.isFinite(n)) || n <= 0)
    throw new Error(`bad --${name}: ${argv[i + 1]}`);
  return n;
};
const payments = flag("payments", 100_000);
const rounds = flag("rounds", 3);
const builds = flag("builds", 2);
const memoryLimit = `${flag("memory-gb", 1, false)}GB`;
const scale = payments / FULL.payments;
const params = {
  seed: 1,
  merchants: Math.max(30, Math.round(FULL.merchants * scale)),
  buyers: Math.max(200, Math.round(FULL.buyers * scale)),
  payments,
  endBlock: DEFAULT_END_BLOCK,
  endTime: DEFAULT_END_TIME,
  funding: 0,
};
const line = (text = "") => process.stdout.write(`${text}\n`);
const seconds = (ms: number) => Number((ms / 1000).toFixed(2));
const started = performance.now();

const base58 = getBase58Decoder();
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest();
const keys = new Map<string, string>();
/** A `0x` address's Solana key: the same address (any case), the same key. */
function keyOf(address: string): string {
  const lower = address.toLowerCase();
  let key = keys.get(lower);
  if (key === undefined) {
    key = base58.decode(sha256(Buffer.from(lower.slice(2), "hex")));
    keys.set(lower, key);
  }
  return key;
}
const signatureOf = (hash: string) => {
  const bytes = Buffer.from(hash.slice(2), "hex");
  return base58.decode(Buffer.concat([bytes, sha256(bytes)]));
};

/** The EVM week rewritten as Solana lines (see the module's comment), cached beside it. */
async function solanaWeek(evmFile: string): Promise<string> {
  const file = evmFile.replace(/\.ndjson$/, `-solana-v${CONVERTER}.ndjson`);
  if (fs.existsSync(file)) {
    line(`data       reusing ${path.relative(process.cwd(), file)}`);
    return file;
  }
  const t0 = performance.now();
  const partial = `${file}.partial`;
  const out = fs.createWriteStream(partial);
  const endSlot = 400_000_000;
  const slotOf = (block: number, spread: number) =>
    endSlot - (DEFAULT_END_BLOCK - block) * SLOTS_PER_BLOCK - (spread % SLOTS_PER_BLOCK);
  let buffer = "";
  for await (const text of readline.createInterface({ input: fs.createReadStream(evmFile) })) {
    if (text === "") continue;
    let spread = 0;
    let rewritten = text
      .replace('"chain":"base"', '"chain":"solana"')
      .replace(/"tx_hash":"(0x[0-9a-fA-F]{64})"/, (_, hash: string) => {
        spread = Number.parseInt(hash.slice(-2), 16);
        return `"tx_hash":"${signatureOf(hash)}"`;
      })
      .replace(/"asset":"0x[0-9a-fA-F]{40}"/, `"asset":"${SOLANA_USDC_MINT}"`)
      .replace(/"0x[0-9a-fA-F]{40}"/g, (quoted) => `"${keyOf(quoted.slice(1, -1))}"`);
    // The checkpoint has no hash: the week's last slot (spread 0).
    rewritten = rewritten.replace(
      /"block_number":(\d+)/,
      (_, n: string) => `"block_number":${slotOf(Number(n), spread)}`,
    );
    buffer += `${rewritten}\n`;
    if (buffer.length > 1 << 20) {
      if (!out.write(buffer)) await new Promise<void>((r) => out.once("drain", () => r()));
      buffer = "";
    }
  }
  await new Promise<void>((resolve, reject) => {
    out.once("error", reject);
    out.end(buffer, () => resolve());
  });
  fs.renameSync(partial, file);
  line(
    `data       wrote ${path.relative(process.cwd(), file)} (${keys.size.toLocaleString("en-US")} keys) in ${seconds(performance.now() - t0)} s`,
  );
  return file;
}

const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

interface Timed {
  stage: string;
  sql: string;
  ms: number;
}
interface Side {
  importMs: number;
  buildMs: number[];
  /** CPU of this process, DuckDB's threads included: steadier than wall time on a shared machine. */
  importCpuMs: number;
  buildCpuMs: number[];
  payments: number;
  reports: number;
  timings: Timed[];
}

/** One week into a fresh store, then its builds; every statement timed. */
async function measure(name: string, file: string, chain: AnyChainRecord): Promise<Side> {
  const dataDir = path.join(benchDir, `report-${name}`);
  fs.rmSync(dataDir, { recursive: true, force: true });
  const analytics = await Analytics.open({ dataDir, memoryLimit, threads: null });
  const timings: Timed[] = [];
  let stage = "import";
  const run = analytics.run.bind(analytics);
  const all = analytics.all.bind(analytics);
  const label = (sql: string) => sql.replace(/\s+/g, " ").trim().slice(0, 110);
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
  try {
    readThrough(file);
    let t0 = performance.now();
    let cpu = process.cpuUsage();
    await importNdjson(analytics, file);
    const importMs = performance.now() - t0;
    const importCpuMs = cpuMs(cpu);
    const service = new ReportService(analytics, { publicUrl: "http://127.0.0.1:8402", chain });
    stage = "warm-up";
    const window = await service.build();
    const buildMs: number[] = [];
    const buildCpuMs: number[] = [];
    for (let i = 0; i < builds; i++) {
      await bumpDataVersion(analytics);
      stage = "build";
      t0 = performance.now();
      cpu = process.cpuUsage();
      await service.build();
      buildMs.push(performance.now() - t0);
      buildCpuMs.push(cpuMs(cpu));
    }
    stage = "count";
    const counted = await analytics.one<{ payments: bigint; reports: bigint }>(
      `SELECT (SELECT count(*) FROM payments WHERE chain = $chain) AS payments,
              (SELECT count(*) FROM reports WHERE chain = $chain AND end_block = $end) AS reports`,
      { chain: chain.slug, end: window.end_block },
    );
    return {
      importMs,
      buildMs,
      importCpuMs,
      buildCpuMs,
      payments: Number(counted?.payments ?? 0n),
      reports: Number(counted?.reports ?? 0n),
      timings: timings.filter((t) => t.stage === "import" || t.stage === "build"),
    };
  } finally {
    analytics.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const { dataFile } = await weekFile(params, line);
const solanaFile = await solanaWeek(dataFile);
const sides: Record<"evm" | "solana", Side[]> = { evm: [], solana: [] };
for (let round = 0; round < rounds; round++) {
  // The order alternates: the first import of a run reads a colder disk and a colder process.
  if (round % 2 === 0) {
    sides.evm.push(await measure("evm", dataFile, BASE_RECORD));
    sides.solana.push(await measure("solana", solanaFile, SOLANA_RECORD));
  } else {
    sides.solana.push(await measure("solana", solanaFile, SOLANA_RECORD));
    sides.evm.push(await measure("evm", dataFile, BASE_RECORD));
  }
  const [e, s] = [sides.evm.at(-1) as Side, sides.solana.at(-1) as Side];
  line(
    `round ${round + 1}   EVM import ${seconds(e.importMs)} s, builds ${e.buildMs.map(seconds).join(", ")} s; Solana import ${seconds(s.importMs)} s, builds ${s.buildMs.map(seconds).join(", ")} s`,
  );
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const total = (s: Side) => s.importMs + mean(s.buildMs);
const totalCpu = (s: Side) => s.importCpuMs + mean(s.buildCpuMs);
/** Each side's least CPU over the rounds, import and build apart. */
const leastCpu = (list: Side[]) => ({
  import: Math.min(...list.map((s) => s.importCpuMs)),
  build: Math.min(...list.map((s) => mean(s.buildCpuMs))),
  total: Math.min(...list.map(totalCpu)),
});
const best = (list: Side[]) => list.reduce((a, b) => (total(b) < total(a) ? b : a));
const evm = best(sides.evm);
const sol = best(sides.solana);
// Base also reports the merchants no chain paid yet (listed only): a Solana report is of a merchant paid on Solana.
if (evm.payments !== sol.payments || sol.reports > evm.reports)
  throw new Error(
    `the weeks differ: EVM ${evm.payments} payments and ${evm.reports} reports, Solana ${sol.payments} and ${sol.reports}`,
  );

/** Each side's slowest statements of a stage (per build for the builds), to say where a difference is. */
function slowest(side: Side, stage: string, per: number): void {
  const rows = side.timings.filter((t) => t.stage === stage);
  const sum = new Map<string, number>();
  for (const t of rows) sum.set(t.sql, (sum.get(t.sql) ?? 0) + t.ms / per);
  const top = [...sum].sort((a, b) => b[1] - a[1]).slice(0, 8);
  for (const [sql, ms] of top) line(`    ${Math.round(ms).toString().padStart(6)}  ${sql}`);
}
line();
for (const [name, side] of [
  ["EVM", evm],
  ["Solana", sol],
] as const) {
  line(`${name}: import, slowest statements (ms)`);
  slowest(side, "import", 1);
  line(`${name}: a build, slowest statements (ms, mean of ${builds})`);
  slowest(side, "build", builds);
}
const ratio = (a: number, b: number) => Number((a / b).toFixed(2));
const figures = {
  date: new Date().toISOString().slice(0, 10),
  machine: `${os.cpus()[0]?.model ?? "cpu"} x ${os.cpus().length}, ${os.arch()}`,
  node: process.version,
  payments: evm.payments,
  reports: { evm: evm.reports, solana: sol.reports },
  evm: { import_seconds: seconds(evm.importMs), build_seconds: seconds(mean(evm.buildMs)) },
  solana: { import_seconds: seconds(sol.importMs), build_seconds: seconds(mean(sol.buildMs)) },
  ratio: {
    import: ratio(sol.importMs, evm.importMs),
    build: ratio(mean(sol.buildMs), mean(evm.buildMs)),
    total: ratio(total(sol), total(evm)),
  },
  cpu_seconds: {
    evm: { import: seconds(leastCpu(sides.evm).import), build: seconds(leastCpu(sides.evm).build) },
    solana: { import: seconds(leastCpu(sides.solana).import), build: seconds(leastCpu(sides.solana).build) },
  },
  cpu_ratio: {
    import: ratio(leastCpu(sides.solana).import, leastCpu(sides.evm).import),
    build: ratio(leastCpu(sides.solana).build, leastCpu(sides.evm).build),
    total: ratio(leastCpu(sides.solana).total, leastCpu(sides.evm).total),
  },
  load_average: os.loadavg().map((l) => Number(l.toFixed(1))),
  goal: GOAL_RATIO,
  run_seconds: seconds(performance.now() - started),
};
line();
line(
  `payments   ${evm.payments.toLocaleString("en-US")} each week; reports: EVM ${evm.reports.toLocaleString("en-US")} (with the listed merchants no chain paid), Solana ${sol.reports.toLocaleString("en-US")}`,
);
line(
  `EVM        import ${figures.evm.import_seconds} s, a build ${figures.evm.build_seconds} s: ${seconds(total(evm))} s`,
);
line(
  `Solana     import ${figures.solana.import_seconds} s, a build ${figures.solana.build_seconds} s: ${seconds(total(sol))} s`,
);
line(
  `ratio      Solana / EVM: import ${figures.ratio.import}, build ${figures.ratio.build}, import + build ${figures.ratio.total}   goal <= ${GOAL_RATIO}: ${figures.ratio.total <= GOAL_RATIO ? "met" : "MISSED"}`,
);
line(
  `CPU        EVM import ${figures.cpu_seconds.evm.import} s, a build ${figures.cpu_seconds.evm.build} s; Solana import ${figures.cpu_seconds.solana.import} s, a build ${figures.cpu_seconds.solana.build} s (the least of the rounds)`,
);
line(
  `CPU ratio  Solana / EVM: import ${figures.cpu_ratio.import}, build ${figures.cpu_ratio.build}, import + build ${figures.cpu_ratio.total} (load average ${figures.load_average.join(", ")})`,
);
line(JSON.stringify(figures));
