/**
 * The one logger of every process: one JSON object per line on stderr (stdout carries the commands'
 * results), `{"level", "msg", ...fields}`. Errors are logged as their message and first stack frames,
 * never as a multi-line dump.
 */

export type LogLevel = "info" | "warn" | "error";

export type LogFields = Record<string, unknown>;

export function log(level: LogLevel, msg: string, fields: LogFields = {}): void {
  const line = JSON.stringify({ level, msg, ...fields }, (_key, value) =>
    typeof value === "bigint" ? value.toString() : value instanceof Error ? describeError(value) : value,
  );
  process.stderr.write(`${line}\n`);
}

/** An error as one line: its name, message and where it was thrown (the first frame of ours). */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const frame = error.stack
    ?.split("\n")
    .slice(1)
    .find((l) => !l.includes("node_modules") && !l.includes("node:"))
    ?.trim();
  return `${error.name}: ${error.message.split("\n")[0]}${frame ? ` (${frame})` : ""}`;
}
