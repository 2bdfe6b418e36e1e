import { type ChildProcess, execFile, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { onTestFinished } from "vitest";

/**
 * Whether a process is running. A zombie (exited, not yet reaped: a killed orphan waits for init) counts
 * as gone, which `process.kill(pid, 0)` alone would not tell.
 */
export function alive(pid: number): boolean {
  if (process.platform === "linux") {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      // The state follows the command name, which is in parentheses and may itself contain spaces.
      return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The direct children of a process (Linux only: read from /proc). */
export function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return children;
}

/** Polls `check` every 20 ms until it holds or `timeoutMs` passes; returns whether it held. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 5_000,
): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

/** The command name of a process (Linux only), or "" once it is gone. */
export function commandName(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
}

/** A command of `bin/x402-merchants` running in a child process. */
export interface CliRun {
  child: ChildProcess;
  /** The exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** The first line of stdout (a command's ready line); rejects with stderr if it exits first. */
  line: Promise<string>;
  stderr(): string;
}

/**
 * The environment every command run by a test starts with: no DATABASE_URL, and its metrics listener on a
 * free port (the default, 9464, is one port for every process on the machine).
 */
export const TEST_CLI_ENV = { DATABASE_URL: "", X402M_METRICS_PORT: "0" } as const;

/**
 * Spawns `bin/x402-merchants args` with `env` on top of this process's environment and `TEST_CLI_ENV`
 * (DATABASE_URL unset unless given). Killed at the end of the test if still running.
 */
export function startCli(args: readonly string[], env: Record<string, string> = {}): CliRun {
  const run = spawnCli(args, env);
  onTestFinished(() => {
    if (run.child.exitCode === null) run.child.kill("SIGKILL");
  });
  return run;
}

/**
 * `startCli` for a process a file shares (started in `beforeAll`, where no test's end can stop it): the caller
 * stops it.
 */
export function spawnCli(args: readonly string[], env: Record<string, string> = {}): CliRun {
  const child = spawn(process.execPath, [path.resolve("bin/x402-merchants"), ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...TEST_CLI_ENV, ...env },
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const line = new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("\n")) resolve(out.split("\n")[0] ?? "");
    });
    exited.then((code) => reject(new Error(`exited with ${code}: ${stderr}`)));
  });
  // A test that only waits for the exit must not see an unhandled rejection.
  line.catch(() => undefined);
  return { child, exited, line, stderr: () => stderr };
}

const execFileAsync = promisify(execFile);

/** What a command printed, and its exit code. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `bin/x402-merchants args` to its end, with `env` on top of this process's environment and
 * `TEST_CLI_ENV` (DATABASE_URL unset unless given: the server's own schema is shared by every run on the
 * machine, whatever its code).
 */
export async function runCli(args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  try {
    const { stdout, stderr } = await execFileAsync(
      process.execPath,
      [path.resolve("bin/x402-merchants"), ...args],
      { env: { ...process.env, ...TEST_CLI_ENV, ...env }, maxBuffer: 64 * 1024 * 1024 },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** A command a file's tests share (`sharedCli`). */
export interface SharedCli {
  /** The running command, started by the first test that asks: a test run alone still has it. */
  get(): CliRun;
  /** Whether a test has started it. */
  readonly started: boolean;
  /** Sends SIGTERM unless it has ended, and resolves to its exit code; undefined when never started. */
  stop(): Promise<number | null | undefined>;
}

/**
 * One process of `bin/x402-merchants args` for the tests of a file that only read it (its ready line, its
 * answers): a process costs 5-6 CPU-s to start, each test that starts its own pays that again. Started
 * lazily by `get` (the arguments are built then, once what they name, a devnet say, exists) and stopped by
 * the file's `afterAll` through `stop`, which tells its exit code. A test that changes its state, or
 * stops it, starts its own with `startCli`: a shared process must leave no test's result depending on
 * another's.
 */
export function sharedCli(
  args: () => readonly string[],
  env: () => Record<string, string> = () => ({}),
): SharedCli {
  let run: CliRun | undefined;
  return {
    get() {
      run ??= spawnCli(args(), env());
      return run;
    },
    get started() {
      return run !== undefined;
    },
    async stop() {
      if (!run) return undefined;
      if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill("SIGTERM");
      return run.exited;
    },
  };
}
