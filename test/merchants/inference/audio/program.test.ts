import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { processAlive } from "../../../../src/common/process.ts";
import {
  findProgram,
  ProgramFailedError,
  ProgramMissingError,
  runProgram,
} from "../../../../src/merchants/inference/audio/program.ts";

const base = {
  name: "test program",
  maxOutputBytes: 1024 * 1024,
  timeoutMs: 10_000,
  install: "apt-get install -y test",
};

/** A program that writes its pid to a file, then sleeps: the test can see whether it was killed. */
async function sleeper(): Promise<{ args: string[]; pid: () => Promise<number>; done: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), "x402m-program-test-"));
  const file = path.join(dir, "pid");
  return {
    args: ["-c", `echo $$ > ${file}; exec sleep 30`],
    async pid() {
      for (let i = 0; i < 500; i++) {
        const text = await readFile(file, "utf8").catch(() => "");
        if (text.endsWith("\n")) return Number(text);
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error("the sleeper never started");
    },
    done: () => rm(dir, { recursive: true, force: true }),
  };
}

async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && processAlive(pid); i++) await new Promise((r) => setTimeout(r, 20));
  return !processAlive(pid);
}

describe("runProgram", () => {
  it("feeds standard input and returns standard output, standard error and the exit code", async () => {
    const result = await runProgram({
      ...base,
      command: "sh",
      args: ["-c", "tr a-z A-Z; echo oops >&2; exit 3"],
      input: new TextEncoder().encode("hello"),
    });
    expect(result.stdout.toString()).toBe("HELLO");
    expect(result.stderr).toBe("oops\n");
    expect(result.exitCode).toBe(3);
  });

  it("kills the program at its time limit: a 504 that is never charged", async () => {
    const program = await sleeper();
    try {
      const run = runProgram({ ...base, command: "sh", args: program.args, timeoutMs: 500 });
      const pid = await program.pid();
      const error = await run.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProgramFailedError);
      expect(error).toMatchObject({ status: 504, code: "engine_timeout" });
      expect((error as ProgramFailedError).publicMessage).toMatch(/took too long; nothing was charged/);
      expect(await gone(pid)).toBe(true);
    } finally {
      await program.done();
    }
  });

  it("kills the program when the caller aborts, and rejects with the signal's reason", async () => {
    const program = await sleeper();
    try {
      const controller = new AbortController();
      const run = runProgram({ ...base, command: "sh", args: program.args, signal: controller.signal });
      const pid = await program.pid();
      const reason = new Error("the caller left");
      controller.abort(reason);
      await expect(run).rejects.toBe(reason);
      expect(await gone(pid)).toBe(true);
      // Already aborted: nothing starts.
      await expect(
        runProgram({ ...base, command: "sh", args: program.args, signal: controller.signal }),
      ).rejects.toBe(reason);
    } finally {
      await program.done();
    }
  });

  it("stops a program that writes more than its cap", async () => {
    await expect(
      runProgram({ ...base, command: "head", args: ["-c", "5000000", "/dev/zero"], maxOutputBytes: 100_000 }),
    ).rejects.toMatchObject({ code: "engine_output_too_large", status: 502 });
  });

  it("answers 503 with the install command when the program is missing", async () => {
    const error = await runProgram({ ...base, command: "no-such-program-x402m", args: [] }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProgramMissingError);
    expect(error).toMatchObject({ status: 503, code: "engine_unavailable" });
    expect((error as Error).message).toMatch(/apt-get install -y test$/);
  });

  it("finds programs in PATH, and only executable ones", async () => {
    expect(await findProgram("sh")).toMatch(/\/sh$/);
    expect(await findProgram("no-such-program-x402m")).toBeUndefined();
    const dir = await mkdtemp(path.join(tmpdir(), "x402m-program-test-"));
    try {
      await writeFile(path.join(dir, "plain"), "#!/bin/sh\n", { mode: 0o644 });
      await mkdir(path.join(dir, "folder"));
      expect(await findProgram("plain", dir)).toBeUndefined();
      expect(await findProgram("folder", dir)).toBeUndefined();
      expect(await findProgram(path.join(dir, "plain"))).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    expect(await findProgram("sh", "/nonexistent")).toBeUndefined();
  });
});
