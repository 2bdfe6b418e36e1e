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

/** At most `lines` lines in any window of `perMs`. */
export interface LogLimit {
  lines: number;
  perMs: number;
}

/** A log function, as `log` is. */
export type LogWriter = (level: LogLevel, msg: string, fields?: LogFields) => void;

/**
 * A logger for lines that callers outside the process can cause at will (a malformed header on every
 * request, an RPC that flaps): the first `lines` of a window of `perMs` are written, the rest are
 * counted, and when the window ends one line says how many were left out. Bounded whatever the
 * traffic, and nothing goes unmentioned. The closing line waits on an unref'd timer: it never holds a
 * process open.
 *
 * @example
 *   const warn = limitedLog({ lines: 10, perMs: 60_000 });
 *   warn("warn", "refused a malformed header", { path });
 */
export function limitedLog(limit: LogLimit, write: LogWriter = log): LogWriter {
  let written = 0;
  let suppressed = 0;
  let lastSuppressed = "";
  let window: NodeJS.Timeout | undefined;
  const close = () => {
    window = undefined;
    if (suppressed > 0) {
      write("warn", "log lines suppressed", {
        suppressed,
        last: lastSuppressed,
        window_s: limit.perMs / 1000,
      });
    }
    written = 0;
    suppressed = 0;
  };
  return function limitedLog(level, msg, fields) {
    if (!window) {
      window = setTimeout(close, limit.perMs);
      window.unref();
    }
    if (written < limit.lines) {
      written++;
      write(level, msg, fields);
    } else {
      suppressed++;
      lastSuppressed = msg;
    }
  };
}
