/**
 * Running the audio programs this machine may have (Debian's flite, espeak-ng, lame, sox, pocketsphinx):
 * each runs as its own process, never through a shell, with a time limit, a cap on what it writes, and the
 * caller's AbortSignal killing it. Licences are why: espeak-ng (GPL) and lame (LGPL) are executed, never
 * linked. Every failure is an `UpstreamError` (502, 503 when the program is missing, 504 on a time-out),
 * which the kit never charges; its details (paths, the program's own words) go to the log, the caller
 * gets a plain sentence.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { UpstreamError } from "../../../common/errors.ts";
import type { Availability } from "./engine.ts";

/** Default time limit of one program run: 3,000 characters take about a second here. */
export const DEFAULT_PROGRAM_TIMEOUT_MS = 30_000;
/**
 * Default cap of one program's output: 3,000 characters at speed 0.25 are about 12 minutes of speech,
 * 32 MB of 22 kHz 16-bit WAV.
 */
export const DEFAULT_PROGRAM_MAX_BYTES = 64 * 1024 * 1024;

/** A Debian program the audio engines run, and the package that installs it. */
export interface ProgramSpec {
  /** What the program is called on the PATH (`flite`), or an absolute path an operator or test gave. */
  command: string;
  /** The Debian package that installs it (`flite`, `espeak-ng`, `lame`, `sox`). */
  debianPackage: string;
}

export interface RunOptions {
  /** Absolute path or a name looked up on the PATH. */
  program: string;
  args: readonly string[];
  /** Written to the program's standard input, then closed; without it, stdin is empty. */
  stdin?: Uint8Array;
  timeoutMs?: number;
  /** Cap on standard output; past it the process is killed and the run fails. */
  maxBytes?: number;
  signal?: AbortSignal;
  /** Named in error messages, e.g. "flite". */
  label?: string;
  /** The command that installs the program, named in the 503 when it is missing. */
  install?: string;
  /**
   * Return a non-zero exit instead of failing: for programs whose exit status says something about the
   * input (lame exits 1 on an MP3 it cannot decode: the caller's bad file, not the engine's failure).
   */
  allowFailure?: boolean;
}

export interface RunResult {
  stdout: Buffer;
  stderr: string;
  exitCode: number;
}

/** A program run that failed: 502, or 504 on a time-out; the caller is told only which engine. */
export class ProgramFailedError extends UpstreamError {
  override readonly publicMessage: string;

  constructor(label: string, detail: string, code = "engine_failed", status: 502 | 503 | 504 = 502) {
    super(`${label} ${detail}`, code, status);
    this.publicMessage =
      status === 504
        ? `the ${label} engine took too long; nothing was charged`
        : status === 503
          ? `the ${label} engine is not installed on this server; nothing was charged`
          : `the ${label} engine failed; nothing was charged`;
  }
}

/**
 * Runs a program to its end and returns what it printed. It is killed (SIGKILL, which no program can
 * ignore) when the caller aborts, when the time limit passes, or when its output passes `maxBytes`.
 * The caller's abort rejects with the signal's reason; anything else is an `UpstreamError`.
 *
 * @example
 * const { stdout } = await runProgram({ program: "flite", args: ["-lv"], timeoutMs: 5_000 });
 */
export function runProgram(options: RunOptions): Promise<RunResult> {
  const label = options.label ?? path.basename(options.program);
  const timeoutMs = options.timeoutMs ?? DEFAULT_PROGRAM_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? DEFAULT_PROGRAM_MAX_BYTES;
  const { signal } = options;
  return new Promise<RunResult>((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const child = spawn(options.program, options.args, {
      stdio: ["pipe", "pipe", "pipe"],
      shell: false,
      // Programs read nothing from our environment but the locale: a fixed one keeps their output stable.
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C.UTF-8" },
    });
    const stdout: Buffer[] = [];
    let size = 0;
    let stderr = "";
    let failure: Error | undefined;
    const stop = (error: Error) => {
      failure ??= error;
      child.kill("SIGKILL");
    };
    const timer = setTimeout(
      () =>
        stop(new ProgramFailedError(label, `gave no result within ${timeoutMs} ms`, "engine_timeout", 504)),
      timeoutMs,
    );
    const onAbort = () => stop(abortReason(signal as AbortSignal));
    signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout.on("data", (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > maxBytes)
        stop(new ProgramFailedError(label, `wrote more than ${maxBytes} bytes`, "engine_too_large"));
      else stdout.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      // The last lines say why a program failed (pocketsphinx logs pages before them); keep only those.
      stderr = (stderr + chunk.toString("utf8")).slice(-4_096);
    });
    // A program that exits before reading all its input closes the pipe: its exit status tells the story.
    child.stdin.on("error", () => {});
    child.stdin.end(options.stdin ?? undefined);
    child.on("error", (error: NodeJS.ErrnoException) => {
      failure ??=
        error.code === "ENOENT"
          ? new ProgramFailedError(
              label,
              `is not installed (${options.program} not found)${options.install ? `; install it with: ${options.install}` : ""}`,
              "engine_unavailable",
              503,
            )
          : new ProgramFailedError(label, `could not be started: ${error.message}`);
    });
    child.on("close", (code, killedBy) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      if (failure) return reject(failure);
      if (code !== 0 && !(options.allowFailure && code !== null))
        return reject(
          new ProgramFailedError(
            label,
            `failed (${killedBy ? `killed by ${killedBy}` : `exit ${code}`})${lastLine(stderr)}`,
          ),
        );
      resolve({ stdout: Buffer.concat(stdout), stderr, exitCode: code ?? 0 });
    });
  });
}

/**
 * Where a program is: an absolute path as given when it exists and is executable, else the first
 * executable of that name on the PATH, else null. Synchronous, so an engine knows its formats at once.
 */
export function findProgram(command: string, searchPath = process.env.PATH ?? ""): string | null {
  const candidates = command.includes("/")
    ? [command]
    : searchPath
        .split(path.delimiter)
        .filter(Boolean)
        .map((dir) => path.join(dir, command));
  for (const candidate of candidates) {
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // Not here: try the next directory.
    }
  }
  return null;
}

/** `{ok: true}` when every program is found, else which are missing. */
export function programsAvailability(specs: readonly ProgramSpec[]): Availability {
  const missing = specs.filter((spec) => findProgram(spec.command) === null);
  if (missing.length === 0) return { ok: true };
  return {
    ok: false,
    reason: `not installed on this server: ${missing.map((spec) => spec.command).join(", ")}`,
  };
}

/**
 * Every Debian package the offline audio engines run, in the order install commands name them: all of them
 * is the README's one command.
 */
export const AUDIO_PACKAGES = ["flite", "espeak-ng", "lame", "sox", "pocketsphinx", "pocketsphinx-en-us"];

/** `apt-get install -y flite lame`: these packages, each once, in `AUDIO_PACKAGES`' order (others after). */
export function installCommand(packages: Iterable<string>): string {
  const rank = (name: string) => {
    const at = AUDIO_PACKAGES.indexOf(name);
    return at < 0 ? AUDIO_PACKAGES.length : at;
  };
  const unique = [...new Set(packages)];
  return `apt-get install -y ${unique.sort((a, b) => rank(a) - rank(b)).join(" ")}`;
}

/**
 * Runs `work` with a fresh private directory (mode 0700) for a program's input and output files, and
 * removes it afterwards whatever happened. Files, not arguments, carry text: a text starting with `-` can
 * then never be read as an option.
 */
export async function withTempDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), "x402m-audio-"));
  try {
    return await work(dir);
  } finally {
    await fs.promises.rm(dir, { recursive: true, force: true });
  }
}

/**
 * Reads a file a program wrote, refusing one past `maxBytes` (checked before reading it into memory).
 */
export async function readOutput(file: string, maxBytes: number, label: string): Promise<Uint8Array> {
  const stat = await fs.promises.stat(file).catch(() => null);
  if (!stat) throw new ProgramFailedError(label, "wrote no audio");
  if (stat.size > maxBytes)
    throw new ProgramFailedError(label, `wrote more than ${maxBytes} bytes`, "engine_too_large");
  return new Uint8Array(await fs.promises.readFile(file));
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error("aborted");
}

/** ": <the last non-empty line>" of a program's messages, or "": where programs say what went wrong. */
export function lastLine(stderr: string): string {
  const line = stderr
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .at(-1);
  return line ? `: ${line.slice(0, 300)}` : "";
}

/**
 * A function's answer computed once and kept (a program's voice list does not change while it runs); a
 * failure is not kept, so the next call tries again.
 */
export function once<T>(compute: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= compute().catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
}

/**
 * Runs tasks `limit` at a time, in arrival order; a caller that aborts while waiting leaves the line with
 * its signal's reason. A finishing task hands its place to the next in line, so none jumps the queue.
 */
export function turns(limit: number) {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async function take<T>(signal: AbortSignal, task: () => Promise<T>): Promise<T> {
    if (running < limit) running++;
    else
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          const at = waiting.indexOf(go);
          if (at >= 0) waiting.splice(at, 1);
          reject(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
        };
        const go = () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        };
        if (signal.aborted) return onAbort();
        waiting.push(go);
        signal.addEventListener("abort", onAbort, { once: true });
      });
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}
