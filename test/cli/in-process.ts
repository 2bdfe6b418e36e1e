import { vi } from "vitest";
import { main } from "../../src/cli/main.ts";
import type { CliResult } from "../helpers/process.ts";

/**
 * Runs the command line's `main` in this process, what it writes caught: a usage mistake or a help text
 * in milliseconds, where a child process takes a second or more. `env` is set for the run only (an empty
 * string reads as unset). Only for what ends at once: a command that serves would never return.
 */
export async function runMain(argv: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const catcher = (into: (text: string) => void) => (chunk: string | Uint8Array) => {
    into(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString());
    return true;
  };
  const out = vi.spyOn(process.stdout, "write").mockImplementation(catcher((t) => (stdout += t)));
  const err = vi.spyOn(process.stderr, "write").mockImplementation(catcher((t) => (stderr += t)));
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  try {
    const code = await main([...argv]);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
    vi.unstubAllEnvs();
  }
}
