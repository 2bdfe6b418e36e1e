import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { addr, checkpoint, ndjsonFile, payment } from "../helpers/data.ts";
import { runMain } from "../helpers/in-process.ts";
import { runCli } from "../helpers/process.ts";

const BIN = path.resolve("bin/x402-merchants");

const m = addr("cli-merchant");
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-cli-"));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
};
const ndjson = (records: readonly (object | string)[]) => {
  const file = ndjsonFile(records);
  onTestFinished(() => fs.rmSync(path.dirname(file), { recursive: true, force: true }));
  return file;
};

describe("command line", () => {
  // The commands that end on their own run in this process (runMain): a second or more less each than a
  // child process. What only a process shows (a closed pipe, a signal, the bundle) is run as one.
  it("imports, reports and ranks", async () => {
    const data = tempDir();
    const file = ndjson([payment({ payer: addr("a"), payTo: m, amount: 2_500_000 }), checkpoint()]);
    const imported = await runMain(["import", file, "--data", data]);
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ rows: 2, payment: { read: 1, added: 1 } });

    const report = await runMain([
      "report",
      m.toUpperCase().replace("0X", "0x"),
      "--data",
      data,
      "--public-url",
      "https://r.test/",
    ]);
    expect(report.code).toBe(0);
    expect(JSON.parse(report.stdout)).toMatchObject({
      address: m,
      usd: 2.5,
      page: `https://r.test/reports/base/${m}`,
    });

    const board = await runMain(["leaderboard"], { X402M_DATA: data });
    expect(JSON.parse(board.stdout).merchants[0]).toMatchObject({ rank: 1, address: m });
  });

  it("fails in one line with a non-zero exit and keeps nothing of a bad file", async () => {
    const data = tempDir();
    const file = ndjson([payment({ payer: addr("a"), payTo: m, amount: 1 }), '{"type":"payment"']);
    const bad = await runMain(["import", file, "--data", data]);
    expect(bad.code).toBe(1);
    expect(bad.stderr.startsWith(`x402-merchants: ${file}:2: not valid JSON`)).toBe(true);
    expect(bad.stderr.indexOf("\n")).toBe(bad.stderr.length - 1);
    const report = await runMain(["report", m, "--data", data]);
    expect(report.code).toBe(1);
    expect(report.stderr).toBe(
      "x402-merchants: the analytics database holds no Base data yet: import some or run the indexer\n",
    );
  });

  it("stops quietly when its reader closes early, as with | head", async () => {
    const data = tempDir();
    // A leaderboard of 3,000 merchants: far more than a pipe holds, so the writer meets the closed end.
    const records = Array.from({ length: 3_000 }, (_, i) =>
      payment({ payer: addr("a"), payTo: addr(`m${i}`), amount: 1_000_000 + i }),
    );
    // The store is made in this process: the closed pipe is the leaderboard's, below.
    expect((await runMain(["import", ndjson([...records, checkpoint()]), "--data", data])).code).toBe(0);
    const child = spawn(process.execPath, [BIN, "leaderboard", "--data", data]);
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdout.once("data", () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  });

  // Each refused before anything is opened (test/cli/usage.test.ts has the rest).
  it("rejects usage mistakes with exit code 2", async () => {
    expect((await runMain(["frobnicate"])).code).toBe(2);
    expect(await runMain(["report", m, "--end-block", "soon"])).toMatchObject({
      code: 2,
      stderr: 'x402-merchants: --end-block must be a block number, not "soon"\n',
    });
    expect(await runMain(["import"])).toMatchObject({
      code: 2,
      stderr: "x402-merchants: import takes exactly one FILE.ndjson\n",
    });
    expect(await runMain(["report", m, "--bogus"])).toMatchObject({
      code: 2,
      stderr: "x402-merchants: unknown flag --bogus for report (x402-merchants report --help)\n",
    });
    expect(await runMain(["report", "0x1234"])).toMatchObject({
      code: 2,
      stderr:
        'x402-merchants: "0x1234" is not an address: 0x followed by 40 hex digits, or a base58 public key (Solana)\n',
    });
    expect(await runMain(["leaderboard", "--page", "0"])).toMatchObject({
      code: 2,
      stderr: 'x402-merchants: --page must be a page number from 1, not "0"\n',
    });
    // A setting the environment gets wrong is a usage mistake too.
    expect(await runMain(["leaderboard"], { PORT: "http" })).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^x402-merchants: invalid --port \/ PORT: /),
    });
  });

  it("prints its version from the bundle as from the sources: package.json's", async () => {
    const { version } = JSON.parse(fs.readFileSync("package.json", "utf8")) as { version: string };
    // The bundle lies in node_modules/.cache: what it reads beside its sources must still be found.
    expect(await runCli(["--version"])).toEqual({
      code: 0,
      stdout: `x402-merchants ${version}\n`,
      stderr: "",
    });
  });

  it("serves, prints its URL as one JSON line, and stops on SIGTERM", async () => {
    const data = tempDir();
    const imported = await runMain([
      "import",
      ndjson([payment({ payer: addr("a"), payTo: m, amount: 1_000_000 }), checkpoint()]),
      "--data",
      data,
    ]);
    expect(imported.code, imported.stderr).toBe(0);
    const child = spawn(process.execPath, [BIN, "serve", "--port", "0", "--data", data], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, DATABASE_URL: "", X402M_METRICS_PORT: "0" },
    });
    // A failed expectation must not leave the server running.
    onTestFinished(() => {
      if (child.exitCode === null) child.kill("SIGKILL");
    });
    const line = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("\n")) resolve(out.split("\n")[0] ?? "");
      });
      child.once("exit", (code) => reject(new Error(`exited with ${code}`)));
    });
    const { reports } = JSON.parse(line) as { reports: string };
    expect(reports).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${reports}/v1/reports/base/${m}`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { page: string }).page).toBe(`${reports}/reports/base/${m}`);
    const exit = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    expect(await exit).toBe(0);
  });
});
