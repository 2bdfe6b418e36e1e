import { vi } from "vitest";
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
export function runMain(argv: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  const run = running.then(() => runAlone(argv, env));
  running = run.catch(() => undefined);
  return run;
}

async function runAlone(argv: readonly string[], env: Record<string, string>): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const catcher = (into: (text: string) => void) => (chunk: string | Uint8Array) => {
    into(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString());
    return true;
  };
  const out = vi.spyOn(process.stdout, "write").mockImplementation(catcher((t) => (stdout += t)));
  const err = vi.spyOn(process.stderr, "write").mockImplementation(catcher((t) => (stderr += t)));
  const level = logLevel();
  setLogLevel("info");
  setLogDestination({ write: (line) => (stderr += line) });
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
