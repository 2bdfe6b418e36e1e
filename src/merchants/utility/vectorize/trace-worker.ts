/**
 * The worker thread side of `TraceThread`: traces one image per message with `trace()`.
 */
import { parentPort } from "node:worker_threads";
import type { RgbaImage } from "./bmp.ts";
import { type TraceOptions, trace } from "./trace.ts";

export interface TraceJob {
  id: number;
  image: RgbaImage;
  options: TraceOptions;
  scale: number;
}

parentPort?.on("message", (job: TraceJob) => {
  try {
    parentPort?.postMessage({ id: job.id, drawing: trace(job.image, job.options, job.scale) });
  } catch (error) {
    parentPort?.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) });
  }
});
