/**
 * Readers benchmark (`npm run bench:readers [-- --payments N --merchants-read N --seconds N --readers N]`,
 * issue 45): what the live report service answers its readers a second, and how fast, while the indexer
 * follows a chain, beside the same files published by `publish` and served by a plain static server.
 *
 * One store throughout. A synthetic week (scripts/synthetic.ts; 200,000 payments by default) is imported
 * into .bench/readers/store, its reports built and published to .bench/readers/site (neither timed). Then
 * a devnet starts where the week ends: its genesis is the week's last block, with the week's last time, so
 * the indexer (`startReportService` with a chain to follow, as `serve --only reports --rpc` runs it) goes on
 * from the imported checkpoint into the same store, and the latest window moves with every block it
 * commits. The devnet mines by interval (Base's 2 s); before each block one sender settles `--per-block`
 * x402 payments (EIP-3009, as the exact scheme's facilitator does) to the merchants being read, so their
 * reports change as they are read. The static anchor is the window the week ended with: what `publish`
 * wrote before the chain moved.
 *
 * `--merchants-read` merchants (20), spread over the board, each give four URLs (report JSON, page, badge,
 * evidence JSON), and the leaderboard four (JSON pages 1 and 2, the home page, the ranking's page 2). The
 * readers (bench/readers-load.ts) run in a child process, 1 and then `--readers` (50) at once, each for
 * `--seconds` (10), then the same again revalidating with `If-None-Match` where an answer carried an ETag.
 * The report service, the indexer, the static server and the payments' signing share this process: its
 * CPU seconds over each run are printed, with the readers' and anvil's. `--follow 0` measures the same
 * store with no chain and no indexer (the window then never moves); the request log goes to
 * .bench/readers/service.log, which is left for a look and cleaned at the next start.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { getAddress } from "viem";
import { DEFAULT_END_BLOCK, DEFAULT_END_TIME, writeSynthetic } from "../scripts/synthetic.ts";
import { Analytics } from "../src/analytics/duckdb.ts";
import { importNdjson } from "../src/analytics/import.ts";
import { BLOCK_SECONDS } from "../src/chain/base.ts";
import type { Devnet } from "../src/chain/devnet/index.ts";
import { FacilitatorRegistry } from "../src/chain/facilitators.ts";
import { Lifecycle } from "../src/common/lifecycle.ts";
import { setLogDestination } from "../src/common/log.ts";
import { sleep } from "../src/common/sleep.ts";
import { LICENSE_URL, publishSite, ReportService, reportRoutes } from "../src/reports/index.ts";
import { loadConfig } from "../src/services/config.ts";
import { startReportService } from "../src/services/index.ts";
import { startTestDevnet } from "../test/helpers/indexer.ts";
import { type PaymentOrder, Settler } from "../test/helpers/settle.ts";
import type { LoadResult, LoadRun } from "./readers-load.ts";

const argv = process.argv.slice(2);
const flag = (name: string, fallback: number, min = 1) => {
  const at = argv.indexOf(`--${name}`);
  const value = at === -1 ? fallback : Number(argv[at + 1]);
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`--${name} takes an integer >= ${min}`);
  return value;
};
const payments = flag("payments", 200_000);
// Over 1,000 merchants: the leaderboard's JSON has a page 2 (1,000 a page).
const merchants = flag("merchants", Math.max(1_200, Math.round(payments / 100)));
const buyers = flag("buyers", Math.max(200, Math.round(payments / 20)));
const merchantsRead = flag("merchants-read", 20);
const seconds = flag("seconds", 10);
const readers = flag("readers", 50);
const perBlock = flag("per-block", 4, 0);
const reorgDepth = flag("reorg-depth", 3, 0);
const pollMs = flag("poll-ms", 500);
const follow = flag("follow", 1, 0) === 1;

const PUBLIC_URL = "https://reports.example";
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const work = path.join(root, ".bench", "readers");
const storeDir = path.join(work, "store");
const siteDir = path.join(work, "site");
const line = (text = "") => process.stdout.write(`${text}\n`);

type Url = LoadRun["urls"][number];
const KINDS = ["report", "page", "badge", "evidence", "leaderboard"] as const;

/** The week imported, its reports built and published; the merchants read, spread over the board. */
async function buildStore(): Promise<{ addresses: string[]; urls: Url[]; end: number }> {
  const file = path.join(work, "week.ndjson");
  await writeSynthetic(file, {
    seed: 1,
    merchants,
    buyers,
    payments,
    endBlock: DEFAULT_END_BLOCK,
    endTime: DEFAULT_END_TIME,
  });
  const analytics = await Analytics.open({ dataDir: storeDir, memoryLimit: "1GB", threads: null });
  try {
    let t0 = performance.now();
    await importNdjson(analytics, file);
    fs.rmSync(file);
    const service = new ReportService(analytics, { publicUrl: PUBLIC_URL });
    const window = await service.build();
    line(`store      imported and built in ${((performance.now() - t0) / 1000).toFixed(1)} s (not counted)`);
    const rows = await analytics.all<{ address: string }>(
      "SELECT address FROM reports WHERE chain = 'base' AND end_block = $end ORDER BY board_place",
      { end: window.end_block },
    );
    const step = Math.max(1, Math.floor(rows.length / merchantsRead));
    const addresses = rows
      .filter((_, i) => i % step === 0)
      .slice(0, merchantsRead)
      .map((r) => r.address);
    t0 = performance.now();
    const routes = reportRoutes(service, { unlogged: true });
    const manifest = await publishSite(async (p) => routes.request(p), siteDir, {
      version: "bench",
      license: LICENSE_URL,
      merchants: async (end) => ({ notice: undefined, batches: (await service.readMerchants(end)).batches }),
    });
    line(
      `publish    ${manifest.files.length.toLocaleString("en-US")} files in ${((performance.now() - t0) / 1000).toFixed(1)} s (not counted), window ending at block ${window.end_block}`,
    );
    const urls: Url[] = [
      ...addresses.flatMap((a) => [
        { kind: "report", path: `/v1/reports/base/${a}` },
        { kind: "page", path: `/reports/base/${a}` },
        { kind: "badge", path: `/badges/base/${a}.svg` },
        { kind: "evidence", path: `/v1/reports/base/${a}/evidence` },
      ]),
      ...["/v1/leaderboard/base", "/v1/leaderboard/base/pages/2", "/", "/ranking/2"].map((p) => ({
        kind: "leaderboard",
        path: p,
      })),
    ];
    const published = new Set(manifest.files.map((f) => f.path));
    const missing = urls.filter((u) => !published.has(u.path));
    if (missing.length > 0)
      throw new Error(`publish wrote no file for ${missing.map((u) => u.path).join(", ")}`);
    return { addresses, urls, end: window.end_block };
  } finally {
    analytics.close();
  }
}

/** The devnet going on from the week's last block, and x402 payments to `payTo` before every block. */
async function startChain(payTo: string[]) {
  const devnet: Devnet = await startTestDevnet({
    buyers: 8,
    blockTime: BLOCK_SECONDS,
    genesisNumber: DEFAULT_END_BLOCK,
    genesisTimestamp: Math.floor(Date.parse(DEFAULT_END_TIME) / 1000),
  });
  const settler = new Settler(devnet, devnet.facilitatorAccount);
  const stats = { settled: 0, failed: 0, lastError: "" };
  let running = true;
  let next = 0;
  const loop = (async () => {
    while (running) {
      const due = performance.now() + BLOCK_SECONDS * 1000;
      const orders: PaymentOrder[] = Array.from({ length: perBlock }, () => {
        const i = next++;
        return {
          buyer: devnet.buyers[i % devnet.buyers.length] as PaymentOrder["buyer"],
          payTo: getAddress(payTo[i % payTo.length] as string),
          amount: 1_000n + BigInt(i % 7) * 1_000n,
        };
      });
      try {
        if (orders.length > 0) await settler.settle(orders);
        stats.settled += orders.length;
      } catch (error) {
        stats.failed += orders.length;
        stats.lastError = (error as Error).message;
        settler.resync();
      }
      while (running && performance.now() < due) await sleep(Math.min(200, due - performance.now()));
    }
  })();
  return {
    devnet,
    stats,
    stop: async () => {
      running = false;
      await loop;
      await devnet.stop();
    },
  };
}

/** The report service as `serve --only reports` starts it, following `devnet` when there is one. */
async function startLive(devnet: Devnet | undefined) {
  const lifecycle = new Lifecycle();
  const config = loadConfig({
    env: { X402M_DATA: storeDir, PORT: "0", X402M_PUBLIC_URL: PUBLIC_URL, X402M_METRICS_PORT: "off" },
  });
  const followOptions = devnet && {
    rpc: { url: devnet.rpc },
    registry: FacilitatorRegistry.base().withSigners([devnet.facilitatorAccount.address]),
    fromBlock: DEFAULT_END_BLOCK + 1,
    reorgDepth,
    pollMs,
  };
  const started = await startReportService(config, followOptions, lifecycle);
  let failure: unknown;
  started.indexing?.catch((error: unknown) => {
    failure = error;
  });
  return {
    url: started.url,
    failure: () => failure,
    close: () => lifecycle.close(),
  };
}

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".json": "application/json",
  ".svg": "image/svg+xml; charset=utf-8",
};

/**
 * A plain static server over the published site: a file read from disk on every request, with the
 * ETag, Last-Modified and 304 answers nginx gives (its ETag is mtime and size in hex), and the rewrite
 * docs/publish.md gives hosts for JSON URLs without an extension (`<path>/index.json`).
 */
function serveStatic(dir: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(async (req, res) => {
    const bare = decodeURIComponent(new URL(req.url ?? "/", "http://host").pathname).replace(
      /^\/+|\/+$/g,
      "",
    );
    if (bare.split("/").includes("..")) return void res.writeHead(400).end();
    const candidates = /\.[a-z0-9]+$/i.test(bare)
      ? [bare]
      : [path.join(bare, "index.html"), path.join(bare, "index.json")];
    for (const candidate of candidates) {
      const file = path.join(dir, candidate);
      const stat = await fs.promises.stat(file).catch(() => undefined);
      if (!stat?.isFile()) continue;
      const headers = {
        "Content-Type": CONTENT_TYPES[path.extname(file)] ?? "application/octet-stream",
        ETag: `"${Math.floor(stat.mtimeMs / 1000).toString(16)}-${stat.size.toString(16)}"`,
        "Last-Modified": stat.mtime.toUTCString(),
      };
      if (req.headers["if-none-match"] === headers.ETag) return void res.writeHead(304, headers).end();
      const body = await fs.promises.readFile(file);
      return void res.writeHead(200, { ...headers, "Content-Length": body.length }).end(body);
    }
    res.writeHead(404, { "Content-Type": "text/plain" }).end("not found");
  });
  server.keepAliveTimeout = 65_000;
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

/** CPU seconds of another process so far (Linux /proc; NaN elsewhere). */
function cpuOf(pid: number | undefined): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** The indexed block the live service reports on /healthz (null without an indexer). */
async function indexedBlock(url: string): Promise<number | null> {
  const health = (await (await fetch(`${url}/healthz`)).json()) as {
    indexer?: { indexed_block: number | null };
  };
  return health.indexer?.indexed_block ?? null;
}

interface Measured extends LoadResult {
  target: "live" | "static";
  clients: number;
  revalidate: boolean;
  serverCpuSeconds: number;
  anvilCpuSeconds: number;
  blocksIndexed: number | null;
}

/** One run of the readers in their own process against `origin`. */
function load(run: LoadRun): Promise<LoadResult> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", path.join(root, "bench", "readers-load.ts"), JSON.stringify(run)],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => {
      if (code === 0) resolve(JSON.parse(out) as LoadResult);
      else reject(new Error(`the readers exited ${code}`));
    });
  });
}

async function measure(
  target: Measured["target"],
  origin: string,
  urls: Url[],
  live: string,
  anvilPid: number | undefined,
): Promise<Measured[]> {
  const results: Measured[] = [];
  const runs = [false, true].flatMap((revalidate) =>
    [1, readers].map((clients) => ({ clients, revalidate })),
  );
  for (const [i, { clients, revalidate }] of runs.entries()) {
    const before = { block: await indexedBlock(live), cpu: process.cpuUsage(), anvil: cpuOf(anvilPid) };
    const result = await load({ origin, urls, clients, seconds, revalidate, warm: i === 0 });
    const cpu = process.cpuUsage(before.cpu);
    const after = await indexedBlock(live);
    const measured: Measured = {
      ...result,
      target,
      clients,
      revalidate,
      serverCpuSeconds: (cpu.user + cpu.system) / 1e6,
      anvilCpuSeconds: cpuOf(anvilPid) - before.anvil,
      blocksIndexed: after === null || before.block === null ? null : after - before.block,
    };
    results.push(measured);
    const statuses = Object.entries(result.statuses)
      .map(([s, n]) => `${s}: ${n}`)
      .join(", ");
    line(
      `run        ${target} x${clients}${revalidate ? " revalidating" : ""}: ${result.requests} requests in ${result.seconds.toFixed(1)} s (${statuses}), CPU s: server ${measured.serverCpuSeconds.toFixed(1)}, readers ${result.cpuSeconds.toFixed(1)}, anvil ${fixed(measured.anvilCpuSeconds)}; blocks indexed meanwhile ${measured.blocksIndexed ?? "-"}`,
    );
    for (const u of result.unexpected) line(`  UNEXPECTED ${u}`);
  }
  return results;
}

const fixed = (n: number | undefined, digits = 1) =>
  n === undefined || !Number.isFinite(n) ? "-" : n.toFixed(digits);

function printTable(all: Measured[]) {
  const find = (target: string, clients: number, revalidate: boolean) =>
    all.find((m) => m.target === target && m.clients === clients && m.revalidate === revalidate);
  for (const revalidate of [false, true]) {
    line();
    line(
      revalidate
        ? "revalidating (If-None-Match with the last ETag seen for the URL): req/s, p50 and p99 in ms"
        : "plain GETs, every answer expected 200: req/s, p50 and p99 in ms",
    );
    line(
      `${"kind".padEnd(12)}${"readers".padStart(8)} | ${"live req/s".padStart(10)}${"p50".padStart(9)}${"p99".padStart(9)} | ${"static req/s".padStart(12)}${"p50".padStart(8)}${"p99".padStart(8)} | ${"req/s live/static".padStart(17)}${"p50 live/static".padStart(16)}`,
    );
    for (const clients of [1, readers]) {
      const live = find("live", clients, revalidate);
      const anchor = find("static", clients, revalidate);
      for (const kind of [...KINDS, "all"]) {
        const fig = (m: Measured | undefined) => ({
          ...m?.kinds[kind],
          rps: m && (m.kinds[kind]?.requests ?? 0) / m.seconds,
        });
        const l = fig(live);
        const s = fig(anchor);
        line(
          `${kind.padEnd(12)}${String(clients).padStart(8)} | ${fixed(l.rps).padStart(10)}${fixed(l.p50, 2).padStart(9)}${fixed(l.p99, 2).padStart(9)} | ${fixed(s.rps).padStart(12)}${fixed(s.p50, 2).padStart(8)}${fixed(s.p99, 2).padStart(8)} | ${fixed(l.rps !== undefined && s.rps ? l.rps / s.rps : undefined, 2).padStart(17)}${fixed(l.p50 !== undefined && s.p50 ? l.p50 / s.p50 : undefined, 2).padStart(16)}`,
        );
      }
    }
    for (const target of ["live", "static"]) {
      const runs = all.filter((m) => m.target === target && m.revalidate === revalidate);
      if (revalidate)
        line(
          `${target.padEnd(7)} 304 answers: ${runs.map((m) => `x${m.clients} ${m.statuses["304"] ?? 0} of ${m.requests} (${m.withEtag} of the URLs sent an ETag)`).join("; ")}`,
        );
    }
  }
}

function printGoals(all: Measured[]) {
  const live = (clients: number) =>
    all.find((m) => m.target === "live" && m.clients === clients && !m.revalidate);
  const many = live(readers);
  const one = live(1);
  const ok = (met: boolean) => (met ? "met" : "MISSED");
  line();
  if (!many || !one) return;
  const rps = many.requests / many.seconds;
  line(`goal       live x${readers}: >= 500 req/s: ${Math.round(rps)}, ${ok(rps >= 500)}`);
  const worst = Math.max(...KINDS.map((k) => many.kinds[k]?.p99 ?? Number.POSITIVE_INFINITY));
  line(
    `goal       live x${readers}: p99 < 100 ms for every kind: worst ${fixed(worst)} ms, ${ok(worst < 100)}`,
  );
  for (const k of ["badge", "report"]) {
    const p50 = one.kinds[k]?.p50 ?? Number.POSITIVE_INFINITY;
    line(`goal       live x1: ${k} p50 < 5 ms: ${fixed(p50)} ms, ${ok(p50 < 5)}`);
  }
}

async function main() {
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(work, { recursive: true });
  // The service's request log, as `serve` writes it, to a file rather than between the figures.
  const logFd = fs.openSync(path.join(work, "service.log"), "w");
  setLogDestination({ write: (text) => void fs.writeSync(logFd, text) });
  line(
    `x402-merchants readers benchmark: ${payments.toLocaleString("en-US")} payments, ${merchants} merchants, ${merchantsRead} read; ${seconds} s a run at 1 and ${readers} readers; indexer ${follow ? `following a devnet (${perBlock} payments a block, reorg depth ${reorgDepth}, polls every ${pollMs} ms)` : "off"}`,
  );
  line(
    `machine    ${os.cpus()[0]?.model ?? "?"} x ${os.cpus().length}, Node ${process.version}, ${new Date().toISOString()}, load average ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(" ")}`,
  );
  const { addresses, urls, end } = await buildStore();
  const chain = follow ? await startChain(addresses) : undefined;
  const live = await startLive(chain?.devnet);
  const anchor = await serveStatic(siteDir);
  try {
    if (chain) {
      // Until the indexer has committed past the imported week: the window then moves with every block.
      const deadline = performance.now() + 120_000;
      while (((await indexedBlock(live.url)) ?? 0) <= DEFAULT_END_BLOCK + reorgDepth) {
        if (live.failure()) throw live.failure();
        if (performance.now() > deadline) throw new Error("the indexer did not catch up in 2 minutes");
        await sleep(500);
      }
    }
    line(
      `servers    live ${live.url} (report service${chain ? " + indexer following" : ""}, this process), static ${anchor.url} (this process); readers in a child process`,
    );
    const all = [
      ...(await measure("live", live.url, urls, live.url, chain?.devnet.pid)),
      ...(await measure("static", anchor.url, urls, live.url, chain?.devnet.pid)),
    ];
    if (live.failure()) throw live.failure();
    const board = (await (await fetch(`${live.url}/v1/leaderboard/base`)).json()) as {
      window: { end_block: number };
    };
    line(
      `window     published: ending at block ${end}; live at the end: ending at block ${board.window.end_block} (${board.window.end_block - end} blocks on)`,
    );
    printTable(all);
    printGoals(all);
    if (chain) {
      line(
        `chain      ${chain.stats.settled} payments settled on the devnet during the bench${chain.stats.failed ? `, ${chain.stats.failed} failed (${chain.stats.lastError})` : ""}`,
      );
    }
    const bad = all.reduce(
      (n, m) =>
        n + Object.entries(m.statuses).reduce((k, [s, c]) => k + (s === "200" || s === "304" ? 0 : c), 0),
      0,
    );
    line(
      `answers    ${bad === 0 ? "every answer 200 (or 304 when revalidating)" : `${bad} answers NOT 200/304`}`,
    );
    line(
      JSON.stringify({
        bench: "readers",
        date: new Date().toISOString().slice(0, 10),
        machine: os.cpus()[0]?.model,
        cores: os.cpus().length,
        node: process.version,
        flags: { payments, merchants, merchantsRead, seconds, readers, perBlock, reorgDepth, pollMs, follow },
        runs: all,
      }),
    );
    if (bad > 0) process.exitCode = 1;
  } finally {
    await anchor.close();
    await live.close();
    await chain?.stop();
    setLogDestination(undefined);
    fs.closeSync(logFd);
  }
}

await main();
