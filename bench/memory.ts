/**
 * Memory of a merchant host (`npm run bench:memory [-- --requests N --idle SECONDS --db pglite|postgres]`).
 *
 * Starts `bin/x402-merchants serve --only utility` as its own process, on a temporary data directory and
 * free ports, and reads its resident memory (`/proc/PID/status`: VmRSS, and VmHWM for the peak) once it
 * has been idle `--idle` seconds (5) after each phase:
 *
 * 1. **First start** on an empty data directory (PGlite creates its cluster: initdb in WASM).
 * 2. **Restart** on that directory, the usual case for a host that has run before.
 * 3. **Free requests**: `--requests` (200) requests to the reference page, `/openapi.json`,
 *    `/.well-known/x402` and the 402 answers of every endpoint (no handler runs).
 * 4. **Each endpoint twice, paid**, after two paid warm-up calls: every endpoint that answers without the outside world, in catalogue
 *    order, paid through the real x402 flow (`@x402/fetch`, the project's facilitator on a devnet, a miner
 *    that mines as soon as a settlement waits). The URL-taking endpoints (pages, probes, vectorize) read
 *    a page and an image this benchmark serves on 127.0.0.1 (`X402M_FETCH_ALLOW=127.0.0.1`). Left out:
 *    DNS, e-mail, and the endpoints that need an upstream (language model, search, image model): they
 *    would need the network. For each endpoint, the first and the second call's latency (the first pays
 *    for whatever the endpoint loads on first use) and the RSS after its first call.
 * 5. **Mixed paid requests**: `--requests` more paid calls round-robin over those endpoints.
 *
 * Floors to compare with, each its own process, idle `--idle` seconds: a bare Hono server on plain Node;
 * the same under tsx (the CLI runs its TypeScript through tsx); PGlite alone (`openPglite`) on the
 * directory the host used.
 *
 * One JSON line on stdout with every figure (MB); the progress and a table on stderr. Linux only.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { PNG } from "pngjs";
import { privateKeyToAccount } from "viem/accounts";
import { type Devnet, startDevnet } from "../src/chain/devnet/index.ts";
import { listen } from "../src/common/listen.ts";
import type { AnyEndpoint } from "../src/merchant-kit/endpoint.ts";
import { utilityEndpoints } from "../src/merchants/utility/catalogue.ts";
import { startMiner } from "../test/helpers/chain.ts";
import { openTestDatabase } from "../test/helpers/db.ts";
import { devnetFacilitator } from "../test/helpers/facilitator.ts";
import { NETWORK, newMerchant } from "../test/helpers/x402.ts";

const ROOT = path.resolve(import.meta.dirname, "..");
const CLI = path.join(ROOT, "bin", "x402-merchants");
/** Endpoints that would reach the outside world (DNS servers, upstream providers): not called. */
const NEEDS_NETWORK = new Set(["/api/dns", "/api/email/verify"]);

function parseFlags(argv: string[]) {
  const flags = {
    requests: 200,
    idle: 5,
    db: "pglite" as "pglite" | "postgres",
  };
  for (let i = 0; i < argv.length; i += 2) {
    const key = (argv[i] ?? "").replace(/^--/, "");
    const raw = String(argv[i + 1]);
    if (key === "db") {
      if (raw !== "pglite" && raw !== "postgres") throw new Error("--db is pglite or postgres");
      flags.db = raw;
    } else if (key === "requests" || key === "idle") {
      const value = Number(raw);
      if (!Number.isSafeInteger(value) || value < 0) throw new Error(`bad value for --${key}: ${raw}`);
      flags[key] = value;
    } else {
      throw new Error(`unknown flag ${argv[i]}: use --requests, --idle, --db`);
    }
  }
  if (flags.db === "postgres" && !process.env.DATABASE_URL) {
    throw new Error("--db postgres needs DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test)");
  }
  return flags;
}

const flags = parseFlags(process.argv.slice(2));
const log = (message: string) => process.stderr.write(`${message}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// The SDK logs settlements' extension outcomes to stdout, where only the final JSON line belongs.
const consoleLog = console.log;
console.log = (...args: unknown[]) => {
  if (!String(args[0]).startsWith("[x402]")) consoleLog(...args);
};

/** Resident memory of a process, in MB (Linux `/proc`). */
function memoryOf(pid: number): { rss: number; peak: number; anon: number; file: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) =>
    Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  const mb = (key: string) => Math.round(kb(key) / 1024);
  return { rss: mb("VmRSS"), peak: mb("VmHWM"), anon: mb("RssAnon"), file: mb("RssFile") };
}

interface Child {
  process: ChildProcess;
  pid: number;
  /** The first line it printed on stdout. */
  ready: string;
  stop(): Promise<void>;
}

/** Spawns a process and waits for its first stdout line (its ready line). */
async function start(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 180_000,
): Promise<Child> {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const ready = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(
      () => reject(new Error(`${args.join(" ")}: not ready in ${timeoutMs} ms`)),
      timeoutMs,
    );
    child.stdout?.on("data", (chunk) => {
      out += chunk;
      const newline = out.indexOf("\n");
      if (newline >= 0) {
        clearTimeout(timer);
        resolve(out.slice(0, newline));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(
        new Error(`${args.slice(0, 3).join(" ")} exited (${code}) before it was ready: ${stderr.trim()}`),
      );
    });
  });
  return {
    process: child,
    pid: child.pid as number,
    ready,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** RSS once the process has been left alone for `--idle` seconds. */
async function idleMemory(pid: number) {
  await sleep(flags.idle * 1000);
  return memoryOf(pid);
}

const HONO_FLOOR = `
import { serve } from "@hono/node-server";
import { Hono } from "hono";
const app = new Hono();
app.get("/", (c) => c.json({ ok: true }));
serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, (info) => console.log(JSON.stringify({ url: "http://127.0.0.1:" + info.port })));
`;

const PGLITE_FLOOR = `
const { openPglite } = await import("./src/common/db/pglite.ts");
const db = await openPglite(process.env.BENCH_PGLITE_DIR);
await db.query("SELECT 1");
console.log("{}");
setInterval(() => {}, 1 << 30);
process.on("SIGTERM", () => db.close().then(() => process.exit(0)));
`;

/** A page and an image for the URL-taking endpoints, on 127.0.0.1. */
async function startFixtures() {
  const png = new PNG({ width: 64, height: 64 });
  for (let y = 0; y < 64; y++) {
    for (let x = 0; x < 64; x++) {
      const i = (y * 64 + x) * 4;
      const inside = (x - 32) ** 2 + (y - 32) ** 2 < 400;
      png.data[i] = inside ? 29 : 255;
      png.data[i + 1] = inside ? 78 : 255;
      png.data[i + 2] = inside ? 216 : 255;
      png.data[i + 3] = 255;
    }
  }
  const image = PNG.sync.write(png);
  const paragraph = (n: number) =>
    `<p>Tide pools hold water at low tide; paragraph ${n} says what lives there: anemones, crabs, snails and small fish that wait for the sea to return. Visitors should step on bare rock and leave every stone as they found it.</p>`;
  const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Tide pools</title>
<meta name="description" content="What lives in a tide pool"><meta property="og:title" content="Tide pools">
<link rel="canonical" href="/page"></head><body><header><nav><a href="/">Home</a></nav></header>
<main><article><h1>Tide pools</h1>${Array.from({ length: 12 }, (_, i) => paragraph(i)).join("")}
<img src="/image.png" alt="A blue circle"><img src="/image.png"><table><tr><th>Animal</th><th>Count</th></tr><tr><td>Crab</td><td>3</td></tr></table>
</article></main><footer style="color:#999;background:#fff">Footer</footer></body></html>`;
  const server = http.createServer((req, res) => {
    if (req.url?.startsWith("/image.png")) {
      res.writeHead(200, { "content-type": "image/png", "content-length": image.length });
      res.end(req.method === "HEAD" ? undefined : image);
      return;
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(req.method === "HEAD" ? undefined : page);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    page: `http://127.0.0.1:${port}/page`,
    image: `http://127.0.0.1:${port}/image.png`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The request an endpoint's catalogue example makes, its URLs pointed at the fixtures. */
function requestOf(endpoint: AnyEndpoint, base: string, fixtures: { page: string; image: string }) {
  const input = { ...(endpoint.example.input as Record<string, unknown>) };
  if ("url" in input) input.url = fixtures.page;
  if ("image_url" in input) input.image_url = fixtures.image;
  if (endpoint.method === "GET") {
    const query = new URLSearchParams(Object.entries(input).map(([k, v]) => [k, String(v)]));
    const qs = query.toString();
    return { url: `${base}${endpoint.path}${qs ? `?${qs}` : ""}`, init: { method: "GET" } };
  }
  return {
    url: `${base}${endpoint.path}`,
    init: {
      method: endpoint.method,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(input),
    },
  };
}

async function main() {
  log(
    `bench:memory on ${os.cpus()[0]?.model} x${os.cpus().length}, Node ${process.version}, load average ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}; idle ${flags.idle} s before each reading; merchant state on ${flags.db}`,
  );
  const closers: (() => Promise<unknown>)[] = [];
  const results: Record<string, unknown> = {};
  const rows: [string, string][] = [];
  const record = (name: string, m: { rss: number; peak?: number }, note = "") => {
    results[name] = m;
    rows.push([
      name,
      `${String(m.rss).padStart(5)} MB${m.peak ? `  (peak ${m.peak} MB)` : ""}${note ? `  ${note}` : ""}`,
    ]);
    log(`  ${name}: ${m.rss} MB RSS${m.peak ? `, peak ${m.peak} MB` : ""}${note ? ` ${note}` : ""}`);
  };
  try {
    // --- the chain, the facilitator, the fixtures ------------------------------------------------------
    const devnet: Devnet = await startDevnet({ port: 0, buyers: 1, blockTime: 0 });
    closers.push(() => devnet.stop());
    // Blocks on the wall clock: 2 s a block would, after a hundred or so settlements, put the chain past
    // the 300 s buyers sign for, and their transfers would revert.
    const miner = startMiner(devnet, 5, "wall");
    closers.push(() => miner.stop());
    const ledger = await openTestDatabase(process.env.DATABASE_URL ? "postgres" : "pglite");
    closers.push(ledger.close);
    const facilitator = await devnetFacilitator(devnet, ledger.db);
    closers.push(() => facilitator.close());
    const facilitatorServer = await listen(facilitator.app.fetch, "127.0.0.1", 0);
    closers.push(() => facilitatorServer.close());
    const fixtures = await startFixtures();
    closers.push(fixtures.close);

    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-bench-memory-"));
    closers.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      X402M_UTILITY_PAY_TO: newMerchant(),
      X402M_UTILITY_PORT: "0",
      X402M_FACILITATOR_URL: facilitatorServer.url,
      X402M_RPC_URL: devnet.rpc,
      X402M_FETCH_ALLOW: "127.0.0.1",
    };
    if (flags.db === "pglite") delete env.DATABASE_URL;
    const serve = () =>
      start(CLI, ["serve", "--only", "utility", "--data", dataDir, "--host", "127.0.0.1"], env);

    // --- 1. first start, 2. restart ------------------------------------------------------------------
    log("serve --only utility, first start on an empty data directory ...");
    let began = performance.now();
    let host = await serve();
    const firstStartMs = Math.round(performance.now() - began);
    record("first start, idle", await idleMemory(host.pid), `(ready in ${firstStartMs} ms)`);
    await host.stop();
    log("restart on the same directory ...");
    began = performance.now();
    host = await serve();
    closers.push(() => host.stop());
    const restartMs = Math.round(performance.now() - began);
    const base = (JSON.parse(host.ready) as { utility: string }).utility;
    record("restart, idle", await idleMemory(host.pid), `(ready in ${restartMs} ms)`);
    results.readyMs = { first: firstStartMs, restart: restartMs };

    // --- 3. free requests --------------------------------------------------------------------------------
    const endpoints = utilityEndpoints().filter(
      // vectorize declares an upstream (the hosted engine) but traces locally when none is configured.
      (e) =>
        !NEEDS_NETWORK.has(e.path) &&
        (!(e.effects ?? []).includes("upstream") || e.path === "/api/vectorize"),
    );
    const free = [`${base}/`, `${base}/openapi.json`, `${base}/.well-known/x402`];
    for (let i = 0; i < flags.requests; i++) {
      const n = i % (free.length + endpoints.length);
      if (n < free.length) {
        const response = await fetch(free[n] as string);
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`${free[n]}: ${response.status}`);
      } else {
        const { url, init } = requestOf(endpoints[n - free.length] as AnyEndpoint, base, fixtures);
        const response = await fetch(url, init);
        await response.arrayBuffer();
        if (response.status !== 402) throw new Error(`${url}: ${response.status} instead of 402`);
      }
    }
    record(`after ${flags.requests} free requests, idle`, await idleMemory(host.pid));

    // --- 4. each endpoint once, paid ------------------------------------------------------------------
    const buyer = privateKeyToAccount((devnet.buyers[0] as { privateKey: `0x${string}` }).privateKey);
    const paying = wrapFetchWithPayment(fetch, new x402Client().register(NETWORK, new ExactEvmClient(buyer)));
    const call = async (endpoint: AnyEndpoint) => {
      const { url, init } = requestOf(endpoint, base, fixtures);
      const t0 = performance.now();
      const response = await paying(url, init);
      // A 402 after paying says why: the requirements' `error`, or a failed settlement's receipt.
      const header = response.headers.get("payment-required") ?? response.headers.get("payment-response");
      const why = header ? ` ${Buffer.from(header, "base64").toString().slice(0, 400)}` : "";
      const body = `${await response.text()}${why}`;
      return { status: response.status, ms: performance.now() - t0, body };
    };
    // The payment path's own first use (x402 clients, the facilitator's, the ledger's statements) is not
    // any endpoint's: two paid calls of an endpoint that loads nothing take it first.
    const warmUp = endpoints.find((e) => e.method === "GET" && e.path === "/api/store") as AnyEndpoint;
    for (let i = 0; i < 2; i++) {
      const { status, body } = await call(warmUp);
      if (status !== 200) throw new Error(`warm-up payment failed: ${status} ${body.slice(0, 200)}`);
    }
    log("each endpoint, paid: first call, second call, RSS after the first call");
    const perEndpoint: Record<string, unknown> = {};
    for (const endpoint of endpoints) {
      const first = await call(endpoint);
      const rss = memoryOf(host.pid).rss;
      const second = await call(endpoint);
      const name = `${endpoint.method} ${endpoint.path}`;
      perEndpoint[name] = {
        status: first.status,
        firstMs: Math.round(first.ms),
        secondMs: Math.round(second.ms),
        rss,
      };
      log(
        `  ${name.padEnd(28)} ${String(first.status).padStart(3)}  first ${Math.round(first.ms)
          .toString()
          .padStart(
            5,
          )} ms  second ${Math.round(second.ms).toString().padStart(5)} ms  RSS ${rss} MB${first.status === 200 ? "" : `  ${first.body.slice(0, 100)}`}`,
      );
    }
    results.endpoints = perEndpoint;
    record("after each endpoint twice, idle", await idleMemory(host.pid));

    // --- 5. mixed paid requests ------------------------------------------------------------------------
    const statuses = new Map<number, number>();
    const firstOfStatus = new Map<number, string>();
    for (let i = 0; i < flags.requests; i++) {
      const endpoint = endpoints[i % endpoints.length] as AnyEndpoint;
      const { status, body } = await call(endpoint);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status !== 200 && !firstOfStatus.has(status)) {
        firstOfStatus.set(status, `${endpoint.method} ${endpoint.path}: ${body.slice(0, 300)}`);
      }
    }
    for (const [status, sample] of firstOfStatus) log(`  first ${status}: ${sample}`);
    record(
      `after ${flags.requests} more paid requests, idle`,
      await idleMemory(host.pid),
      `(statuses ${[...statuses].map(([s, n]) => `${n}x ${s}`).join(", ")})`,
    );
    await host.stop();

    // --- floors ------------------------------------------------------------------------------------------
    log("floors ...");
    for (const [name, args] of [
      ["floor: Hono server, plain Node", ["--input-type=module", "-e", HONO_FLOOR]],
      ["floor: Hono server under tsx", ["--import", "tsx/esm", "--input-type=module", "-e", HONO_FLOOR]],
    ] as const) {
      const floor = await start(process.execPath, [...args], process.env);
      const { url } = JSON.parse(floor.ready) as { url: string };
      for (let i = 0; i < flags.requests; i++) await (await fetch(url)).arrayBuffer();
      record(name, await idleMemory(floor.pid), `(after ${flags.requests} requests)`);
      await floor.stop();
    }
    if (flags.db === "pglite") {
      const floor = await start(
        process.execPath,
        ["--import", "tsx/esm", "--input-type=module", "-e", PGLITE_FLOOR],
        {
          ...process.env,
          BENCH_PGLITE_DIR: path.join(dataDir, "postgres"),
        },
      );
      record("floor: PGlite alone (openPglite), under tsx", await idleMemory(floor.pid));
      await floor.stop();
    }
  } finally {
    for (const close of closers.reverse()) await close().catch((error) => log(`closing: ${error}`));
  }
  log("");
  for (const [name, value] of rows) log(`${name.padEnd(48)} ${value}`);
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

await main();
process.exit(0);
