import { onTestFinished } from "vitest";
import { type LogLevelSetting, logLevel, setLogDestination, setLogLevel } from "../../src/common/log.ts";

/**
 * The lines the logger writes from now to the end of the test, as written (each ends with a newline), at
 * `level` and above: info by default, where the suite's setup (test/setup-log.ts) keeps warn.
 */
export function capturedLogLines(level: LogLevelSetting = "info"): string[] {
  const raw: string[] = [];
  const before = logLevel();
  setLogLevel(level);
  setLogDestination({ write: (line) => raw.push(line) });
  onTestFinished(() => {
    setLogDestination(undefined);
    setLogLevel(before);
  });
  return raw;
}
