/**
 * The most expensive call each paid endpoint accepts, paid once (`npm run bench:worst-case [-- --only
 * PATH,PATH]`), issue 69: CPU time, wall time and memory growth of the serve process beside the price and
 * the budget that price buys (`X402M_WORK_CPU_MS` and `X402M_WORK_MEMORY_MB` per $0.001, defaults 2 CPU-s
 * and 200 MB: src/merchants/work-budget.ts).
 *
 * `bin/x402-merchants serve --only utility,inference,social` runs as its own process on a temporary data
 * directory, paid through the project's facilitator on a devnet (a miner that mines as soon as a settlement
 * waits). The endpoints are every paid endpoint of the three catalogues as they are served
 * (`MERCHANTS`), so a new endpoint is measured, or the run says it has no worst case yet and fails. Each
 * endpoint's worst case (`worst-inputs.ts`) is built from its documented limits: a page just under the
 * page cap served from 127.0.0.1 (`X402M_FETCH_ALLOW=127.0.0.1`), the largest body, image, expression or
 * text; the social API reads a synthetic X of 50,000 tweets imported into its archive (`worst-social.ts`),
 * each endpoint about the subject with the most to read. The endpoints that need outside services run against the tests' local fakes (language model,
 * search, images) or the offline engines (chat; speech and transcription with Debian's programs, which
 * must be installed); DNS and e-mail checks need DNS servers and are not run.
 *
 * Per call, read from /proc: CPU of the serve process and of every process under it (the audio programs,
 * the page readers' and the conversion's job processes: those still running, and those it has reaped),
 * wall time, and resident memory of the same tree: its peak during the call (sampled every 10 ms) over what
 * it was just before. A call over its price's budget is flagged; the run exits 1 when any is, or when an
 * endpoint has no worst case. One JSON line on stdout; progress and the table on stderr. Linux only.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { wrapFetchWithPayment } from "@x402/fetch";
import { type Devnet, startDevnet } from "../src/chain/devnet/index.ts";
import { listen } from "../src/common/listen.ts";
import { setLogLevel } from "../src/common/log.ts";
import type { AnyEndpoint, Merchant } from "../src/merchant-kit/endpoint.ts";
import { MERCHANTS } from "../src/merchants/index.ts";
import { budgetAt } from "../src/merchants/work-budget.ts";
import { loadConfig } from "../src/services/config.ts";
import { startMiner } from "../test/helpers/chain.ts";
import { openTestDatabase } from "../test/helpers/db.ts";
import { devnetFacilitator } from "../test/helpers/facilitator.ts";
import { newMerchant, x402ClientOf } from "../test/helpers/x402.ts";
import { startServeChild } from "./serve-child.ts";
import { startFakes } from "./worst-fakes.ts";
import { type WorstCall, worstCases } from "./worst-inputs.ts";
import { seedArchive } from "./worst-social.ts";

const HOSTS = ["utility", "inference", "social"] as const;
type HostName = (typeof HOSTS)[number];

const log = (message: string) => process.stderr.write(`${message}\n`);
// The SDK logs settlements' extension outcomes to stdout, where only the final JSON line belongs.
const consoleLog = console.log;
console.log = (...args: unknown[]) => {
  if (!String(args[0]).startsWith("[x402]")) consoleLog(...args);
};

function parseFlags(argv: string[]): { only: string[] | null } {
  if (argv.length === 0) return { only: null };
  if (argv[0] !== "--only" || !argv[1]) throw new Error("usage: bench:worst-case [-- --only PATH,PATH]");
  return { only: argv[1].split(",") };
}

/** utime + stime + cutime + cstime of a process, ms: its own CPU and its waited-for children's. */
function ownCpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
  return (ticks * 1000) / 100;
}

/** The processes a process started and has not reaped yet, by pid. */
function childrenOf(pid: number): number[] {
  let children: string[] = [];
  try {
    for (const task of fs.readdirSync(`/proc/${pid}/task`))
      children = children.concat(fs.readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(" "));
  } catch {
    // Gone meanwhile: what was read counts.
  }
  return children.filter(Boolean).map(Number);
}

/**
 * CPU of a process and of every process under it still running (the audio programs, the job processes): a
 * child's CPU reaches its parent's figures only once it has exited and been waited for.
 */
function cpuMs(pid: number): number {
  let total = ownCpuMs(pid);
  for (const child of childrenOf(pid)) {
    try {
      total += cpuMs(child);
    } catch {
      // Exited between the listing and the reading: its parent's waited-for figures will count it.
    }
  }
  return total;
}

/**
 * Resident memory of a process and of every process under it: a job process's heap is what the host grows
 * by as much as its own. A process that has just exited counts nothing.
 */
function rssMb(pid: number): number {
  let total = 0;
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    total = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
  for (const child of childrenOf(pid)) total += rssMb(child);
  return total;
}

interface Row {
  endpoint: string;
  case: string;
  price: string;
  status: number | string;
  cpuS: number;
  wallS: number;
  rssMb: number;
  budgetCpuS: number;
  budgetMb: number;
  over: boolean;
  note?: string;
}

/** One paid call, measured on the serve process. */
async function measure(
  pid: number,
  paying: typeof fetch,
  call: WorstCall,
): Promise<{ status: number; cpuS: number; wallS: number; rssMb: number; body: string }> {
  const rssBefore = rssMb(pid);
  let peak = rssBefore;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 10);
  const cpuBefore = cpuMs(pid);
  const t0 = performance.now();
  try {
    const response = await paying(call.url, call.init);
    const body = await response.text();
    const wallS = (performance.now() - t0) / 1000;
    const cpuS = (cpuMs(pid) - cpuBefore) / 1000;
    peak = Math.max(peak, rssMb(pid));
    return { status: response.status, cpuS, wallS, rssMb: peak - rssBefore, body };
  } finally {
    clearInterval(sampler);
  }
}

function printTable(rows: Row[]): void {
  const head = ["endpoint (case)", "price $", "status", "CPU s", "budget", "wall s", "+RSS MB", "budget", ""];
  const lines = rows.map((r) => [
    `${r.endpoint}${r.case ? ` (${r.case})` : ""}`,
    r.price,
    String(r.status),
    r.cpuS.toFixed(2),
    r.budgetCpuS.toFixed(1),
    r.wallS.toFixed(2),
    r.rssMb.toFixed(0),
    r.budgetMb.toFixed(0),
    r.over ? "OVER" : (r.note ?? ""),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] as string).length)));
  const fmt = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join(" | ")} |`;
  log(fmt(head));
  log(
    `|${widths.map((w, i) => (i === 0 || i === widths.length - 1 ? "-".repeat(w + 2) : `${"-".repeat(w + 1)}:`)).join("|")}|`,
  );
  for (const line of lines) log(fmt(line));
}

/** The paid endpoints each host serves, as the catalogues build them for `config`. */
function servedEndpoints(config: ReturnType<typeof loadConfig>): { host: HostName; endpoint: AnyEndpoint }[] {
  const host = { payTo: newMerchant(), publicUrl: "http://127.0.0.1" };
  return HOSTS.flatMap((name) =>
    (MERCHANTS[name](host, config) as Merchant).endpoints.map((endpoint) => ({ host: name, endpoint })),
  );
}

/** Wallets to pay with, and how many refusals each takes before the next pays (below the 5 an hour). */
const BUYERS = 8;
const REFUSALS_PER_WALLET = 3;

async function main() {
  // The in-process facilitator's request lines would bury the figures.
  setLogLevel("warn");
  const flags = parseFlags(process.argv.slice(2));
  const closers: (() => Promise<unknown>)[] = [];
  const rows: Row[] = [];
  let failed = false;
  try {
    const devnet: Devnet = await startDevnet({ port: 0, buyers: BUYERS, blockTime: 0 });
    closers.push(() => devnet.stop());
    const miner = startMiner(devnet, 5, "wall");
    closers.push(() => miner.stop());
    const ledger = await openTestDatabase("pglite");
    closers.push(ledger.close);
    const facilitator = await devnetFacilitator(devnet, ledger.db);
    closers.push(() => facilitator.close());
    const facilitatorServer = await listen(facilitator.app.fetch, "127.0.0.1", 0);
    closers.push(() => facilitatorServer.close());
    const fakes = await startFakes();
    closers.push(fakes.close);
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-bench-worst-"));
    closers.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...fakes.env,
      X402M_UTILITY_PAY_TO: newMerchant(),
      X402M_INFERENCE_PAY_TO: newMerchant(),
      X402M_SOCIAL_PAY_TO: newMerchant(),
      X402M_UTILITY_PORT: "0",
      X402M_INFERENCE_PORT: "0",
      X402M_SOCIAL_PORT: "0",
      X402M_INFERENCE_ENGINE: "offline",
      X402M_FACILITATOR_URL: facilitatorServer.url,
      X402M_RPC_URL: devnet.rpc,
      X402M_FETCH_ALLOW: "127.0.0.1",
    };
    delete env.DATABASE_URL;
    const config = loadConfig({ env: env as Record<string, string> });
    const budget = config.workBudget;
    log(
      `bench:worst-case on ${os.cpus()[0]?.model} x${os.cpus().length}, Node ${process.version}, load average ${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(" ")}; budget per $0.001: ${budget.cpuMs / 1000} CPU-s, ${budget.memoryMb} MB`,
    );
    log(`seeding the social archive ...`);
    const socialQueries = await seedArchive(dataDir);
    const serve = await startServeChild(HOSTS, env, dataDir);
    closers.push(() => serve.stop());
    const payers = devnet.buyers.map((buyer) => wrapFetchWithPayment(fetch, x402ClientOf(buyer)));
    // A call refused after its work counts against its wallet (5 an hour, then 429 before any work): the
    // next wallet pays once one has been refused a few times, so every endpoint's worst case is measured.
    let refused = 0;
    const paying: typeof fetch = (input, init) =>
      (payers[Math.floor(refused / REFUSALS_PER_WALLET) % payers.length] as typeof fetch)(input, init);
    // The payment path's first use (clients, the facilitator's statements) is no endpoint's.
    for (let i = 0; i < 2; i++) await paying(`${serve.urls.utility}/api/calc?expr=1%2B1`);
    const all = servedEndpoints(config).filter(
      ({ endpoint }) => !flags.only || flags.only.includes(endpoint.path),
    );
    for (const { host, endpoint } of all) {
      const name = `${endpoint.method} ${endpoint.path}`;
      const cases = worstCases(host, endpoint, serve.urls[host], fakes.pages, socialQueries);
      if (cases === "none") {
        failed = true;
        log(`  ${name}: NO WORST CASE: add one to bench/worst-inputs.ts`);
        continue;
      }
      const allowed = budgetAt(endpoint.price, budget);
      for (const c of cases) {
        if ("skip" in c) {
          rows.push({
            endpoint: name,
            case: c.name,
            price: endpoint.price,
            status: "not run",
            cpuS: 0,
            wallS: 0,
            rssMb: 0,
            budgetCpuS: allowed.cpuMs / 1000,
            budgetMb: allowed.memoryMb,
            over: false,
            note: c.skip,
          });
          continue;
        }
        for (const before of c.before ?? []) await paying(before.url, before.init);
        const m = await measure(serve.pid, paying, c);
        if (m.status !== 200) refused++;
        const over = m.cpuS * 1000 > allowed.cpuMs || m.rssMb > allowed.memoryMb;
        failed ||= over;
        const note = m.status === 200 ? undefined : m.body.slice(0, 120).replace(/\s+/g, " ");
        rows.push({
          endpoint: name,
          case: c.name,
          price: endpoint.price,
          status: m.status,
          cpuS: m.cpuS,
          wallS: m.wallS,
          rssMb: m.rssMb,
          budgetCpuS: allowed.cpuMs / 1000,
          budgetMb: allowed.memoryMb,
          over,
          note,
        });
        log(
          `  ${name} (${c.name}): ${m.status}, ${m.cpuS.toFixed(2)} CPU-s, ${m.wallS.toFixed(2)} s, +${m.rssMb.toFixed(0)} MB${over ? "  OVER BUDGET" : ""}${note ? `  ${note}` : ""}`,
        );
      }
    }
    printTable(rows);
    consoleLog(JSON.stringify({ budget, rows }));
  } finally {
    for (const close of closers.reverse()) await close().catch((error) => log(`closing: ${error}`));
  }
  process.exit(failed ? 1 : 0);
}

await main();
