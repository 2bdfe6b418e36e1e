import { onTestFinished, vi } from "vitest";
import { main } from "../../src/cli/main.ts";
import { logLevel, setLogDestination, setLogLevel } from "../../src/common/log.ts";
import { type CliResult, TEST_CLI_ENV } from "./process.ts";

/** The run under way: each catches this process's own output, so runs asked for at once wait their turn. */
let running: Promise<unknown> = Promise.resolve();

/**
 * Runs the command line's `main` in this process, what it writes caught: a usage mistake or a help text
 * in milliseconds, where a child process takes a second or more. `env`, on top of `TEST_CLI_ENV` as for a
 * child process, is set for the run only (an empty string reads as unset). Its stderr has the logger's
 * lines too, from `info` up as a child process starts (the suite's setup keeps `warn`), so that a test of
 * "one line on stderr" sees what a process would show. Only for what ends at once: a command that serves
 * would never return.
 */
export function runMain(
  argv: readonly string[],
  env: Record<string, string> = {},
  watch: RunWatch = {},
): Promise<CliResult> {
  const run = running.then(() => runAlone(argv, env, watch));
  running = run.catch(() => undefined);
  return run;
}

/** What a test may see of a run while it is under way (`runMain`'s third argument). */
export interface RunWatch {
  /** Called with what the run has written to stderr so far, each time it writes: a run waiting says so there. */
  stderr?: (soFar: string) => void;
}

async function runAlone(
  argv: readonly string[],
  env: Record<string, string>,
  watch: RunWatch,
): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const catcher = (into: (text: string) => void) => (chunk: string | Uint8Array) => {
    into(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString());
    return true;
  };
  const out = vi.spyOn(process.stdout, "write").mockImplementation(catcher((t) => (stdout += t)));
  const toStderr = (text: string) => {
    stderr += text;
    watch.stderr?.(stderr);
  };
  const err = vi.spyOn(process.stderr, "write").mockImplementation(catcher(toStderr));
  const level = logLevel();
  setLogLevel("info");
  setLogDestination({ write: toStderr });
  for (const [name, value] of Object.entries({ ...TEST_CLI_ENV, ...env })) vi.stubEnv(name, value);
  // A command stopped by a signal listens for it (`untilSignal`) whether or not one came: once it has
  // ended, its listeners go with it, or they would pile up in this process and outlive the test.
  const listening = { SIGINT: process.listeners("SIGINT"), SIGTERM: process.listeners("SIGTERM") };
  try {
    const code = await main([...argv]);
    return { code, stdout, stderr };
  } finally {
    for (const [signal, before] of Object.entries(listening) as [NodeJS.Signals, typeof listening.SIGINT][])
      for (const listener of process.listeners(signal))
        if (!before.includes(listener)) process.off(signal, listener);
    out.mockRestore();
    err.mockRestore();
    setLogDestination(undefined);
    setLogLevel(level);
    vi.unstubAllEnvs();
  }
}

/** A `serve` started in this process by `serveInProcess`. */
export interface ServedInProcess {
  /** Each service's base URL by name, as `serve`'s ready line has them. */
  urls: Record<string, string>;
  /** Closes what it started, as `serve` does on SIGTERM. */
  stop(): Promise<void>;
}

/**
 * What `serve --only ONLY --data DATA` starts, started in this process: the configuration read from `env` (on
 * top of this process's environment and `TEST_CLI_ENV`, an empty string unset, as for a child process), then
 * `startServices` as `runServe` calls it. For a test whose point is what the hosts answer, not the process:
 * a `serve` process costs 4-5 CPU-s to start (the bundle and PGlite loaded anew), here its modules are
 * loaded already. Not for `--rpc` (no indexer is followed here). Stopped when the test ends.
 */
export async function serveInProcess(
  only: string,
  data: string,
  env: Record<string, string> = {},
): Promise<ServedInProcess> {
  const [{ loadConfig }, { chooseServices }, { payToOf }, { startServices }, { Lifecycle }] =
    await Promise.all([
      import("../../src/services/config.ts"),
      import("../../src/cli/serve.ts"),
      import("../../src/services/merchants.ts"),
      import("../../src/services/start.ts"),
      import("../../src/common/lifecycle.ts"),
    ]);
  const all: Record<string, string | undefined> = { ...process.env, ...TEST_CLI_ENV, ...env };
  const given = Object.entries(all).filter(
    (entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== "",
  );
  const config = loadConfig({ flags: { data }, env: Object.fromEntries(given) });
  const services = chooseServices(only, config);
  const merchants = services.filter((s) => s !== "reports");
  for (const name of merchants) payToOf(config, name);
  const lifecycle = new Lifecycle();
  const stop = () => lifecycle.close();
  onTestFinished(stop);
  try {
    const started = await startServices({
      config,
      lifecycle,
      merchants,
      reports: services.includes("reports") ? {} : undefined,
    });
    return { urls: started.urls, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
