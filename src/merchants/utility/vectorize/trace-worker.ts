/**
 * The worker thread side of `TraceThread`: traces one image per job with `trace()`.
 */
import { serveJobs } from "../job-runner.ts";
import type { RgbaImage } from "./bmp.ts";
import type { Drawing } from "./drawing.ts";
import { type TraceOptions, trace } from "./trace.ts";

export interface TraceJob {
  image: RgbaImage;
  options: TraceOptions;
  scale: number;
}

serveJobs<TraceJob, Drawing>((job) => trace(job.image, job.options, job.scale));
