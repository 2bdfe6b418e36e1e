/**
 * Runs one of this machine's audio programs (pocketsphinx, lame) as its own process: GPL and BSD programs
 * are executed, never linked or bundled. Every run is bounded: a time limit and the caller's AbortSignal
 * both kill the process (SIGKILL: these programs hold no state worth a graceful stop), and its output is
 * capped. A missing program is a 503 naming the one command that installs it; any other failure is an
 * `UpstreamError`, never charged, whose details (paths, the program's own messages) go to the log only.
 */
import { spawn } from "node:child_process";
import { stat } from "node:fs/promises";
import path from "node:path";
import { UpstreamError } from "../../../common/errors.ts";

/** A program that is not installed: 503, with the command that installs it (the caller may see it). */
export class ProgramMissingError extends UpstreamError {
  constructor(program: string, install: string) {
    super(
      `${program} is not installed on this server; its operator can install it with: ${install}`,
      "engine_unavailable",
      503,
    );
  }
}

/** A program that failed or exceeded a bound: the log gets the details, the caller a plain sentence. */
export class ProgramFailedError extends UpstreamError {
  override readonly publicMessage: string;

  constructor(program: string, detail: string, code = "engine_failed", status: 502 | 504 = 502) {
    super(`${program} ${detail}`, code, status);
    this.publicMessage =
      status === 504
        ? `the ${program} engine took too long; nothing was charged`
        : `the ${program} engine failed; nothing was charged`;
  }
}

export interface RunOptions {
  /** The program's name in messages, e.g. `pocketsphinx`. */
  name: string;
  /** The executable (a name looked up in PATH, or a path). */
  command: string;
  args: readonly string[];
  /** Written to the program's standard input, which is then closed. */
  input?: Uint8Array;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Standard output beyond this is a failure (the process is killed). */
  maxOutputBytes: number;
  /** The command that installs the program, for the 503 of a missing one. */
  install: string;
}

export interface RunResult {
  stdout: Buffer;
  /** The last 4 KB of standard error, for messages. */
  stderr: string;
  exitCode: number;
}

const STDERR_TAIL = 4_096;

/**
 * Runs a program to its end and returns what it wrote; a non-zero exit is returned, not thrown (some
 * programs exit non-zero on input they still partly read: the caller knows what that means).
 *
 * @throws ProgramMissingError when the executable is not found; ProgramFailedError on a time-out (504), too
 *   much output or a crash by signal; the signal's reason when the caller aborts.
 * @example
 * const { stdout } = await runProgram({ name: "lame", command: "lame", args: ["--version"],
 *   timeoutMs: 5_000, maxOutputBytes: 65_536, install: "apt-get install -y lame" });
 */
export function runProgram(options: RunOptions): Promise<RunResult> {
  const { name, signal } = options;
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise<RunResult>((resolve, reject) => {
    const child = spawn(options.command, options.args, { stdio: ["pipe", "pipe", "pipe"] });
    const stdout: Buffer[] = [];
    let outputBytes = 0;
    let stderr = "";
    let failure: Error | undefined;
    const fail = (error: Error) => {
      failure ??= error;
      child.kill("SIGKILL");
    };
    const timer = setTimeout(
      () =>
        fail(
          new ProgramFailedError(
            name,
            `gave no answer within ${options.timeoutMs} ms`,
            "engine_timeout",
            504,
          ),
        ),
      options.timeoutMs,
    );
    const onAbort = () => fail(abortReason(signal as AbortSignal));
    signal?.addEventListener("abort", onAbort, { once: true });

    child.stdout.on("data", (chunk: Buffer) => {
      outputBytes += chunk.length;
      if (outputBytes > options.maxOutputBytes)
        return fail(
          new ProgramFailedError(
            name,
            `wrote more than ${options.maxOutputBytes} bytes`,
            "engine_output_too_large",
          ),
        );
      stdout.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_TAIL);
    });
    // The program may stop reading early (it exits on bad input): its closed pipe is not our failure.
    child.stdin.on("error", () => {});
    child.stdin.end(options.input ?? null);

    let settled = false;
    const finish = (result: () => RunResult | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      const value = result();
      if (value instanceof Error) reject(value);
      else resolve(value);
    };
    child.once("error", (error: NodeJS.ErrnoException) =>
      finish(() =>
        error.code === "ENOENT"
          ? new ProgramMissingError(name, options.install)
          : new ProgramFailedError(name, `could not be started: ${error.message}`),
      ),
    );
    child.once("close", (code, killedBy) =>
      finish(() => {
        if (failure) return failure;
        if (code === null)
          return new ProgramFailedError(name, `was killed by ${killedBy}${lastLine(stderr)}`);
        return { stdout: Buffer.concat(stdout), stderr, exitCode: code };
      }),
    );
  });
}

/** The signal's own reason when it is an Error (the kit's abandoned-call reason), else a plain abort. */
function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error("aborted");
}

/** ": <the last non-empty line>" of a program's messages, or "". */
export function lastLine(text: string): string {
  const line = text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .at(-1);
  return line ? `: ${line.slice(0, 300)}` : "";
}

/**
 * The full path of an executable found in PATH (or the path itself when it contains a slash and is
 * executable), or undefined.
 */
export async function findProgram(
  command: string,
  searchPath = process.env.PATH ?? "",
): Promise<string | undefined> {
  const candidates = command.includes("/")
    ? [command]
    : searchPath
        .split(path.delimiter)
        .filter(Boolean)
        .map((dir) => path.join(dir, command));
  for (const candidate of candidates) {
    // A file with an execute bit: access(X_OK) would also pass directories, and any file for root.
    const found = await stat(candidate).then(
      (s) => s.isFile() && (s.mode & 0o111) !== 0,
      () => false,
    );
    if (found) return candidate;
  }
  return undefined;
}
