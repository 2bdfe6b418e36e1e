/**
 * The demo's first start (`npm run bench:start [-- --days N --no-demo --chains N --solana N]`), issue 41 §9:
 * `npm start` on a fresh data directory ready in under 5 minutes on two cores, with every pattern, both schemes
 * and all merchants. With `--chains N` (issue 67 item 7: the first start must not grow with the second chain),
 * only the demo: N fresh starts of Base alone (`--chain base`) and N of Base and Arbitrum (`--chain
 * base,arbitrum`), taken in turn, their medians and the ratio. With `--solana N` (issue 86: no more than 15%
 * with Solana beside the EVM chains), the same with N of Base and Arbitrum against N of Base, Arbitrum and Solana
 * (the default).
 *
 * 1. **The chain**: empty blocks a second on the devnet with state roots (anvil as it is) and without
 *    (forked from an empty chain: src/chain/devnet/forked.ts), over 0, 1,000 and 4,000 storage slots, in
 *    the same run, and what the week's 302,400 blocks would take at that rate. anvil 1.7.1 rehashes its
 *    whole state for every block; a payment leaves at least one slot.
 * 2. **The demo**: `bin/x402-merchants demo` as `npm start` runs it (every port free, a new data
 *    directory), seconds until its ready line, its payments and failures, the machine's busy CPU; then
 *    Ctrl-C and a second start, which resumes the saved chain.
 *
 * One JSON line on stdout; progress and a table on stderr. Linux only (CPU from /proc).
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { createTestClient, http, pad, toHex } from "viem";
import { devnetChain, startDevnet } from "../src/chain/devnet/index.ts";
import { setLogLevel } from "../src/common/log.ts";
import { machineBusyMs } from "./cpu.ts";

const CLI = path.resolve(import.meta.dirname, "..", "bin", "x402-merchants");
const WEEK_BLOCKS = 302_400;
const SLOTS = [0, 1_000, 4_000];
/** Where the slots are written: any address does, anvil hashes every account's storage. */
const SCRATCH = "0x0000000000000000000000000000000000000bee";
const FREE_PORTS = Object.fromEntries(
  [
    "X402M_DEVNET_PORT",
    "X402M_DEVNET_ARBITRUM_PORT",
    "X402M_DEVNET_SOLANA_PORT",
    "X402M_FACILITATOR_PORT",
    "PORT",
    "X402M_UTILITY_PORT",
    "X402M_UTILITY_ALIAS_PORT",
    "X402M_INFERENCE_PORT",
    "X402M_SOCIAL_PORT",
    "X402M_SOCIAL_PROXY_PORT",
    "X402M_SHOPS_PORT",
    "X402M_METRICS_PORT",
  ].map((name) => [name, "0"]),
);

const { values } = parseArgs({
  options: {
    days: { type: "string", default: "7" },
    "no-demo": { type: "boolean", default: false },
    chains: { type: "string" },
    solana: { type: "string" },
  },
});
setLogLevel("warn");
const note = (line: string) => process.stderr.write(`${line}\n`);

/** Empty blocks a second over `slots` storage slots, on a devnet with or without state roots. */
async function blocksPerSecond(slots: number, stateRoots: boolean): Promise<number> {
  const devnet = await startDevnet({
    port: 0,
    buyers: 0,
    blockTime: 0,
    hardfork: "cancun",
    pruneHistory: 0,
    stateRoots,
  });
  try {
    const test = createTestClient({
      chain: devnetChain(devnet.rpc),
      mode: "anvil",
      transport: http(devnet.rpc),
    });
    for (let i = 0; i < slots; i += 200) {
      await Promise.all(
        Array.from({ length: Math.min(200, slots - i) }, (_, k) =>
          test.setStorageAt({ address: SCRATCH, index: pad(toHex(i + k + 1)), value: pad(toHex(1)) }),
        ),
      );
    }
    // About two seconds of mining at the rate each kind reaches.
    let blocks = 200;
    for (;;) {
      const started = performance.now();
      await devnet.mine(blocks);
      const seconds = (performance.now() - started) / 1000;
      if (seconds > 1.5 || blocks >= 200_000) return Math.round(blocks / seconds);
      blocks = Math.min(200_000, Math.ceil((blocks * 2) / Math.max(seconds, 0.05)));
    }
  } finally {
    await devnet.stop();
  }
}

interface DemoRun {
  readySeconds: number;
  busyCpuSeconds: number;
  payments: number;
  failures: number;
}

/** Starts the demo on `dataDir` and resolves once it printed its ready line; the child keeps running. */
function startDemo(
  dataDir: string,
  days: string,
  extra: readonly string[] = [],
): Promise<{ child: ChildProcess; run: DemoRun }> {
  const busy = machineBusyMs();
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [CLI, "demo", "--json", "--days", days, "--data", dataDir, ...extra],
    {
      env: { ...process.env, ...FREE_PORTS, DATABASE_URL: "" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let progress = { payments: 0, failures: 0 };
  let tail = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-4_000);
    for (const match of chunk.toString().matchAll(/"payments":(\d+),"failures":(\d+)/g)) {
      progress = { payments: Number(match[1]), failures: Number(match[2]) };
    }
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (!out.includes("\n")) return;
      resolve({
        child,
        run: {
          readySeconds: Math.round((performance.now() - started) / 100) / 10,
          busyCpuSeconds: Math.round((machineBusyMs() - busy) / 100) / 10,
          ...progress,
        },
      });
    });
    child.once("exit", (code) =>
      reject(new Error(`the demo exited (${code}) before it was ready:\n${tail}`)),
    );
  });
}

function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGINT");
  return exited;
}

/** Two sets of chains compared: each one's `--chain` and its name in the notes. */
interface Compared {
  base: { chain: string; name: string };
  both: { chain: string; name: string };
}

const EVM_ALONE = {
  base: { chain: "base", name: "Base alone" },
  both: { chain: "base,arbitrum", name: "Base and Arbitrum" },
};
const WITH_SOLANA = {
  base: { chain: "base,arbitrum", name: "Base and Arbitrum" },
  both: { chain: "base,arbitrum,solana", name: "Base, Arbitrum and Solana" },
};

/** N fresh starts each of the two sets of chains, in turn: the seconds to ready of each. */
async function compareChains(rounds: number, days: string, compared: Compared) {
  const runs: Record<"base" | "both", DemoRun[]> = { base: [], both: [] };
  for (let i = 0; i < rounds; i++) {
    for (const kind of ["base", "both"] as const) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-bench-start-"));
      try {
        const { child, run } = await startDemo(dataDir, days, ["--chain", compared[kind].chain]);
        await stop(child);
        runs[kind].push(run);
        note(
          `round ${i + 1}, ${compared[kind].name}: ready in ${run.readySeconds} s (${run.payments} payments on Base, machine busy ${run.busyCpuSeconds} CPU-s, load ${os.loadavg()[0]?.toFixed(1)})`,
        );
      } finally {
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    }
  }
  const median = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1
      ? (sorted[mid] as number)
      : Math.round((((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2) * 10) / 10;
  };
  const base = median(runs.base.map((r) => r.readySeconds));
  const both = median(runs.both.map((r) => r.readySeconds));
  note(
    `median ready: ${compared.base.name} ${base} s, ${compared.both.name} ${both} s (${(both / base).toFixed(2)}x)`,
  );
  return {
    compared: { base: compared.base.chain, both: compared.both.chain },
    runs,
    medianSeconds: { base, both },
    ratio: Math.round((both / base) * 100) / 100,
  };
}

for (const [flag, compared] of [
  ["chains", EVM_ALONE],
  ["solana", WITH_SOLANA],
] as const) {
  if (values[flag] === undefined) continue;
  const result = await compareChains(Number(values[flag]), values.days, compared);
  process.stdout.write(
    `${JSON.stringify({ date: new Date().toISOString(), cpus: os.cpus().length, cpu: os.cpus()[0]?.model, node: process.version, days: Number(values.days), [flag]: result })}\n`,
  );
  process.exit(0);
}

const chain: { slots: number; withRoots: number; without: number; ratio: number; weekSeconds: number[] }[] =
  [];
for (const slots of SLOTS) {
  const withRoots = await blocksPerSecond(slots, true);
  const without = await blocksPerSecond(slots, false);
  const row = {
    slots,
    withRoots,
    without,
    ratio: Math.round((without / withRoots) * 10) / 10,
    weekSeconds: [withRoots, without].map((rate) => Math.round((WEEK_BLOCKS / rate) * 10) / 10),
  };
  chain.push(row);
  note(
    `${String(slots).padStart(5)} slots: ${withRoots} blocks/s with state roots, ${without} without (${row.ratio}x); a week: ${row.weekSeconds[0]} s against ${row.weekSeconds[1]} s`,
  );
}

let demo: { first: DemoRun; resumed: DemoRun } | undefined;
if (!values["no-demo"]) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-bench-start-"));
  try {
    const first = await startDemo(dataDir, values.days);
    note(
      `demo --days ${values.days}, fresh: ready in ${first.run.readySeconds} s (${first.run.payments} payments, ${first.run.failures} failed; machine busy ${first.run.busyCpuSeconds} CPU-s)`,
    );
    await stop(first.child);
    const resumed = await startDemo(dataDir, values.days);
    note(`demo, resumed: ready in ${resumed.run.readySeconds} s`);
    await stop(resumed.child);
    demo = { first: first.run, resumed: resumed.run };
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

process.stdout.write(
  `${JSON.stringify({ date: new Date().toISOString(), cpus: os.cpus().length, cpu: os.cpus()[0]?.model, node: process.version, days: Number(values.days), chain, demo })}\n`,
);
