/**
 * Local tracing off the event loop: tracing a 1024 px image at high detail takes seconds of synchronous
 * JavaScript, run in a worker thread (`../job-thread.ts`, one image at a time, stopped when the caller's
 * signal aborts).
 */
import { JobThread } from "../job-thread.ts";
import type { RgbaImage } from "./bmp.ts";
import type { Drawing } from "./drawing.ts";
import type { TraceOptions } from "./trace.ts";
import type { TraceJob } from "./trace-worker.ts";

export class TraceThread {
  private readonly thread = new JobThread<TraceJob, Drawing>(new URL("./trace-worker.ts", import.meta.url));

  /** Traces `image` in the worker; rejects with the signal's reason if it aborts first. */
  trace(image: RgbaImage, options: TraceOptions, scale: number, signal?: AbortSignal): Promise<Drawing> {
    return this.thread.run({ image, options, scale }, signal);
  }

  /** Stops the worker; waiting and running jobs are rejected. */
  close(): Promise<void> {
    return this.thread.close();
  }
}

/** The process's tracer, started on first use. */
let shared: TraceThread | undefined;
export function traceThread(): TraceThread {
  shared ??= new TraceThread();
  return shared;
}
