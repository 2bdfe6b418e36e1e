import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  type LogFields,
  type LogLevel,
  limitedLog,
  log,
  logs,
  setLogLevel,
  withLogContext,
} from "../../src/common/log.ts";
import { loadConfig } from "../../src/services/config.ts";
import { capturedLogLines } from "../helpers/log.ts";

/** The lines written from now to the end of the test, parsed. */
function captured(): () => Record<string, unknown>[] {
  const raw = capturedLogLines();
  return () =>
    raw.map((line) => {
      expect(line.endsWith("\n") && !line.slice(0, -1).includes("\n")).toBe(true);
      return JSON.parse(line) as Record<string, unknown>;
    });
}

describe("log", () => {
  it("writes one JSON object a line: the level's name, an ISO time, the fields, the message", () => {
    const lines = captured();
    log("warn", "something to know", { count: 3, where: "here" });
    expect(lines()).toEqual([
      {
        level: "warn",
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        count: 3,
        where: "here",
        msg: "something to know",
      },
    ]);
  });

  it("writes bigints as decimal strings and errors as one line, at any depth", () => {
    const lines = captured();
    const error = new TypeError("bad thing\nsecond line");
    log("error", "failed", { amount: 2n ** 70n, error, nested: { list: [1n, { cause: error }], n: 1 } });
    const [line] = lines();
    expect(line?.amount).toBe("1180591620717411303424");
    expect(line?.error).toMatch(/^TypeError: bad thing \(at .*log\.test\.ts:\d+:\d+\)$/);
    expect(line?.nested).toEqual({ list: ["1", { cause: line?.error }], n: 1 });
  });

  it("adds the context's request id to every line written within it, however deep in async calls", async () => {
    const lines = captured();
    log("info", "before");
    await withLogContext({ request_id: "r-1" }, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      log("info", "inside");
    });
    log("info", "after");
    expect(lines().map((l) => [l.msg, l.request_id])).toEqual([
      ["before", undefined],
      ["inside", "r-1"],
      ["after", undefined],
    ]);
  });

  it("writes the lines at the level set and above", () => {
    const lines = captured();
    const all = () => {
      for (const level of ["debug", "info", "warn", "error"] as const) log(level, level);
    };
    all();
    setLogLevel("error");
    all();
    setLogLevel("debug");
    all();
    expect(lines().map((l) => l.msg)).toEqual([
      "info",
      "warn",
      "error",
      "error",
      "debug",
      "info",
      "warn",
      "error",
    ]);
    expect(logs("debug")).toBe(true);
    setLogLevel("silent");
    expect(logs("error")).toBe(false);
  });

  it("is set by X402M_LOG_LEVEL, through the configuration: a level, or refused naming the setting", () => {
    expect(loadConfig({ env: {} }).logLevel).toBeNull();
    expect(loadConfig({ env: { X402M_LOG_LEVEL: "Debug" } }).logLevel).toBe("debug");
    expect(() => loadConfig({ env: { X402M_LOG_LEVEL: "verbose" } })).toThrow(
      "invalid X402M_LOG_LEVEL: one of debug, info, warn, error, silent",
    );
  });

  it("never writes a secret's field, its own or a headers field's", () => {
    const lines = captured();
    log("warn", "careless", {
      authorization: "Bearer abc",
      "PAYMENT-SIGNATURE": "eyJ4NDAyVmVyc2lvbiI6Mn0=",
      privateKey: "0x01",
      token: "t",
      headers: { "payment-signature": "eyJ9", Authorization: "Bearer def", accept: "text/html" },
      path: "/api/qr",
    });
    expect(lines()[0]).toMatchObject({
      authorization: "[redacted]",
      "PAYMENT-SIGNATURE": "[redacted]",
      privateKey: "[redacted]",
      token: "[redacted]",
      headers: { "payment-signature": "[redacted]", Authorization: "[redacted]", accept: "text/html" },
      path: "/api/qr",
    });
  });
});

type Line = { level: LogLevel; msg: string; fields?: LogFields };

describe("limitedLog", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const recorder = () => {
    const lines: Line[] = [];
    return {
      lines,
      write: (level: LogLevel, msg: string, fields?: LogFields) => lines.push({ level, msg, fields }),
    };
  };

  it("writes the first lines of a window, then one line counting the rest when the window ends", () => {
    const { lines, write } = recorder();
    const warn = limitedLog({ lines: 3, perMs: 1_000 }, write);
    for (let i = 0; i < 1_000; i++) warn("warn", "refused", { i });
    expect(lines.map((l) => l.fields?.i)).toEqual([0, 1, 2]);

    vi.advanceTimersByTime(1_000);
    expect(lines).toHaveLength(4);
    expect(lines[3]).toEqual({
      level: "warn",
      msg: "log lines suppressed",
      fields: { suppressed: 997, last: "refused", window_s: 1 },
    });

    // A new window writes again.
    warn("warn", "refused", { i: 1_000 });
    expect(lines).toHaveLength(5);
  });

  it("adds no closing line to a window that left nothing out", () => {
    const { lines, write } = recorder();
    const warn = limitedLog({ lines: 3, perMs: 1_000 }, write);
    warn("warn", "one");
    warn("warn", "two");
    vi.advanceTimersByTime(5_000);
    expect(lines.map((l) => l.msg)).toEqual(["one", "two"]);
  });
});
