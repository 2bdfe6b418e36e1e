/**
 * The one logger of every process: one JSON object per line on stderr (stdout carries the commands'
 * results), `{"level", "time", ...fields, "msg"}`, written by pino. Errors are logged as their message and
 * first stack frames, never as a multi-line dump; bigints as decimal strings. A line written while a request
 * is served carries its `request_id` (src/common/request-log.ts). docs/observability-logs-health.md.
 *
 * Lines are written synchronously to file descriptor 2: a process that exits right after logging (a
 * refused start, a crash) loses none, which `process.stderr` cannot promise on a pipe (it drops what the
 * pipe's buffer cannot take at `process.exit`). The level is `info` until `setLogLevel` says otherwise: the
 * configuration (`X402M_LOG_LEVEL`) is read after the first lines may be written, and applied by whoever
 * loads it (src/services/start.ts).
 */
import pino from "pino";
import { scopeSlot } from "./request-scope.ts";

/** The levels a line is written at, most verbose first. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** What `X402M_LOG_LEVEL` may say: a line's level and above are written; `silent` writes none. */
export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevelSetting = (typeof LOG_LEVELS)[number];

export type LogFields = Record<string, unknown>;

/** Where the lines go: file descriptor 2 unless a test redirects them (`setLogDestination`). */
export interface LogDestination {
  write(line: string): void;
}

/**
 * Field names whose values are never written, whatever logs them: payment signatures, credentials, keys.
 * Nothing should log them in the first place (headers are never logged); this is the net under that rule,
 * on a line's own fields and a `headers` field's. Not at any depth: pino's wildcard paths make every line
 * several times dearer (145 µs instead of 11 µs for a request's line, measured), for objects no line holds.
 */
const SECRET_FIELDS = [
  "authorization",
  "Authorization",
  "cookie",
  "payment-signature",
  "PAYMENT-SIGNATURE",
  "paymentSignature",
  "x-payment",
  "X-PAYMENT",
  "signature",
  "privateKey",
  "private_key",
  "key",
  "apiKey",
  "api_key",
  "apiSecret",
  "secret",
  "token",
  "password",
];
const REDACTED = SECRET_FIELDS.flatMap((name) => {
  const path = /^[A-Za-z_$][\w$]*$/.test(name) ? name : `["${name}"]`;
  return [path, `headers.${path}`];
});

let destination: LogDestination | undefined;
let stderr: LogDestination | undefined;
const sink: LogDestination = {
  write(line) {
    if (destination) return destination.write(line);
    // Opened on first use: a process that never logs keeps its descriptor untouched.
    stderr ??= pino.destination({ fd: 2, sync: true });
    stderr.write(line);
  },
};

const logger = pino(
  {
    level: "info",
    // No pid and hostname: a service's lines are told apart by `service` and the supervisor's own labels.
    base: null,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: {
      level: (label) => ({ level: label }),
      log: (fields) => plain(fields, 0) as Record<string, unknown>,
    },
    redact: { paths: REDACTED, censor: "[redacted]" },
  },
  sink,
);

/** The numeric threshold, kept here so that a line below it costs one comparison. */
const VALUES: Record<LogLevelSetting, number> = {
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  silent: Infinity,
};
let threshold = VALUES.info;

/** What every line written within a context carries: the request being served. */
export interface LogContext {
  readonly request_id: string;
}

const context = scopeSlot<LogContext>("log context");

/** Runs `fn` with `ctx` as the context of every line written within it, however deep in async calls. */
export function withLogContext<T>(ctx: LogContext, fn: () => T): T {
  return context.run(ctx, fn);
}

/** The context of the code running now (the request it serves), if any. */
export function logContext(): LogContext | undefined {
  return context.get();
}

export function log(level: LogLevel, msg: string, fields: LogFields = {}): void {
  if (VALUES[level] < threshold) return;
  const ctx = context.get();
  logger[level](ctx ? { request_id: ctx.request_id, ...fields } : fields, msg);
}

/** Whether a line at `level` would be written: for a line whose fields cost something to gather. */
export function logs(level: LogLevel): boolean {
  return VALUES[level] >= threshold;
}

/** From now on, lines below `level` are not written. */
export function setLogLevel(level: LogLevelSetting): void {
  threshold = VALUES[level];
  logger.level = level;
}

/** The level set now. */
export function logLevel(): LogLevelSetting {
  return logger.level as LogLevelSetting;
}

/** The lines go to `to` (tests capture them), or back to file descriptor 2 with `undefined`. */
export function setLogDestination(to: LogDestination | undefined): void {
  destination = to;
}

/** An error as one line: its name, message and where it was thrown (the first frame of ours). */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const frame = error.stack
    ?.split("\n")
    .slice(1)
    // A frame, not the rest of a message of several lines.
    .find((l) => /^\s*at /.test(l) && !l.includes("node_modules") && !l.includes("node:"))
    ?.trim();
  return `${error.name}: ${error.message.split("\n")[0]}${frame ? ` (${frame})` : ""}`;
}

/**
 * `value` with every bigint as its decimal string and every Error as `describeError` says it, at any depth
 * of plain objects and arrays; copied only where something changes (most lines: nothing is).
 */
function plain(value: unknown, depth: number): unknown {
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Error) return describeError(value);
  if (value === null || typeof value !== "object" || depth > 8) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, i) => {
      const changed = plain(item, depth + 1);
      if (changed === item) return;
      copy ??= value.slice();
      copy[i] = changed;
    });
    return copy ?? value;
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  let copy: Record<string, unknown> | undefined;
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key];
    const changed = plain(item, depth + 1);
    if (changed === item) continue;
    copy ??= { ...(value as Record<string, unknown>) };
    copy[key] = changed;
  }
  return copy ?? value;
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
