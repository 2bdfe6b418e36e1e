/**
 * Paid requests under a flood of unpaid ones (`npm run bench:flood [-- --seconds N ...]`, issue 40 §3):
 * the paid p50/p99 with and without a flood at the same time, in one run on one devnet, with the unpaid
 * limit (src/common/rate-limit.ts) and without it.
 *
 * Three processes besides anvil, so that each one's CPU is its own:
 * - the **server** (`flood.ts server`): the project's facilitator in process (as the composition root runs
 *   it) and two merchant hosts selling `/api/calc` at $0.001, alike but for the limit: `limited` with the
 *   `serve` defaults (20 unpaid requests a second, a burst of 100) with loopback limited, as a public client's
 *   address would be, `open` with none;
 * - the **flood** (`flood.ts flood`): 402 challenges of `/api/calc` at `--flood-rate` a second on its own
 *   schedule, an attacker's, not slowed by the answers (at most twice as many in flight as its
 *   `--flood-connections` keep-alive connections; what the schedule calls for beyond that is counted as
 *   unsent), from `--flood-addresses` loopback addresses (127.0.2.x). By default its rate is half as much
 *   again as the `open` host answers back to back, measured first: enough to saturate it;
 * - the **buyers** (this process): `--buyers` wallets, each from its own loopback address (127.0.1.x), paying
 *   as `@x402/fetch` does (the 402 challenge, then the call with its signed payment, settled on chain before
 *   the answer, a block mined as soon as a settlement waits), `--paid-rate` calls a second in all, each buyer
 *   on a schedule of its own: the same paid load in every phase, well below what the host can serve.
 *
 * Each round has four phases of `--seconds`: quiet and flooded on `limited`, then quiet and flooded on
 * `open`. A paid call's latency is the challenge's plus the paid request's. Printed: per phase the paid
 * calls, their p50 and p99, the flood's answers by status and the server's CPU; then, over all rounds,
 * the flooded p99 over the quiet p99 of each host. The goal: under 1.2 on `limited`.
 *
 * Flags: --seconds N (15), --rounds N (2), --buyers N (8), --paid-rate N (10), --flood-rate N (0: measured),
 * --flood-connections N (64), --flood-addresses N (4), --pin (the server on CPU 0, the flood on CPU 1, with
 * `taskset`: the flood's own CPU is then not the server's, as an attacker's on another machine would not be;
 * the buyers and anvil go where the kernel puts them), --db pglite|postgres (default postgres when
 * DATABASE_URL is set).
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import { x402Client } from "@x402/core/client";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { Pool } from "undici";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

const CHALLENGE = `/api/calc?expr=${encodeURIComponent("2^200 + 1/7")}`;
/** Issue 40: the flood moves the paid p99 by less than this factor, with the limit. */
const GOAL_P99_RATIO = 1.2;
const NETWORK = "eip155:8453";

interface ServerOptions {
  rpc: string;
  facilitatorKey: `0x${string}`;
  db: "pglite" | "postgres";
}

interface ServerUrls {
  limited: string;
  open: string;
  pid: number;
}

const log = (message: string) => process.stderr.write(`${message}\n`);
// The SDK logs every settlement's extension outcome to stdout, where only the JSON lines belong.
console.log = () => undefined;

const role = process.argv[2];
if (role === "server") await server(JSON.parse(process.argv[3] ?? "{}") as ServerOptions);
else if (role === "flood") await flood(JSON.parse(process.argv[3] ?? "{}") as FloodOptions);
else await main();

// --- the server ------------------------------------------------------------------------------------

async function server(options: ServerOptions): Promise<void> {
  const [
    { devnetChain },
    { listenWithUrl },
    { UnpaidLimit },
    { createFacilitator, inProcessClient },
    { merchantApp },
    { calc },
    { openTestDatabase },
    { loadConfig },
  ] = await Promise.all([
    import("../src/chain/devnet/index.ts"),
    import("../src/common/listen.ts"),
    import("../src/common/rate-limit.ts"),
    import("../src/facilitator/index.ts"),
    import("../src/merchant-kit/app.ts"),
    import("../src/merchants/utility/calc.ts"),
    import("../test/helpers/db.ts"),
    import("../src/services/config.ts"),
  ]);
  const closers: (() => Promise<unknown>)[] = [];
  const ledger = await openTestDatabase(options.db);
  closers.push(ledger.close);
  const state = await openTestDatabase(options.db);
  closers.push(state.close);
  const facilitator = await createFacilitator({
    db: ledger.db,
    rpc: options.rpc,
    chain: devnetChain(options.rpc),
    privateKey: options.facilitatorKey,
    pollingIntervalMs: 10,
    resolveIntervalMs: 0,
  });
  closers.push(() => facilitator.close());
  const config = loadConfig({ env: { X402M_RPC_URL: options.rpc } });
  // What `serve` runs with for a public client: the configured defaults, and loopback limited, since every
  // client here is on loopback (which `serve` exempts by default).
  const limit = new UnpaidLimit({ ...config.unpaidLimit, loopback: "limited" });
  const host = async (withLimit: boolean) => {
    const served = await listenWithUrl(
      async (publicUrl) =>
        (
          await merchantApp(
            {
              name: "bench",
              title: "Bench merchant",
              payTo: privateKeyToAccount(generatePrivateKey()).address,
              publicUrl,
              endpoints: [calc],
            },
            {
              services: { db: state.db, config },
              facilitator: inProcessClient(facilitator),
              payments: config.payments,
              limit: withLimit ? limit : undefined,
            },
          )
        ).fetch,
      "127.0.0.1",
      0,
    );
    closers.push(() => served.close());
    return served.url;
  };
  const urls: ServerUrls = { limited: await host(true), open: await host(false), pid: process.pid };
  process.stdout.write(`${JSON.stringify(urls)}\n`);
  process.stdin.resume();
  process.stdin.on("end", async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    process.exit(0);
  });
}

// --- the flood -------------------------------------------------------------------------------------

interface FloodOptions {
  url: string;
  connections: number;
  addresses: number;
  /** Requests a second, sent whether or not the last ones were answered; 0: back to back on every connection. */
  rate: number;
}

interface FloodTally {
  statuses: Record<string, number>;
  /** Requests the schedule called for that were not sent, every connection waiting on an answer. */
  unsent: number;
  seconds: number;
  cpuMs: number;
}

/**
 * Asks for the challenge until stdin closes, then prints its tally: at `rate` a second on a schedule of its
 * own (an attacker's, not slowed by the answers, up to twice as many requests in flight as connections),
 * or back to back on every connection.
 */
async function flood(options: FloodOptions): Promise<void> {
  const perAddress = Math.max(1, Math.floor(options.connections / options.addresses));
  const pools = Array.from(
    { length: options.addresses },
    (_, i) =>
      new Pool(options.url, {
        connections: perAddress,
        pipelining: 1,
        localAddress: `127.0.2.${i + 1}`,
      }),
  );
  const tally: FloodTally = { statuses: {}, unsent: 0, seconds: 0, cpuMs: 0 };
  const count = (key: string | number) => {
    tally.statuses[key] = (tally.statuses[key] ?? 0) + 1;
  };
  let stopped = false;
  let inFlight = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  process.stdin.resume();
  process.stdin.on("end", () => {
    stopped = true;
  });
  const once = async (pool: Pool) => {
    inFlight++;
    try {
      const { statusCode, body } = await pool.request({ path: CHALLENGE, method: "GET" });
      await body.dump();
      count(statusCode);
    } catch (error) {
      count((error as { code?: string }).code ?? "error");
    } finally {
      inFlight--;
    }
  };
  process.stdout.write("ready\n");
  if (options.rate === 0) {
    await Promise.all(
      pools.flatMap((pool) =>
        Array.from({ length: perAddress }, async () => {
          while (!stopped) await once(pool);
        }),
      ),
    );
  } else {
    const cap = options.connections * 2;
    let due = 0;
    let next = 0;
    while (!stopped) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      const owed = Math.floor(((performance.now() - started) / 1000) * options.rate) - due;
      for (let i = 0; i < owed; i++) {
        due++;
        if (inFlight >= cap) {
          tally.unsent++;
          continue;
        }
        void once(pools[next++ % pools.length] as Pool);
      }
    }
    while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  tally.seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  tally.cpuMs = (cpu.user + cpu.system) / 1000;
  process.stdout.write(`${JSON.stringify(tally)}\n`);
  await Promise.all(pools.map((pool) => pool.close()));
  process.exit(0);
}

/** Node with `args`, on CPU `cpu` alone when given (`taskset`). */
function pinned(cpu: number | undefined, args: string[]): [string, string[]] {
  if (cpu === undefined) return [process.execPath, args];
  return ["taskset", ["-c", String(cpu), process.execPath, ...args]];
}

/** Starts the flood against `url` at `rate` (0: back to back); `stop()` ends it and gives its tally. */
async function startFlood(url: string, flags: Flags, rate: number) {
  const child = spawn(
    ...pinned(flags.pin ? 1 : undefined, [
      ...process.execArgv,
      import.meta.filename,
      "flood",
      JSON.stringify({
        url,
        connections: flags["flood-connections"],
        addresses: flags["flood-addresses"],
        rate,
      } satisfies FloodOptions),
    ]),
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  let out = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  await new Promise<void>((resolve, reject) => {
    const check = () => (out.includes("ready\n") ? resolve() : undefined);
    child.stdout?.on("data", check);
    child.once("exit", (code) => reject(new Error(`the flood exited (${code}) before it was ready`)));
  });
  return {
    async stop(): Promise<FloodTally> {
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.stdin?.end();
      await exited;
      const line = out.split("\n").find((l) => l.startsWith("{"));
      return line ? (JSON.parse(line) as FloodTally) : { statuses: {}, unsent: 0, seconds: 0, cpuMs: 0 };
    },
  };
}

// --- the buyers and the phases ---------------------------------------------------------------------

interface Flags {
  seconds: number;
  rounds: number;
  buyers: number;
  "flood-connections": number;
  "flood-addresses": number;
  /** Requests a second; 0: 1.5 times what the open host answers back to back, measured first. */
  "flood-rate": number;
  /** Paid calls a second, all buyers together. */
  "paid-rate": number;
  /** The server on CPU 0 and the flood on CPU 1 (`taskset`): an attacker's CPU is not the server's. */
  pin: boolean;
  db: "pglite" | "postgres";
}

function parseFlags(argv: string[]): Flags {
  const flags: Flags = {
    seconds: 15,
    rounds: 2,
    buyers: 8,
    "flood-connections": 64,
    "flood-addresses": 4,
    "flood-rate": 0,
    "paid-rate": 10,
    pin: false,
    db: process.env.DATABASE_URL ? "postgres" : "pglite",
  };
  for (let i = 0; i < argv.length; i++) {
    const key = (argv[i] ?? "").replace(/^--/, "") as keyof Flags;
    const raw = String(argv[++i]);
    if (key === "pin") {
      flags.pin = true;
      i--;
      continue;
    }
    if (!(key in flags)) throw new Error(`unknown flag ${argv[i - 1]}: use ${Object.keys(flags).join(", ")}`);
    if (key === "db") {
      if (raw !== "pglite" && raw !== "postgres") throw new Error("--db is pglite or postgres");
      flags.db = raw;
      continue;
    }
    const value = Number(raw);
    const [min, max] = key === "flood-rate" ? [0, 1_000_000] : [1, 1_000];
    if (!Number.isSafeInteger(value) || value < min || value > max)
      throw new Error(`bad value for --${key}: ${raw}`);
    (flags as unknown as Record<string, number>)[key] = value;
  }
  if (flags.db === "postgres" && !process.env.DATABASE_URL)
    throw new Error("--db postgres needs DATABASE_URL");
  return flags;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/** A buyer: its own address on loopback and its own wallet, paying as `@x402/fetch` does. */
function buyerOf(url: string, index: number, privateKey: `0x${string}`) {
  const pool = new Pool(url, {
    connections: 1,
    pipelining: 1,
    localAddress: `127.0.1.${index + 1}`,
  });
  const client = new x402Client().register(NETWORK, new ExactEvmClient(privateKeyToAccount(privateKey)));
  return {
    /** One paid call; null when it was answered and settled, else why not. */
    async pay(): Promise<string | null> {
      const challenge = await pool.request({ path: CHALLENGE, method: "GET" });
      await challenge.body.dump();
      if (challenge.statusCode !== 402) return `challenge ${challenge.statusCode}`;
      const required = decodePaymentRequiredHeader(String(challenge.headers["payment-required"]));
      const signature = encodePaymentSignatureHeader(await client.createPaymentPayload(required));
      const paid = await pool.request({
        path: CHALLENGE,
        method: "GET",
        headers: { "payment-signature": signature },
      });
      const body = await paid.body.text();
      if (paid.statusCode !== 200) return `paid ${paid.statusCode}: ${body.slice(0, 80)}`;
      const receipt = decodePaymentResponseHeader(String(paid.headers["payment-response"]));
      return receipt.success ? null : "not settled";
    },
    close: () => pool.close(),
  };
}

/** CPU time of a process so far, in milliseconds (Linux). */
function cpuMs(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

interface Phase {
  host: "limited" | "open";
  flooded: boolean;
  latencies: number[];
  failures: Record<string, number>;
  seconds: number;
  serverCpu: number;
  flood?: FloodTally;
}

async function phase(
  host: Phase["host"],
  flooded: boolean,
  ctx: { urls: ServerUrls; flags: Flags; buyers: ReturnType<typeof buyerOf>[][]; rate: number },
): Promise<Phase> {
  const { urls, flags } = ctx;
  const url = urls[host];
  const floodRun = flooded ? await startFlood(url, flags, ctx.rate) : undefined;
  // The flood's connections up and answered before the paid calls are timed.
  if (floodRun) await new Promise((resolve) => setTimeout(resolve, 1_000));
  const buyers = ctx.buyers[host === "limited" ? 0 : 1] as ReturnType<typeof buyerOf>[];
  const latencies: number[] = [];
  const failures: Record<string, number> = {};
  const cpuBefore = cpuMs(urls.pid);
  const begin = performance.now();
  const deadline = begin + flags.seconds * 1000;
  await Promise.all(
    buyers.map(async (buyer, i) => {
      // Each buyer on a schedule of its own, staggered: the paid load is the same in every phase, whatever
      // the answers' speed (a buyer whose last call is still under way starts the next when it ends).
      const interval = (1000 * buyers.length) / flags["paid-rate"];
      let due = begin + (i * interval) / buyers.length;
      while (due < deadline) {
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        due += interval;
        const t0 = performance.now();
        let failure: string | null;
        try {
          failure = await buyer.pay();
        } catch (error) {
          failure = String((error as Error).message).slice(0, 80);
        }
        if (failure === null) latencies.push(performance.now() - t0);
        else failures[failure] = (failures[failure] ?? 0) + 1;
      }
    }),
  );
  const seconds = (performance.now() - begin) / 1000;
  const serverCpu = (cpuMs(urls.pid) - cpuBefore) / 10 / seconds;
  const floodTally = await floodRun?.stop();
  latencies.sort((a, b) => a - b);
  return { host, flooded, latencies, failures, seconds, serverCpu, flood: floodTally };
}

function describe(p: Phase): string {
  const name = `${p.host}, ${p.flooded ? "flooded" : "quiet"}`.padEnd(16);
  const paid = `${p.latencies.length} paid (${(p.latencies.length / p.seconds).toFixed(1)}/s)`;
  const times = `p50 ${percentile(p.latencies, 50).toFixed(1)} ms, p99 ${percentile(p.latencies, 99).toFixed(1)} ms`;
  const failed = Object.entries(p.failures)
    .map(([why, n]) => `${n}x ${why}`)
    .join("; ");
  const tally = p.flood;
  const floodLine = tally
    ? `; flood ${Object.entries(tally.statuses)
        .map(([status, n]) => `${status} ${(n / tally.seconds).toFixed(0)}/s`)
        .join(
          ", ",
        )}, unsent ${(tally.unsent / tally.seconds).toFixed(0)}/s, its CPU ${(tally.cpuMs / 10 / tally.seconds).toFixed(0)}%`
    : "";
  return `${name} ${paid.padEnd(18)} ${times}; server CPU ${p.serverCpu.toFixed(0)}%${floodLine}${failed ? `; failed: ${failed}` : ""}`;
}

async function main(): Promise<void> {
  const flags = parseFlags(process.argv.slice(2));
  const [{ startDevnet }, { startMiner }] = await Promise.all([
    import("../src/chain/devnet/index.ts"),
    import("../test/helpers/chain.ts"),
  ]);
  log(
    `bench:flood on ${os.cpus()[0]?.model} x${os.cpus().length}, Node ${process.version}, load average ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}`,
  );
  log(
    `${flags.buyers} buyers paying ${flags["paid-rate"]} calls a second, flood of ${flags["flood-connections"]} connections from ${flags["flood-addresses"]} addresses, ${flags.seconds} s phases, ${flags.rounds} round(s), state on ${flags.db}${flags.pin ? ", server on CPU 0 and flood on CPU 1" : ""}`,
  );
  const closers: (() => Promise<unknown>)[] = [];
  try {
    // Twice the buyers: one set per host, so that no wallet pays both hosts at once.
    const devnet = await startDevnet({ port: 0, buyers: flags.buyers * 2, blockTime: 0 });
    closers.push(() => devnet.stop());
    const miner = startMiner(devnet, 5, "wall");
    closers.push(() => miner.stop());

    const child = spawn(
      ...pinned(flags.pin ? 0 : undefined, [
        ...process.execArgv,
        import.meta.filename,
        "server",
        JSON.stringify({
          rpc: devnet.rpc,
          facilitatorKey: devnet.facilitatorAccount.privateKey,
          db: flags.db,
        } satisfies ServerOptions),
      ]),
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    closers.push(async () => {
      child.stdin?.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    });
    const urls = await new Promise<ServerUrls>((resolve, reject) => {
      let out = "";
      child.stdout?.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        const line = out.split("\n").find((l) => l.startsWith("{"));
        if (line) resolve(JSON.parse(line) as ServerUrls);
      });
      child.once("exit", (code) => reject(new Error(`the server exited (${code}) before it was ready`)));
    });

    const keys = devnet.buyers.map((b) => b.privateKey);
    const buyers = [
      keys.slice(0, flags.buyers).map((key, i) => buyerOf(urls.limited, i, key)),
      keys.slice(flags.buyers).map((key, i) => buyerOf(urls.open, flags.buyers + i, key)),
    ];
    closers.push(() => Promise.all(buyers.flat().map((b) => b.close())));
    // Warm-up: JIT, connections, the hosts' /supported, a few settlements on each host.
    for (const set of buyers) {
      for (const buyer of set) {
        const why = await buyer.pay();
        if (why !== null) throw new Error(`warm-up payment failed: ${why}`);
      }
    }

    // The flood's rate: enough to saturate the host without the limit, half as much again as it answers.
    let rate = flags["flood-rate"];
    if (rate === 0) {
      const probe = await startFlood(urls.open, flags, 0);
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      const tally = await probe.stop();
      const answered = (tally.statuses["402"] ?? 0) / tally.seconds;
      rate = Math.round(answered * 1.5);
      log(
        `the open host answers ${answered.toFixed(0)} challenges a second back to back: the flood sends ${rate}/s`,
      );
    }
    const ctx = { urls, flags, buyers, rate };
    const phases: Phase[] = [];
    for (let round = 0; round < flags.rounds; round++) {
      log(`\n--- round ${round + 1}`);
      for (const [host, flooded] of [
        ["limited", false],
        ["limited", true],
        ["open", false],
        ["open", true],
      ] as const) {
        const done = await phase(host, flooded, ctx);
        log(describe(done));
        phases.push(done);
      }
    }

    const pooled = (host: Phase["host"], flooded: boolean) =>
      phases
        .filter((p) => p.host === host && p.flooded === flooded)
        .flatMap((p) => p.latencies)
        .sort((a, b) => a - b);
    const summary: Record<string, unknown> = {};
    log("\n| host | phase | paid calls | p50 (ms) | p99 (ms) |");
    log("|---|---|---|---|---|");
    for (const host of ["limited", "open"] as const) {
      for (const flooded of [false, true]) {
        const l = pooled(host, flooded);
        log(
          `| ${host} | ${flooded ? "flooded" : "quiet"} | ${l.length} | ${percentile(l, 50).toFixed(1)} | ${percentile(l, 99).toFixed(1)} |`,
        );
      }
      const quiet = pooled(host, false);
      const flooded = pooled(host, true);
      summary[host] = {
        p50Ratio: Number((percentile(flooded, 50) / percentile(quiet, 50)).toFixed(2)),
        p99Ratio: Number((percentile(flooded, 99) / percentile(quiet, 99)).toFixed(2)),
      };
    }
    const limited = summary.limited as { p50Ratio: number; p99Ratio: number };
    const open = summary.open as { p50Ratio: number; p99Ratio: number };
    log(
      `\nflooded / quiet, with the limit:    p50 ${limited.p50Ratio}x, p99 ${limited.p99Ratio}x   goal p99 < ${GOAL_P99_RATIO}x: ${limited.p99Ratio < GOAL_P99_RATIO ? "met" : "MISSED"}`,
    );
    log(`flooded / quiet, without the limit: p50 ${open.p50Ratio}x, p99 ${open.p99Ratio}x`);
    process.stdout.write(
      `${JSON.stringify({
        date: new Date().toISOString(),
        cpu: os.cpus()[0]?.model,
        cores: os.cpus().length,
        node: process.version,
        flags,
        floodRate: rate,
        phases: phases.map((p) => ({
          host: p.host,
          flooded: p.flooded,
          paid: p.latencies.length,
          p50: Number(percentile(p.latencies, 50).toFixed(1)),
          p99: Number(percentile(p.latencies, 99).toFixed(1)),
          serverCpu: Math.round(p.serverCpu),
          flood: p.flood && {
            perSecond: Object.fromEntries(
              Object.entries(p.flood.statuses).map(([k, n]) => [k, Math.round(n / (p.flood?.seconds ?? 1))]),
            ),
            unsentPerSecond: Math.round(p.flood.unsent / p.flood.seconds),
            cpuPercent: Math.round(p.flood.cpuMs / 10 / p.flood.seconds),
          },
          failures: p.failures,
        })),
        summary,
      })}\n`,
    );
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  }
}
