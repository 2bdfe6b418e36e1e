/**
 * `demo` on a data directory holding a week it cannot resume: it stops with one line naming the file, and
 * leaves every file as it was; `--fresh` deletes the demo's own week, never a store that is not the demo's.
 *
 * The devnet's port is held by the test, so a demo that went on past its decision fails within seconds at
 * anvil (after deleting whatever it was going to delete) instead of playing a week.
 *
 * A refusal decided from the data directory's files, before anything starts (src/demo/resume.ts's
 * prepareStart), and a usage mistake run in this process (runMain): a child process each cost 1.5-2
 * CPU-seconds. What gets past that decision (loading the saved chain, --fresh deleting the week) runs as a
 * process, with its exit code and stderr.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it, onTestFinished } from "vitest";
import { Analytics } from "../../src/analytics/duckdb.ts";
import { dataLayout } from "../../src/config/layout.ts";
import { DEFAULT_MIX } from "../../src/demo/mix.ts";
import { appendTruth, writeTruthComplete } from "../../src/demo/truth.ts";
import { addr, ndjsonFile, payment } from "../helpers/data.ts";
import { runMain } from "../helpers/in-process.ts";
import { startCli } from "../helpers/process.ts";

/** A port something listens on, for the test's length. */
async function busyPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as net.AddressInfo).port;
}

async function env(): Promise<Record<string, string>> {
  return {
    X402M_DEVNET_PORT: String(await busyPort()),
    X402M_DEVNET_ARBITRUM_PORT: "0",
    X402M_DEVNET_SOLANA_PORT: "0",
    X402M_FACILITATOR_PORT: "0",
    PORT: "0",
    X402M_UTILITY_PORT: "0",
    X402M_UTILITY_ALIAS_PORT: "0",
    X402M_INFERENCE_PORT: "0",
    X402M_SOCIAL_PORT: "0",
    X402M_SOCIAL_PROXY_PORT: "0",
    X402M_SHOPS_PORT: "0",
  };
}

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-demo-cli-"));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A week as the demo leaves it: its store, world, saved chain and ground truth. */
async function demoWeek(world: string): Promise<string> {
  const dir = tempDir();
  const { demo } = dataLayout(dir);
  const analytics = await Analytics.open({ dataDir: dir });
  await analytics.run("INSERT INTO meta VALUES ('demo', 'true')");
  analytics.close();
  fs.mkdirSync(demo.chain, { recursive: true });
  fs.writeFileSync(demo.world, world);
  // A save cut short: the demo must get as far as loading it to find out.
  fs.writeFileSync(
    path.join(demo.chain, "state.json.gz"),
    gzipSync('{"block":{"number":"0x4b0"}}\n').subarray(0, 20),
  );
  appendTruth(demo.truth, [
    {
      tx_hash: `0x${"1".repeat(64)}`,
      block_number: 1_100,
      payer: addr("buyer"),
      pay_to: addr("merchant"),
      amount: "1000",
      behaviour: "agent",
      merchant: "m",
      endpoint: "GET /x",
    },
  ]);
  writeTruthComplete(demo.truthComplete, 1_200);
  return dir;
}

/** Every file under `dir` and its SHA-256. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    out[path.relative(dir, file)] = createHash("sha256").update(fs.readFileSync(file)).digest("hex");
  }
  return out;
}

const WORLD = `${JSON.stringify({ version: 1, genesisTime: 1_700_000_000, epoch: 1_700_001_200, mix: DEFAULT_MIX }, null, 2)}\n`;

describe("demo on a week it cannot resume", () => {
  it("stops at a torn world.json with one line naming it, and every file stays byte for byte", async () => {
    const dir = await demoWeek(WORLD.slice(0, 40));
    const before = snapshot(dir);
    expect(Object.keys(before).sort()).toEqual([
      "analytics.duckdb",
      "demo/chain/state.json.gz",
      "demo/truth-complete.json",
      "demo/truth.ndjson",
      "demo/world.json",
    ]);
    const run = await runMain(["demo", "--data", dir], await env());
    expect(run.code).toBe(1);
    const world = path.join(dir, "demo", "world.json");
    expect(run.stderr).toMatch(
      new RegExp(
        `^x402-merchants: ${world} is not JSON \\(.+\\), so the demo cannot resume its week: restore it, or start afresh with --fresh \\(npm start -- --fresh\\), which deletes ${path.join(dir, "demo")} and ${path.join(dir, "analytics.duckdb")}\\n$`,
      ),
    );
    expect(snapshot(dir)).toEqual(before);
  }, 60_000);

  it("stops at a world of another version, and at a world whose chain is missing", async () => {
    const dir = await demoWeek(WORLD.replace('"version": 1', '"version": 2'));
    const before = snapshot(dir);
    const other = await runMain(["demo", "--data", dir], await env());
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/world\.json is of version 2, not 1, the one this x402-merchants reads/);
    expect(snapshot(dir)).toEqual(before);

    fs.writeFileSync(path.join(dir, "demo", "world.json"), WORLD);
    fs.rmSync(path.join(dir, "demo", "chain", "state.json.gz"));
    const withoutChain = snapshot(dir);
    const missing = await runMain(["demo", "--data", dir], await env());
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /chain\/state\.json\.gz is missing, so the week .*world\.json describes cannot resume/,
    );
    expect(snapshot(dir)).toEqual(withoutChain);
  }, 60_000);

  it("stops at a world that played on Arbitrum whose Arbitrum chain is missing, naming it", async () => {
    const world = JSON.parse(WORLD) as Record<string, unknown>;
    const dir = await demoWeek(`${JSON.stringify({ ...world, chains: ["arbitrum"] }, null, 2)}\n`);
    // It played there: its ground truth is there (without it, the chain would start afresh beside Base).
    const arbitrum = dataLayout(dir).demo.further("arbitrum");
    fs.mkdirSync(arbitrum.dir, { recursive: true });
    fs.writeFileSync(arbitrum.truth, "");
    const before = snapshot(dir);
    const { code, stderr } = await runMain(["demo", "--data", dir], await env());
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /demo\/arbitrum\/chain\/state\.json\.gz is missing, so the week .*world\.json describes cannot resume on arbitrum/,
    );
    expect(snapshot(dir)).toEqual(before);
  }, 60_000);

  it("stops at a saved chain that does not load, naming it, and every file stays byte for byte", async () => {
    const dir = await demoWeek(WORLD);
    const before = snapshot(dir);
    const run = startCli(["demo", "--data", dir], { ...(await env()), X402M_DEVNET_PORT: "0" });
    expect(await run.exited).toBe(1);
    const chain = path.join(dir, "demo", "chain", "state.json.gz");
    expect(run.stderr()).toMatch(
      new RegExp(
        `^x402-merchants: cannot load the saved chain ${chain}: .+: restore it, or start afresh with --fresh \\(npm start -- --fresh\\), which deletes the week\\n$`,
      ),
    );
    expect(snapshot(dir)).toEqual(before);
  }, 60_000);

  it("stops beside a running demo or serve on the same directory", async () => {
    const dir = await demoWeek(WORLD);
    fs.writeFileSync(
      dataLayout(dir).reportService,
      JSON.stringify({ pid: process.pid, url: "http://127.0.0.1:1", public_url: "http://127.0.0.1:1" }),
    );
    const before = snapshot(dir);
    // Resuming would rewrite its ground truth under it; --fresh would delete its week.
    for (const fresh of [[], ["--fresh"]]) {
      const run = await runMain(["demo", ...fresh, "--data", dir], await env());
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        `x402-merchants: ${dir} is in use by a running demo or serve (PID ${process.pid}, http://127.0.0.1:1): stop it first\n`,
      );
      expect(snapshot(dir)).toEqual(before);
    }
  }, 60_000);

  it("with --fresh, deletes the demo's week and starts afresh", async () => {
    const dir = await demoWeek(WORLD.slice(0, 40));
    const run = startCli(["demo", "--fresh", "--data", dir], await env());
    expect(await run.exited).toBe(1);
    expect(run.stderr()).toContain(
      `x402-merchants demo: --fresh: deleted ${path.join(dir, "demo")} and ${path.join(dir, "analytics.duckdb")}\n`,
    );
    // Past the decision: the chain's port is the test's.
    expect(run.stderr()).toMatch(/the devnet's port \d+ is in use/);
    expect(snapshot(dir)).toEqual({});
  }, 60_000);

  it("with --fresh, still refuses an analytics database that is not the demo's", async () => {
    const dir = tempDir();
    const file = ndjsonFile([payment({ payer: addr("a"), payTo: addr("m"), amount: 1_000 })]);
    expect((await runMain(["import", file, "--data", dir])).code).toBe(0);
    fs.mkdirSync(path.join(dir, "demo"));
    fs.writeFileSync(path.join(dir, "demo", "world.json"), WORLD);
    const run = await runMain(["demo", "--fresh", "--data", dir], await env());
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `x402-merchants: ${dir} holds an analytics database that is not the demo's: give the demo its own directory (--data DIR or X402M_DATA)\n`,
    );
    expect(fs.existsSync(path.join(dir, "analytics.duckdb"))).toBe(true);
    expect(fs.readFileSync(path.join(dir, "demo", "world.json"), "utf8")).toBe(WORLD);
  }, 60_000);

  it("refuses a --chain without base, or naming a chain it does not play, before anything starts", async () => {
    const dir = tempDir();
    const alone = await runMain(["demo", "--chain", "arbitrum", "--data", dir]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toBe(
      `x402-merchants: --chain must list base, which the demo always plays (base, or base,arbitrum,solana), not "arbitrum"\n`,
    );
    const polygon = await runMain(["demo", "--chain", "base,polygon", "--data", dir], await env());
    expect(polygon.code).toBe(1);
    expect(polygon.stderr).toMatch(/the demo plays Base and arbitrum, solana, not polygon/);
    expect(fs.readdirSync(dir)).toEqual([]);
  }, 60_000);

  it("refuses --days outside 1 to 7 or not whole, before anything starts", async () => {
    for (const days of ["8", "1.5"]) {
      const dir = tempDir();
      const { code, stderr } = await runMain(["demo", "--days", days, "--data", dir]);
      expect(code).toBe(2);
      expect(stderr).toBe(
        `x402-merchants: --days must be a whole number of days from 1 to 7, not "${days}"\n`,
      );
      expect(fs.readdirSync(dir)).toEqual([]);
    }
  }, 60_000);
});
