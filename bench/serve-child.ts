/**
 * `x402-merchants serve --only HOSTS` (or another command) as a process of its own, as an operator runs it, for
 * benchmarks that measure the process apart from the load they put on it (its pid: its CPU and memory).
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "..");
const CLI = path.join(ROOT, "bin", "x402-merchants");

export interface ServeChild<Host extends string> {
  pid: number;
  /** Each host's URL, as `serve` prints them on its first line. */
  urls: Record<Host, string>;
  stop(): Promise<void>;
}

/** `serve --only hosts` with `env` on 127.0.0.1, once it has printed its URLs. */
export async function startServeChild<Host extends string>(
  hosts: readonly Host[],
  env: NodeJS.ProcessEnv,
  dataDir: string,
  node?: readonly string[],
): Promise<ServeChild<Host>> {
  const args = ["serve", "--only", hosts.join(","), "--data", dataDir, "--host", "127.0.0.1"];
  const child = await startCliChild(args, env, node);
  return { pid: child.pid, urls: JSON.parse(child.line) as Record<Host, string>, stop: child.stop };
}

export interface CliChild {
  pid: number;
  /** The first line it printed (a command's ready line). */
  line: string;
  stop(): Promise<void>;
}

/**
 * `x402-merchants ARGS` with `env`, once it has printed its first line. With `node`, run as `node NODE... CLI
 * ARGS` instead of through the script's own `sh` line (which gives `serve` `--max-semi-space-size=4` and
 * MALLOC_ARENA_MAX=2: a caller that passes `node` for `serve`, as for `--cpu-prof`, passes those too).
 */
export async function startCliChild(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  node?: readonly string[],
): Promise<CliChild> {
  const child: ChildProcess = node
    ? spawn(process.execPath, [...node, CLI, ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] })
    : spawn(CLI, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk) => {
      out += chunk;
      if (out.includes("\n")) resolve(out.slice(0, out.indexOf("\n")));
    });
    child.once("exit", (code) =>
      reject(new Error(`${args[0]} exited (${code}) before it was ready: ${stderr}`)),
    );
  });
  return {
    pid: child.pid as number,
    line,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
