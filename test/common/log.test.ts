import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type LogFields, type LogLevel, limitedLog } from "../../src/common/log.ts";

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
