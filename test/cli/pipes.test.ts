/**
 * A command's output reaches a pipe whole: every command that prints more than a pipe holds (64 KiB on
 * Linux), read by a reader slower than the writer, gives the same bytes as the command writes (caught in
 * this process, where no pipe can hold any back).
 * Before the CLI waited for its output to leave, it exited with the tail still queued in the process.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addr, checkpoint, END, ndjsonFile, payment, START } from "../helpers/data.ts";
import { runMain } from "../helpers/in-process.ts";

const BIN = path.resolve("bin/x402-merchants");
const PIPE_BYTES = 64 * 1024;
const env = () => ({ ...process.env, DATABASE_URL: "" });

let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-pipes-"));
  // 1,200 merchants paid in the window: the leaderboard's first page lists 1,000 of them.
  const records = [
    ...Array.from({ length: 1_200 }, (_, i) =>
      payment({
        payer: addr(`buyer${i % 50}`),
        payTo: addr(`merchant${i}`),
        amount: 10_000 + i,
        block: START + 10 + i,
      }),
    ),
    checkpoint(END),
  ];
  // Imported in this process (runMain): the pipes are the commands' below.
  const imported = await runMain(["import", ndjsonFile(records), "--data", path.join(dir, "data")]);
  expect(imported.code, imported.stderr).toBe(0);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/**
 * What the command writes, whole: its `main` run in this process, its output caught as written (no pipe to
 * fill). A child process writing to a file costs 2-3 CPU-s more for the same bytes; the pipes are below.
 */
async function written(args: readonly string[]): Promise<Buffer> {
  const run = await runMain(args);
  expect(run.code, run.stderr).toBe(0);
  return Buffer.from(run.stdout);
}

/**
 * What a reader that takes 4 KiB at a time, with a pause when nothing is there, gets of the command's
 * stdout: it waits half a second after the first bytes (the pipe full, the rest queued in the command),
 * then reads until the pipe closes.
 */
async function toSlowReader(args: readonly string[]): Promise<{ out: Buffer; code: number | null }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "inherit"], env: env() });
  const stdout = child.stdout;
  const chunks: Buffer[] = [];
  const ended = new Promise<void>((resolve) => stdout.once("end", resolve));
  // A 'readable' listener for the whole read: when the child exits, Node resumes (flows, and so drops)
  // the stdio of a parent that has none, and what was still in the pipe would be lost here, not there.
  let readable = () => {};
  stdout.on("readable", () => readable());
  // Nothing more is read until the writer has been refused by a full pipe for a while: its first bytes
  // are there, and the command has had time to write the rest into its queue and return.
  await new Promise<void>((resolve) => {
    readable = resolve;
  });
  readable = () => {};
  await new Promise((resolve) => setTimeout(resolve, 500));
  let done = false;
  void ended.then(() => {
    done = true;
  });
  while (!done) {
    const chunk = stdout.read(4096) ?? stdout.read();
    if (chunk) chunks.push(chunk);
    else await new Promise((resolve) => setTimeout(resolve, 2));
  }
  const code = child.exitCode ?? (await new Promise<number | null>((resolve) => child.once("exit", resolve)));
  return { out: Buffer.concat(chunks), code };
}

describe("output to a slow reader on a pipe", () => {
  const commands: [string, string[]][] = [
    ["social generate", ["social", "generate", "--tweets", "3000", "--seed", "11"]],
    ["leaderboard", ["leaderboard", "--data", "DATA"]],
  ];
  it.each(commands)("%s: the same bytes as it writes", async (_, raw) => {
    const args = raw.map((a) => (a === "DATA" ? path.join(dir, "data") : a));
    const expected = await written(args);
    expect(expected.length).toBeGreaterThan(PIPE_BYTES);
    const { out, code } = await toSlowReader(args);
    expect(code).toBe(0);
    expect(out.length).toBe(expected.length);
    expect(out.equals(expected)).toBe(true);
  });

  it("ends quietly with exit 0 when the reader stops early", async () => {
    const child = spawn(process.execPath, [BIN, "social", "generate", "--tweets", "20000"], {
      stdio: ["ignore", "pipe", "pipe"],
      env: env(),
    });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.stdout.once("data", () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(code).toBe(0);
    expect(stderr).toBe("");
  });
});
