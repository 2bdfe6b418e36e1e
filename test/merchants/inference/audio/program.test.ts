import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import {
  AUDIO_PACKAGES,
  findProgram,
  installCommand,
  once,
  type ProgramFailedError,
  programsAvailability,
  runProgram,
} from "../../../../src/merchants/inference/audio/program.ts";
import { alive, eventually } from "../../../helpers/process.ts";

/** A fresh directory, removed when the test ends. */
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "audio-program-test-"));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A shell script in a fresh directory, standing for a program that misbehaves. */
function script(body: string): string {
  const dir = tempDir();
  const file = path.join(dir, "program");
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

describe("running an audio program", () => {
  it("passes arguments as they are, with no shell to interpret them", async () => {
    const { stdout } = await runProgram({ program: "printf", args: ["%s|", "$(touch x)", "-o", "a b"] });
    expect(stdout.toString()).toBe("$(touch x)|-o|a b|");
  });

  it("feeds standard input whole", async () => {
    const text = "-v \"quoted\" 'text'\n".repeat(5_000);
    const { stdout } = await runProgram({ program: "cat", args: [], stdin: Buffer.from(text) });
    expect(stdout.toString()).toBe(text);
  });

  it("kills a program past its time limit: 504, and the process is gone", async () => {
    const program = script('echo $$ > "$(dirname "$0")/pid"; exec sleep 30');
    const started = Date.now();
    await expect(runProgram({ program, args: [], timeoutMs: 300 })).rejects.toMatchObject({
      status: 504,
      code: "engine_timeout",
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    const pid = Number(fs.readFileSync(path.join(path.dirname(program), "pid"), "utf8"));
    expect(await eventually(() => !alive(pid), 2_000)).toBe(true);
  });

  it("kills a program whose output passes the cap", async () => {
    await expect(
      runProgram({ program: "head", args: ["-c", "10000000", "/dev/zero"], maxBytes: 64 * 1024 }),
    ).rejects.toMatchObject({ code: "engine_too_large" });
  });

  it("ends the run with the caller's reason when the caller aborts", async () => {
    const controller = new AbortController();
    const run = runProgram({ program: "sleep", args: ["30"], signal: controller.signal });
    const reason = new Error("caller left");
    setTimeout(() => controller.abort(reason), 100);
    await expect(run).rejects.toBe(reason);
  });

  it("says why a program failed: its exit status and first line of stderr, or that it is missing", async () => {
    await expect(
      runProgram({ program: script("echo 'no voice here' >&2; exit 3"), args: [] }),
    ).rejects.toMatchObject({
      status: 502,
      code: "engine_failed",
      message: expect.stringMatching(/exit 3\): no voice here/),
    });
    const missing = await runProgram({
      program: "/nonexistent/flite",
      args: [],
      label: "flite",
      install: "apt-get install -y flite",
    }).catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 503, code: "engine_unavailable" });
    expect((missing as Error).message).toMatch(/install it with: apt-get install -y flite$/);
    // The caller is told which engine, never the server's paths or the program's own words.
    expect((missing as ProgramFailedError).publicMessage).toBe(
      "the flite engine is not installed on this server; nothing was charged",
    );
  });

  it("returns a non-zero exit when asked to, with the output and the last line of stderr", async () => {
    const result = await runProgram({
      program: "sh",
      args: ["-c", "tr a-z A-Z; echo noise >&2; echo 'bad frame' >&2; exit 3"],
      stdin: Buffer.from("hello"),
      allowFailure: true,
    });
    expect(result).toMatchObject({ exitCode: 3, stderr: "noise\nbad frame\n" });
    expect(result.stdout.toString()).toBe("HELLO");
    // Without allowFailure the same run fails, saying its last line (where pocketsphinx puts its reason).
    await expect(
      runProgram({ program: "sh", args: ["-c", "echo noise >&2; echo 'bad frame' >&2; exit 3"] }),
    ).rejects.toMatchObject({ message: expect.stringMatching(/exit 3\): bad frame$/) });
  });
});

describe("finding programs", () => {
  it("finds a program on the PATH or at a path, and not what is absent or not executable", () => {
    expect(findProgram("sh")).toMatch(/\/sh$/);
    expect(findProgram("sh", "/nonexistent")).toBeNull();
    expect(findProgram("/nonexistent/flite")).toBeNull();
    const notExecutable = path.join(tempDir(), "flite");
    fs.writeFileSync(notExecutable, "", { mode: 0o644 });
    expect(findProgram(notExecutable)).toBeNull();
  });

  it("says which programs are missing, and names packages in one apt command, each once, in the README's order", () => {
    expect(
      programsAvailability([
        { command: "/nonexistent/flite", debianPackage: "flite" },
        { command: "sh", debianPackage: "dash" },
        { command: "/nonexistent/lame", debianPackage: "lame" },
      ]),
    ).toEqual({
      ok: false,
      reason: "not installed on this server: /nonexistent/flite, /nonexistent/lame",
    });
    expect(programsAvailability([{ command: "sh", debianPackage: "dash" }])).toEqual({ ok: true });
    expect(installCommand(["sox", "sox"])).toBe("apt-get install -y sox");
    expect(installCommand(["pocketsphinx-en-us", "other", "lame", "flite"])).toBe(
      "apt-get install -y flite lame pocketsphinx-en-us other",
    );
    expect(installCommand([...AUDIO_PACKAGES].reverse())).toBe(
      "apt-get install -y flite espeak-ng lame sox pocketsphinx pocketsphinx-en-us",
    );
  });
});

describe("once", () => {
  it("keeps an answer, and forgets a failure so the next call tries again", async () => {
    let calls = 0;
    const listing = once(async () => {
      calls++;
      if (calls === 1) throw new Error("not yet");
      return calls;
    });
    await expect(listing()).rejects.toThrow("not yet");
    expect(await listing()).toBe(2);
    expect(await listing()).toBe(2);
    expect(calls).toBe(2);
  });
});
