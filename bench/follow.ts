/**
 * Following the head (`npm run bench:follow [-- --blocks N --per-block N --block-ms N --reorg-depth N]`,
 * issue 20): how long after a block arrives its payments are in the reports a reader gets.
 *
 * A devnet mines one block every `--block-ms` (2,000: Base's interval) with `--per-block` x402
 * settlements in it (4), signed here and sent just before the block is mined. `x402-merchants serve
 * --only reports --rpc ...` follows the chain in its own process, as an operator runs it, with
 * `--reorg-depth` (3) and `--poll-ms` (the indexer's head polling, 250). A reader polls the merchant's
 * report every 50 ms. A block's lag is the time from its mining (anvil answered `anvil_mine`) to the
 * first report that counts every payment up to and including it.
 *
 * A block can be indexed only once `reorg-depth` more blocks have been mined on top of it, so the lag
 * has a floor of depth x interval. Goal: p50 and p99 under one block interval plus that wait.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type Address, getAddress } from "viem";
import { derive } from "../src/chain/devnet/index.ts";
import { GENESIS, startTestDevnet } from "../test/helpers/indexer.ts";
import { type PaymentOrder, rpc, Settler } from "../test/helpers/settle.ts";

const BIN = path.resolve(import.meta.dirname, "../bin/x402-merchants");
const log = (message: string) => process.stderr.write(`${message}\n`);

function parseFlags(argv: string[]) {
  const flags = { blocks: 60, "per-block": 4, "block-ms": 2_000, "reorg-depth": 3, "poll-ms": 250 };
  for (let i = 0; i < argv.length; i++) {
    const key = (argv[i] ?? "").replace(/^--/, "") as keyof typeof flags;
    const value = Number(argv[++i]);
    if (!(key in flags)) throw new Error(`unknown flag ${argv[i - 1]}: use ${Object.keys(flags).join(", ")}`);
    if (!Number.isSafeInteger(value) || value < 0) throw new Error(`bad value for --${key}: ${argv[i]}`);
    flags[key] = value;
  }
  return flags;
}

const flags = parseFlags(process.argv.slice(2));
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;

/** `serve` following the devnet; resolves with the report service's URL once it listens. */
function startServe(rpcUrl: string, facilitator: Address, dataDir: string) {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      BIN,
      "serve",
      "--only",
      "reports",
      "--port",
      "0",
      "--data",
      dataDir,
      "--rpc",
      rpcUrl,
      "--facilitator",
      facilitator,
      "--from-block",
      String(GENESIS),
      "--reorg-depth",
      String(flags["reorg-depth"]),
      "--poll-ms",
      String(flags["poll-ms"]),
    ],
    { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, DATABASE_URL: "" } },
  );
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-5_000);
  });
  const ready = new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
      if (out.includes("\n"))
        resolve((JSON.parse(out.split("\n")[0] as string) as { reports: string }).reports);
    });
    child.once("exit", (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  };
  return { ready, stop, pid: child.pid as number };
}

async function main() {
  log(
    `bench:follow on ${os.cpus()[0]?.model} x${os.cpus().length}, Node ${process.version}: ${flags.blocks} blocks of ${flags["per-block"]} settlements, one every ${flags["block-ms"]} ms, reorg depth ${flags["reorg-depth"]}, indexer polls every ${flags["poll-ms"]} ms`,
  );
  const devnet = await startTestDevnet({ buyers: 8 });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-follow-"));
  const serve = startServe(devnet.rpc, devnet.facilitatorAccount.address, dataDir);
  try {
    const reports = await serve.ready;
    const merchant = getAddress(derive(40_000).address);
    const settler = new Settler(devnet, devnet.facilitatorAccount);
    const orders = (n: number): PaymentOrder[] =>
      Array.from({ length: n }, (_, i) => ({
        buyer: devnet.buyers[i % devnet.buyers.length] as PaymentOrder["buyer"],
        payTo: merchant,
        amount: 1_000n,
      }));

    // The reader: the merchant's report, every 50 ms, noting when each count of payments first shows.
    const seen = new Map<number, number>();
    let reading = true;
    let reads = 0;
    const reader = (async () => {
      while (reading) {
        const response = await fetch(`${reports}/v1/reports/base/${merchant.toLowerCase()}`).catch(
          () => undefined,
        );
        reads++;
        if (response?.ok) {
          const tx = ((await response.json()) as { tx: number }).tx;
          if (!seen.has(tx)) seen.set(tx, performance.now());
        } else await response?.body?.cancel();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();

    // The chain: a block every interval, its settlements sent just before it is mined.
    const mined: { block: number; at: number; total: number }[] = [];
    let total = 0;
    const depth = flags["reorg-depth"];
    const start = performance.now();
    for (let i = 0; i < flags.blocks + depth + 1; i++) {
      const due = start + i * flags["block-ms"];
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
      // The last `depth` + 1 blocks carry nothing: they confirm the ones before.
      const settling = i < flags.blocks ? flags["per-block"] : 0;
      if (settling > 0) await settler.settle(orders(settling));
      await devnet.mine(1);
      const at = performance.now();
      total += settling;
      if (settling > 0) {
        mined.push({ block: Number(await rpc<string>(devnet.rpc, "eth_blockNumber")), at, total });
      }
    }
    // The last settled block shows after `depth` more blocks and the indexer's next poll.
    const deadline = performance.now() + 30_000 + depth * flags["block-ms"];
    while (!seen.has(total) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    reading = false;
    await reader;

    const lags: number[] = [];
    const missing: number[] = [];
    for (const m of mined) {
      // The first report counting at least this block's payments.
      let first = Number.POSITIVE_INFINITY;
      for (const [tx, t] of seen) if (tx >= m.total && t < first) first = t;
      if (Number.isFinite(first)) lags.push(first - m.at);
      else missing.push(m.block);
    }
    lags.sort((a, b) => a - b);
    const p50 = percentile(lags, 50);
    const p99 = percentile(lags, 99);
    const wait = depth * flags["block-ms"];
    const goal = flags["block-ms"] + wait;
    const met = (x: number) => (x < goal ? "met" : "MISSED");
    log(`blocks with payments ${mined.length}, payments ${total}, reports read ${reads}`);
    if (missing.length > 0) log(`NEVER SHOWN: blocks ${missing.join(", ")}`);
    log(
      `lag, block mined to its payments in the report: p50 ${Math.round(p50)} ms, p99 ${Math.round(p99)} ms, max ${Math.round(lags.at(-1) ?? Number.NaN)} ms`,
    );
    log(
      `  of which waiting for ${depth} confirming blocks: ${wait} ms; beyond it: p50 ${Math.round(p50 - wait)} ms, p99 ${Math.round(p99 - wait)} ms`,
    );
    log(`goal: under one block interval plus the reorg depth (${goal} ms): p50 ${met(p50)}, p99 ${met(p99)}`);
    console.log(
      JSON.stringify({
        bench: "follow",
        date: new Date().toISOString().slice(0, 10),
        machine: os.cpus()[0]?.model,
        cores: os.cpus().length,
        node: process.version,
        flags,
        blocks: mined.length,
        payments: total,
        reads,
        lagMs: { p50: Math.round(p50), p99: Math.round(p99), max: Math.round(lags.at(-1) ?? Number.NaN) },
        confirmationWaitMs: wait,
        goalMs: goal,
        neverShown: missing,
        met: { p50: p50 < goal, p99: p99 < goal && missing.length === 0 },
      }),
    );
  } finally {
    await serve.stop();
    await devnet.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
