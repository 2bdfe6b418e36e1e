import { afterAll, describe, expect, it } from "vitest";
import type { RgbaImage } from "../../../../src/merchants/utility/vectorize/bmp.ts";
import { trace } from "../../../../src/merchants/utility/vectorize/trace.ts";
import { TraceThread } from "../../../../src/merchants/utility/vectorize/trace-thread.ts";

/** Two colour blocks: traced in milliseconds. */
function blocks(): RgbaImage {
  const width = 40;
  const height = 20;
  const data = new Uint8Array(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    const left = i % width < width / 2;
    data.set(left ? [220, 20, 60, 255] : [30, 144, 255, 255], i * 4);
  }
  return { width, height, data };
}

/** Seeded noise in many colours: seconds of tracing at high detail. */
function noise(side: number): RgbaImage {
  const data = new Uint8Array(side * side * 4);
  let x = 12345;
  for (let i = 0; i < data.length; i += 4) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    data.set([x & 255, (x >> 8) & 255, (x >> 16) & 255, 255], i);
  }
  return { width: side, height: side, data };
}

const thread = new TraceThread();
afterAll(() => thread.close());

describe("tracing in a worker thread", () => {
  it("gives what tracing on the thread gives", async () => {
    const options = { colors: 4, detail: "medium" } as const;
    expect(await thread.trace(blocks(), options, 2)).toEqual(trace(blocks(), options, 2));
  }, 30_000);

  it("keeps the event loop free while a large image is traced, and stops it when the caller gives up", async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    const controller = new AbortController();
    const started = performance.now();
    const job = thread.trace(noise(600), { colors: 64, detail: "high" }, 1, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 400));
    controller.abort(new Error("the caller went away"));
    await expect(job).rejects.toThrow("the caller went away");
    clearInterval(timer);
    // The timers ran while the worker traced: about 40 ticks in 400 ms, not 0.
    expect(ticks).toBeGreaterThan(15);
    expect(performance.now() - started).toBeLessThan(2_000);
    // A fresh worker serves the next image.
    const drawing = await thread.trace(blocks(), { colors: 2, detail: "low" }, 1);
    expect(drawing.shapes.map((s) => s.color).sort()).toEqual(["#1e90ff", "#dc143c"]);
  }, 30_000);

  it("drops a waiting job whose caller gives up, without running it", async () => {
    const controller = new AbortController();
    const first = thread.trace(blocks(), { colors: 2, detail: "low" }, 1);
    const second = thread.trace(blocks(), { colors: 2, detail: "low" }, 1, controller.signal);
    controller.abort(new Error("gone"));
    await expect(second).rejects.toThrow("gone");
    await expect(first).resolves.toMatchObject({ width: 40, height: 20 });
    const already = new AbortController();
    already.abort(new Error("before it started"));
    await expect(thread.trace(blocks(), { colors: 2, detail: "low" }, 1, already.signal)).rejects.toThrow(
      "before it started",
    );
  }, 30_000);
});
