/**
 * Seconds of synchronous JavaScript off the event loop (tracing an image). On the server's thread such a job
 * would stall every other request, and a caller's time budget could not stop it. Here one worker thread runs
 * one job at a time (the others wait their turn); a job whose signal aborts while it runs, or that passes its
 * wall-clock deadline or its thread's CPU time (`RunOptions`), has its worker terminated, and the next job
 * starts a fresh one. A worker idle for `idleMs` is stopped too: what its job loaded is the host's memory only
 * while such jobs come, and the next job pays a fresh start.
 *
 * A thread's CPU clock does not see what V8's collector spends for it on threads the whole process shares, nor
 * the terminated worker's teardown: where the budget is a paid call's whole CPU, a job process
 * (`job-process.ts`), whose every thread is counted, holds it.
 *
 * The worker is a module that calls `serveJobs` with its job function; `src/common/worker-boot.mjs` registers tsx in
 * the thread first, since the sources are TypeScript.
 *
 * @example
 * const thread = new JobThread<TraceJob, Drawing>(new URL("./trace-worker.ts", import.meta.url));
 * const drawing = await thread.run(job, ctx.signal);
 */
import { type ResourceLimits, Worker } from "node:worker_threads";
import { DEFAULT_IDLE_MS, JobRunner, type JobWorker, type WorkerEvents } from "./job-runner.ts";

const BOOT = new URL("../../common/worker-boot.mjs", import.meta.url);

export interface JobThreadOptions {
  /** Heap limits of the worker: a job past them kills the worker, not the process (ERR_WORKER_OUT_OF_MEMORY). */
  resourceLimits?: ResourceLimits;
  /** How long a worker with no job lives on before it is stopped. Default `DEFAULT_IDLE_MS`. */
  idleMs?: number;
}

export class JobThread<Job, Result> extends JobRunner<Job, Result> {
  /** `module`: the worker's source, a file that calls `serveJobs`. */
  constructor(
    private readonly module: URL,
    private readonly options: JobThreadOptions = {},
  ) {
    super(options.idleMs ?? DEFAULT_IDLE_MS);
  }

  protected launch(events: WorkerEvents<Result>): JobWorker {
    const worker = new Worker(BOOT, {
      workerData: { module: this.module.href },
      ...(this.options.resourceLimits && { resourceLimits: this.options.resourceLimits }),
    });
    // An idle worker must not keep the process alive.
    worker.unref();
    worker.on("message", events.reply);
    worker.on("error", events.lost);
    worker.on("exit", (code) => events.lost(new Error(`the worker thread exited (${code})`)));
    return {
      post: (message) => worker.postMessage(message),
      stop: async () => {
        await worker.terminate();
      },
    };
  }
}
