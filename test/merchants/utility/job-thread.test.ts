import { afterAll, describe, expect, it } from "vitest";
import { JobThread } from "../../../src/merchants/utility/job-thread.ts";
import type { Drawing } from "../../../src/merchants/utility/vectorize/drawing.ts";
import type { TraceJob } from "../../../src/merchants/utility/vectorize/trace-worker.ts";

const WORKER = new URL("../../../src/merchants/utility/vectorize/trace-worker.ts", import.meta.url);

/** A 2 x 1 image of two colours: traced in microseconds, so the worker's life is what is measured. */
const job: TraceJob = {
  image: { width: 2, height: 1, data: new Uint8Array([255, 0, 0, 255, 0, 0, 255, 255]) },
  options: { colors: 2, detail: "low" },
  scale: 1,
};

const thread = new JobThread<TraceJob, Drawing>(WORKER, { idleMs: 300 });
afterAll(() => thread.close());

describe("a job thread's worker", () => {
  it("is stopped once idle, so what its jobs loaded is not held for ever, and a later job starts a new one", async () => {
    await thread.run(job);
    expect(thread.started).toBe(true);
    // Jobs closer together than idleMs share the worker.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(thread.started).toBe(true);
    await thread.run(job);
    await expect.poll(() => thread.started, { timeout: 5_000, interval: 50 }).toBe(false);
    await expect(thread.run(job)).resolves.toMatchObject({ width: 2, height: 1 });
    expect(thread.started).toBe(true);
  }, 30_000);
});
