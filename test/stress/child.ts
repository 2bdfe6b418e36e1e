/**
 * The stress scenarios drive the real CLI in child processes, as a user or a supervisor would: these
 * helpers start one, read its JSON log lines and ready line, and measure its memory and exit.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

export const BIN = path.resolve("bin/x402-merchants");

export interface Cli {
  child: ChildProcessWithoutNullStreams;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Every stderr line so far (parsed when JSON). */
  lines: Record<string, unknown>[];
  stdout(): string;
  stderr(): string;
  /** The first stderr line matching `pred`, waiting up to `timeoutMs`. */
  line(pred: (l: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** The first stdout line (a command's ready line). */
  ready(timeoutMs?: number): Promise<string>;
  /** SIGKILL if still running. */
  kill(): void;
}

export function startCli(args: string[], env: Record<string, string> = {}): Cli {
  const child = spawn(process.execPath, [BIN, ...args], {
    stdio: "pipe",
    // Its metrics listener on a free port: 9464 is one port for every process on the machine.
    env: { ...process.env, DATABASE_URL: "", X402M_METRICS_PORT: "0", ...env },
  });
  const lines: Record<string, unknown>[] = [];
  let out = "";
  let err = "";
  let partial = "";
  const listeners = new Set<() => void>();
  child.stdout.on("data", (c: Buffer) => {
    out += c.toString();
    for (const l of listeners) l();
  });
  child.stderr.on("data", (c: Buffer) => {
    err += c.toString();
    const parts = (partial + c.toString()).split("\n");
    partial = parts.pop() ?? "";
    for (const text of parts) {
      try {
        lines.push(JSON.parse(text) as Record<string, unknown>);
      } catch {
        lines.push({ text });
      }
    }
    for (const l of listeners) l();
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const waitFor = <T>(found: () => T | undefined, what: string, timeoutMs: number) =>
    new Promise<T>((resolve, reject) => {
      const check = () => {
        const value = found();
        if (value === undefined) return;
        done();
        resolve(value);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${what} not seen in ${timeoutMs} ms; stderr: ${err.slice(-2000)}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      void exit.then(({ code, signal }) => {
        if (!listeners.has(check)) return;
        done();
        reject(new Error(`exited (${code ?? signal}) before ${what}; stderr: ${err.slice(-2000)}`));
      });
      check();
    });
  return {
    child,
    exit,
    lines,
    stdout: () => out,
    stderr: () => err,
    line: (pred, timeoutMs = 60_000) => waitFor(() => lines.find(pred), "the log line", timeoutMs),
    ready: (timeoutMs = 60_000) =>
      waitFor(
        () => (out.includes("\n") ? out.slice(0, out.indexOf("\n")) : undefined),
        "the ready line",
        timeoutMs,
      ),
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}

/** Runs the CLI to its end. */
export async function runCli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cli = startCli(args, env);
  const { code } = await cli.exit;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

/** Resident memory of a process, in MB (Linux: /proc). */
export function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return Math.round(kb / 1024);
}

/** The p-th percentile (0-100) of values, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}
