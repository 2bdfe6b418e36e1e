/**
 * Issue 15, "readers never wait on the writer": `report` and `leaderboard` beside another process that
 * holds the analytics database (DuckDB allows one per file), for real: child processes of the CLI, a
 * `serve` child, and a bare holder that stands for `index` or another `report`. What the readers print
 * alone, with nothing holding the store, is read in this process (runMain): a child process each would
 * cost a CPU-second more. So is most of what they print beside a holder: the holder is another process
 * all the same (DuckDB's lock is the process's), and the reader in this process meets it as a child would;
 * a reader's own process is kept where its exit code and output are the point (one success and one
 * failure through the service, one of the two reports waiting at once).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { listen } from "../../src/common/listen.ts";
import { writeServiceRecord } from "../../src/config/service-record.ts";
import { addr, checkpoint, END, ndjsonFile, payment, repeat } from "../helpers/data.ts";
import { holdAnalytics } from "../helpers/hold.ts";
import { runMain } from "../helpers/in-process.ts";
import { eventually, runCli, startCli } from "../helpers/process.ts";

const m1 = addr("readers-m1");
const m2 = addr("readers-m2");

/** A data directory with two merchants' payments, imported. */
async function imported(): Promise<string> {
  const data = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-readers-"));
  const records = [
    ...[1, 2, 3, 4, 5].map((i) => payment({ payer: addr(`buyer${i}`), payTo: m1, amount: 1_250_000 * i })),
    ...[1, 2, 3].map((i) => payment({ payer: addr(`buyer${i}`), payTo: m2, amount: 700_000 })),
    // A farm, so that m2's evidence has a flagged wallet to show.
    ...repeat(12, { payer: addr("readers-farm"), payTo: m2, amount: 100 }, END - 5_000, END - 100),
    checkpoint(),
  ];
  expect((await runMain(["import", ndjsonFile(records), "--data", data])).code).toBe(0);
  return data;
}

/** The store, imported once; each test reads a copy of its own (what a test's processes write stays its own). */
let original: string;
beforeAll(async () => {
  original = await imported();
});
afterAll(() => fs.rmSync(original, { recursive: true, force: true }));

function store(): string {
  const data = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-readers-"));
  onTestFinished(() => fs.rmSync(data, { recursive: true, force: true }));
  fs.cpSync(original, data, { recursive: true });
  return data;
}

/** What the readers print, for commands that succeed and commands that fail. */
const READS = [
  ["report", m1],
  ["report", m2, "--end-block", String(END - 10)],
  ["leaderboard"],
  ["report", addr("nobody")],
  ["leaderboard", "--end-block", String(END + 1)],
  ["leaderboard", "--page", "2"],
  ["report", m2, "--evidence"],
  // Another chain's, of which the store holds nothing: the same refusal, read here or through the service.
  ["leaderboard", "--chain", "polygon"],
] as const;

/** The READS run by a child process beside the service (the others in this process): a success, a failure. */
const AS_CHILD = new Set([3, 6]);

async function readAll(data: string, run: (i: number) => typeof runCli) {
  const out = [];
  for (const [i, args] of READS.entries()) out.push(await run(i)([...args, "--data", data]));
  return out;
}

describe("readers beside a process that holds the store", () => {
  it("ask the running report service and print exactly what they print without it", async () => {
    const data = store();
    const alone = await readAll(data, () => runMain);
    expect(alone.map((r) => r.code)).toEqual([0, 0, 0, 1, 1, 1, 0, 1]);
    expect(alone[7]?.stderr).toMatch(/no Polygon PoS data yet/);
    expect(alone[5]?.stderr).toMatch(/has 1 page of 1000, not 2\n$/);
    const evidence = JSON.parse(alone[6]?.stdout ?? "") as { flags: { kind: string; wallets: unknown[] }[] };
    expect(evidence.flags.map((f) => [f.kind, f.wallets.length])).toEqual([["tiny_repeat", 1]]);
    expect(alone[3]?.stderr).toMatch(/^x402-merchants: no merchant 0x[0-9a-f]{40} is known on Base\n$/);

    const serve = startCli(["serve", "--port", "0", "--data", data]);
    const { reports } = JSON.parse(await serve.line) as { reports: string };
    expect(JSON.parse(fs.readFileSync(path.join(data, "report-service.json"), "utf8"))).toMatchObject({
      pid: serve.child.pid,
      url: reports,
    });
    // The server holds the database: each reader below could only have asked it.
    const beside = await readAll(data, (i) => (AS_CHILD.has(i) ? runCli : runMain));
    expect(beside).toEqual(alone);

    serve.child.kill("SIGTERM");
    expect(await serve.exited).toBe(0);
    expect(fs.existsSync(path.join(data, "report-service.json"))).toBe(false);
  }, 120_000);

  it("wait for another command that holds it, so two reports at once both succeed", async () => {
    const data = store();
    const expected = (await runMain(["report", m1, "--data", data])).stdout;
    const holder = await holdAnalytics(data);
    // One a process of its own, the other in this process (what it writes watched as it waits): two commands
    // all the same, each meeting the holder's lock, and a second child would cost 2-3 CPU-s more.
    const first = startCli(["report", m1, "--data", data]);
    let secondSoFar = "";
    const second = runMain(["report", m1, "--data", data], {}, { stderr: (soFar) => (secondSoFar = soFar) });
    // Both have met the held database and are waiting for it.
    const waiting = (stderr: string) => stderr.includes(`in use by PID ${holder.pid}`);
    expect(await eventually(() => waiting(first.stderr()) && waiting(secondSoFar), 20_000)).toBe(true);
    await holder.release();
    const stdout = async (run: typeof first) => {
      let out = "";
      run.child.stdout?.on("data", (chunk: Buffer) => {
        out += chunk.toString();
      });
      expect(await run.exited).toBe(0);
      return out;
    };
    const inProcess = async () => {
      const { code, stdout } = await second;
      expect(code).toBe(0);
      return stdout;
    };
    expect(await Promise.all([stdout(first), inProcess()])).toEqual([expected, expected]);
  }, 120_000);

  it("say in one line who holds it and what to do when it stays held", async () => {
    const data = store();
    const holder = await holdAnalytics(data);
    const started = Date.now();
    // In this process, as the next test's refusals: what is checked is the words, the exit code and the wait,
    // which `main` gives alike; the other process it meets is the holder (a child of its own cost 2-3 CPU-s).
    const result = await runMain(["leaderboard", "--data", data, "--wait", "0.5"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr.split("\n")).toEqual([
      `x402-merchants: the analytics database in ${data} is still in use by PID ${holder.pid} (${process.execPath}) after 0.5 s: stop that process, or run \`x402-merchants serve\` on this data directory instead (with --rpc it indexes too), and report and leaderboard will ask it; --wait SECONDS waits longer`,
      "",
    ]);
    // It waited, and no longer than asked (and a command's start).
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    expect((await runMain(["report", m1, "--data", data, "--wait", "soon"])).code).toBe(2);
  }, 120_000);

  it("ignore a record that is not the holder's, and pass the holder's service errors through", async () => {
    const data = store();
    const holder = await holdAnalytics(data);
    // A report service that fails every request as the real one does: a JSON error with its status.
    let status = 400;
    const fake = await listen(
      (request) =>
        new URL(request.url).pathname === "/healthz"
          ? Response.json({ ok: true })
          : Response.json({ error: { code: "bad_end_block", message: "end_block is wrong" } }, { status }),
      "127.0.0.1",
      0,
    );
    onTestFinished(() => fake.close());
    const record = { url: fake.url, public_url: fake.url, started_at: new Date().toISOString() };

    // A live process that is not the holder (this one): not the service of this store.
    writeServiceRecord(data, { ...record, pid: process.pid });
    const ignored = await runMain(["report", m1, "--data", data, "--wait", "0"]);
    expect(ignored.code).toBe(1);
    expect(ignored.stderr).toMatch(/still in use by PID \d+ .* after 0 s: stop that process/);

    writeServiceRecord(data, { ...record, pid: holder.pid });
    expect(await runMain(["report", m1, "--data", data, "--wait", "0"])).toEqual({
      code: 2,
      stdout: "",
      stderr: "x402-merchants: end_block is wrong\n",
    });
    status = 404;
    expect(await runMain(["leaderboard", "--data", data, "--wait", "0"])).toEqual({
      code: 1,
      stdout: "",
      stderr: "x402-merchants: end_block is wrong\n",
    });

    // The holder's service, silent (starting, stopping): waited for like any holder, and said so.
    await fake.close();
    const silent = await runMain(["report", m1, "--data", data, "--wait", "0"]);
    expect(silent.code).toBe(1);
    expect(silent.stderr).toContain(`and its report service at ${fake.url} does not answer`);
  }, 120_000);
});
