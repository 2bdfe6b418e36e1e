import { setTimeout as sleep } from "node:timers/promises";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { timeoutSignal } from "../../src/common/timeout-signal.ts";

/** A full garbage collection, as a busy process has one at any moment. */
function collect(): void {
  v8.setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
}

/** A caller's signal combined with a timeout the way the adapters do, with only the composite kept. */
function combined(timeout: (ms: number) => AbortSignal): AbortSignal {
  return AbortSignal.any([new AbortController().signal, timeout(50)]);
}

describe("timeoutSignal", () => {
  it("aborts a composite after a garbage collection, with a TimeoutError, where AbortSignal.timeout may not", async () => {
    const signal = combined(timeoutSignal);
    const fired = new Promise<unknown>((resolve) =>
      signal.addEventListener("abort", () => resolve(signal.reason)),
    );
    await sleep(5); // a collection at once can still find the timeout on the stack
    collect();
    const reason = await Promise.race([fired, sleep(2_000, "never")]);
    expect(reason).toMatchObject({ name: "TimeoutError" });
    expect(signal.aborted).toBe(true);
  });

  it("does not abort before its time", async () => {
    const signal = timeoutSignal(1_000);
    await sleep(20);
    expect(signal.aborted).toBe(false);
  });
});
