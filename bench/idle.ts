/**
 * A merchant host's CPU while nobody asks it anything (`npm run bench:idle [-- --requests N --seconds N
 * --stores pglite,postgres]`), issue 41: after paid requests it must go back to doing nothing.
 *
 * For each store (PGlite; PostgreSQL when DATABASE_URL is set), starts `bin/x402-merchants serve --only
 * utility` as its own process (a temporary data directory, or a schema of its own on the server), then:
 *
 * 1. **Fresh**: from 5 s after it is ready (its start's own work is done by then), `--seconds` (10) idle.
 * 2. **After paid requests**: `--requests` (3) paid requests one after another through the real x402 flow
 *    (`@x402/fetch`, the project's facilitator on a devnet; calc, then a scratchpad write, in turn: the
 *    plain and the guarded payment paths), then from 2 s after the last one, `--seconds` idle.
 *
 * In each window: the host process's CPU (all threads), its PostgreSQL backends' (matched by client port:
 * bench/cpu.ts) and the server's own processes' (the postmaster, WAL writer, checkpointer: they serve the
 * machine's other users too), in ms per second, and the host's connections to PostgreSQL (open at the
 * start and end, most at once, opened during the window). The devnet's miner pauses during the windows;
 * the chain, the facilitator and this process (the buyer) are not counted. Goal: the host under 5 ms of CPU
 * a second from 2 s after the last paid request, on both stores.
 *
 * One JSON line on stdout with every figure; progress and a table on stderr. Linux only.
 */

import os from "node:os";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { startDevnet } from "../src/chain/devnet/index.ts";
import type { DatabaseKind } from "../src/common/db/index.ts";
import { listen } from "../src/common/listen.ts";
import { setLogLevel } from "../src/common/log.ts";
import { startMiner } from "../test/helpers/chain.ts";
import { isolatedDatabaseOptions, openTestDatabase } from "../test/helpers/db.ts";
import { devnetFacilitator } from "../test/helpers/facilitator.ts";
import { NETWORK, newMerchant } from "../test/helpers/x402.ts";
import { type CpuCount, meterCpu, processCpuMs } from "./cpu.ts";
import { startServeChild } from "./serve-child.ts";

/** Issue 41: a host's CPU from 2 s after its last paid request. */
const GOAL_MS_PER_S = 5;
/** How long after the last paid request the window opens. */
const AFTER_PAID_MS = 2_000;
/** How long after a fresh host is ready its window opens: its start's last work (migrations, JIT) is done. */
const AFTER_START_MS = 5_000;

function parseFlags(argv: string[]) {
  const flags = {
    requests: 3,
    seconds: 10,
    stores: (process.env.DATABASE_URL ? ["pglite", "postgres"] : ["pglite"]) as DatabaseKind[],
  };
  for (let i = 0; i < argv.length; i += 2) {
    const key = (argv[i] ?? "").replace(/^--/, "");
    const raw = String(argv[i + 1]);
    if (key === "stores") {
      const stores = raw.split(",");
      if (!stores.every((s) => s === "pglite" || s === "postgres"))
        throw new Error("--stores is a list of pglite, postgres");
      flags.stores = stores as DatabaseKind[];
    } else if (key === "requests" || key === "seconds") {
      const value = Number(raw);
      if (!Number.isSafeInteger(value) || value < 1) throw new Error(`bad value for --${key}: ${raw}`);
      flags[key] = value;
    } else throw new Error(`unknown flag ${argv[i]}: use --requests, --seconds, --stores`);
  }
  if (flags.stores.includes("postgres") && !process.env.DATABASE_URL)
    throw new Error("--stores postgres needs DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test)");
  return flags;
}

const flags = parseFlags(process.argv.slice(2));
// The facilitator in this process logs each request; the table has no use for them.
setLogLevel("warn");
const log = (message: string) => process.stderr.write(`${message}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (x: number, digits = 1) => Number(x.toFixed(digits));

/** One idle window's figures, per second of it. */
interface Window {
  seconds: number;
  hostMsPerS: number;
  backendsMsPerS: number;
  postgresServerMsPerS: number;
  /** The host's CPU in each whole second of the window, ms. */
  hostBySecond: number[];
  connections: CpuCount["connections"][string];
}

/** `--seconds` of nobody asking the host anything, measured. */
async function idleWindow(pid: number): Promise<Window> {
  const meter = meterCpu({ host: pid });
  const bySecond: number[] = [];
  let last = processCpuMs(pid) ?? 0;
  for (let s = 0; s < flags.seconds; s++) {
    await sleep(1000);
    const now = processCpuMs(pid) ?? last;
    bySecond.push(now - last);
    last = now;
  }
  const count = meter.stop();
  return {
    seconds: round(count.seconds, 2),
    hostMsPerS: round((count.processes.host ?? 0) / count.seconds),
    backendsMsPerS: round((count.backends.host ?? 0) / count.seconds),
    postgresServerMsPerS: round(count.postgresServer / count.seconds),
    hostBySecond: bySecond,
    connections: count.connections.host as Window["connections"],
  };
}

async function main() {
  const load = os.loadavg().map((x) => x.toFixed(2));
  log(
    `bench:idle on ${os.cpus()[0]?.model} x${os.cpus().length}, Node ${process.version}, load average ${load.join(" ")}`,
  );
  log(
    `${flags.requests} paid request(s), then ${flags.seconds} s idle from ${AFTER_PAID_MS / 1000} s after the last; stores ${flags.stores.join(", ")}`,
  );
  const closers: (() => Promise<unknown>)[] = [];
  const results: { store: DatabaseKind; fresh: Window; afterPaid: Window; paid: number }[] = [];
  try {
    const devnet = await startDevnet({ port: 0, buyers: 1, blockTime: 0 });
    closers.push(() => devnet.stop());
    const miner = startMiner(devnet, 5, "wall");
    closers.push(() => miner.stop());
    // The facilitator in this process, its ledger on PGlite: the server's backends are the host's alone.
    const ledger = await openTestDatabase("pglite");
    closers.push(ledger.close);
    const facilitator = await devnetFacilitator(devnet, ledger.db);
    closers.push(() => facilitator.close());
    const facilitatorServer = await listen(facilitator.app.fetch, "127.0.0.1", 0);
    closers.push(() => facilitatorServer.close());
    const buyer = privateKeyToAccount((devnet.buyers[0] as { privateKey: `0x${string}` }).privateKey);
    const paying = wrapFetchWithPayment(fetch, new x402Client().register(NETWORK, new ExactEvmClient(buyer)));

    for (const store of flags.stores) {
      log(`\n--- ${store}`);
      const state = await isolatedDatabaseOptions(store);
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        DATABASE_URL: state.databaseUrl ?? "",
        X402M_UTILITY_PAY_TO: newMerchant(),
        X402M_UTILITY_PORT: "0",
        // The operator's metrics listener, as a host runs it, on a free port.
        X402M_METRICS_PORT: "0",
        X402M_FACILITATOR_URL: facilitatorServer.url,
        X402M_RPC_URL: devnet.rpc,
      };
      const serve = await startServeChild(["utility"], env, state.dataDir);
      const host = { pid: serve.pid, url: serve.urls.utility, stop: () => serve.stop() };
      try {
        miner.pause();
        await sleep(AFTER_START_MS);
        const fresh = await idleWindow(host.pid);
        log(`fresh: host ${fresh.hostMsPerS} ms/s (by second: ${fresh.hostBySecond.join(" ")})`);
        miner.resume();
        let paid = 0;
        for (let i = 0; i < flags.requests; i++) {
          const response =
            i % 2 === 0
              ? await paying(`${host.url}/api/calc?expr=${encodeURIComponent(`2^${i}+1`)}`)
              : await paying(`${host.url}/api/scratchpad/write`, {
                  method: "POST",
                  headers: { "content-type": "application/json" },
                  body: JSON.stringify({ name: `idle-${i}`, content: "hello" }),
                });
          const body = await response.text();
          if (response.status !== 200 || !response.headers.get("payment-response"))
            throw new Error(`paid request ${i}: ${response.status} ${body.slice(0, 200)}`);
          paid++;
        }
        miner.pause();
        await sleep(AFTER_PAID_MS);
        const afterPaid = await idleWindow(host.pid);
        miner.resume();
        log(
          `after ${paid} paid: host ${afterPaid.hostMsPerS} ms/s (by second: ${afterPaid.hostBySecond.join(" ")})`,
        );
        results.push({ store, fresh, afterPaid, paid });
      } finally {
        await host.stop();
        await state.cleanup();
      }
    }
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  }

  log("");
  log(
    "| store | window | host CPU (ms/s) | its PostgreSQL backends (ms/s) | PostgreSQL server's own (ms/s) | connections open (start/end, most) | opened in window |",
  );
  log("|---|---|---|---|---|---|---|");
  for (const r of results) {
    for (const [name, w] of [
      ["fresh", r.fresh],
      [`after ${r.paid} paid`, r.afterPaid],
    ] as const) {
      const pg = r.store === "postgres";
      log(
        `| ${r.store} | ${name} | ${w.hostMsPerS} | ${pg ? w.backendsMsPerS : "(in the host)"} | ${pg ? w.postgresServerMsPerS : "-"} | ${pg ? `${w.connections.atStart}/${w.connections.atEnd}, ${w.connections.most}` : "-"} | ${pg ? w.connections.opened : "-"} |`,
      );
    }
  }
  const met = results.every((r) => r.afterPaid.hostMsPerS < GOAL_MS_PER_S);
  log(
    `\nhost CPU from ${AFTER_PAID_MS / 1000} s after the last paid request: ${results.map((r) => `${r.store} ${r.afterPaid.hostMsPerS} ms/s`).join(", ")}   goal < ${GOAL_MS_PER_S} ms/s: ${met ? "met" : "MISSED"}`,
  );
  log("not counted: the chain (anvil), the facilitator and the buyer (this process)");
  console.log(
    JSON.stringify({
      bench: "idle",
      date: new Date().toISOString(),
      machine: os.cpus()[0]?.model,
      cores: os.cpus().length,
      node: process.version,
      loadAverageAtStart: load.map(Number),
      flags,
      results,
      goalMsPerS: GOAL_MS_PER_S,
      met,
    }),
  );
  if (!met) process.exitCode = 1;
}

await main();
