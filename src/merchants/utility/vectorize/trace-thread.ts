/**
 * Local tracing off the event loop. Tracing a 1024 px image at high detail takes seconds of synchronous
 * JavaScript: on the server's thread it would stall every other request, and a caller's timeout could not
 * stop it. Here one worker thread traces one image at a time (the others wait their turn); a job whose
 * signal aborts while it runs has its worker terminated, and the next job starts a fresh one.
 */
import { Worker } from "node:worker_threads";
import type { RgbaImage } from "./bmp.ts";
import type { Drawing, TraceOptions } from "./trace.ts";
import type { TraceJob } from "./trace-worker.ts";

/** Registers tsx in the thread, then loads `trace-worker.ts`. */
const BOOT = new URL("./trace-worker-boot.mjs", import.meta.url);

interface Pending {
  job: TraceJob;
  resolve(drawing: Drawing): void;
  reject(error: unknown): void;
  signal?: AbortSignal;
}

export class TraceThread {
  private worker: Worker | undefined;
  private readonly queue: Pending[] = [];
  private running: Pending | undefined;
  private nextId = 1;

  /** Traces `image` in the worker; rejects with the signal's reason if it aborts first. */
  trace(image: RgbaImage, options: TraceOptions, scale: number, signal?: AbortSignal): Promise<Drawing> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<Drawing>((resolve, reject) => {
      const pending: Pending = { job: { id: this.nextId++, image, options, scale }, resolve, reject, signal };
      signal?.addEventListener("abort", () => this.abort(pending), { once: true });
      this.queue.push(pending);
      this.pump();
    });
  }

  /** Stops the worker; waiting and running jobs are rejected. */
  async close(): Promise<void> {
    const error = new Error("the tracer is closed");
    for (const p of this.queue.splice(0)) p.reject(error);
    this.running?.reject(error);
    this.running = undefined;
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private pump(): void {
    if (this.running) return;
    const next = this.queue.shift();
    if (!next) return;
    this.running = next;
    this.spawn().postMessage(next.job);
  }

  private spawn(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(BOOT);
    // An idle worker must not keep the process alive.
    worker.unref();
    worker.on("message", (message: { id: number; drawing?: Drawing; error?: string }) => {
      const running = this.running;
      if (!running || running.job.id !== message.id) return;
      this.running = undefined;
      if (message.drawing) running.resolve(message.drawing);
      else running.reject(new Error(message.error ?? "tracing failed"));
      this.pump();
    });
    worker.on("error", (error) => this.lose(worker, error));
    worker.on("exit", (code) => this.lose(worker, new Error(`the tracing thread exited (${code})`)));
    this.worker = worker;
    return worker;
  }

  /** The worker died or was terminated: fail its job and start over with the queue. */
  private lose(worker: Worker, error: unknown): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    const running = this.running;
    this.running = undefined;
    running?.reject(error);
    this.pump();
  }

  private abort(pending: Pending): void {
    const reason = pending.signal?.reason ?? new Error("aborted");
    const queued = this.queue.indexOf(pending);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      pending.reject(reason);
      return;
    }
    if (this.running !== pending) return;
    this.running = undefined;
    pending.reject(reason);
    const worker = this.worker;
    this.worker = undefined;
    void worker?.terminate();
    this.pump();
  }
}

/** The process's tracer, started on first use. */
let shared: TraceThread | undefined;
export function traceThread(): TraceThread {
  shared ??= new TraceThread();
  return shared;
}
