import { spawn } from "node:child_process";
import path from "node:path";
import { onTestFinished } from "vitest";

/** Another process holding a data directory's analytics database, as `serve` or `index` would. */
export interface Holder {
  pid: number;
  /** Ends the holder; resolves once it has exited (and its lock is gone). */
  release(): Promise<void>;
}

// The bare driver, not the CLI: the test decides when the lock is let go, whatever the holder would do.
const HOLD = `
import { DuckDBInstance } from "@duckdb/node-api";
await DuckDBInstance.create(process.env.HOLD_FILE);
process.stdout.write("held\\n");
setInterval(() => undefined, 1 << 30);
`;

/** Opens `<dataDir>/analytics.duckdb` in a child process; resolves once it holds the lock. */
export async function holdAnalytics(dataDir: string): Promise<Holder> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", HOLD], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, HOLD_FILE: path.join(dataDir, "analytics.duckdb") },
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`the holder exited with ${code}`)));
  });
  return {
    pid: child.pid as number,
    release: async () => {
      child.kill("SIGKILL");
      await exited;
    },
  };
}
