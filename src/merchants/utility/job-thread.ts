/**
 * Seconds of synchronous JavaScript off the event loop (tracing an image, auditing a page with axe-core on
 * jsdom). On the server's thread such a job would stall every other request, and a caller's time budget could
 * not stop it. Here one worker thread runs one job at a time (the others wait their turn); a job whose signal
 * aborts while it runs, or that passes its wall-clock deadline or its thread's CPU time (`RunOptions`), has
 * its worker terminated, and the next job starts a fresh one. A worker idle for
 * `idleMs` is stopped too: what its job loaded (jsdom and axe-core hold about 130 MB) is the host's memory
 * only while such jobs come, and the next job pays a fresh start (about 2.5 s of CPU for the audit's).
 *
 * The worker is a module that calls `serveJobs` with its job function; `worker-boot.mjs` registers tsx in
 * the thread first, since the sources are TypeScript.
 *
 * @example
 * const thread = new JobThread<TraceJob, Drawing>(new URL("./trace-worker.ts", import.meta.url));
 * const drawing = await thread.run(job, ctx.signal);
 */
import { readFileSync, readlinkSync } from "node:fs";
import { parentPort, type ResourceLimits, Worker } from "node:worker_threads";

const BOOT = new URL("./worker-boot.mjs", import.meta.url);

/** The code of a job whose worker was stopped at its deadline (`run`'s `deadlineMs`). */
export const JOB_DEADLINE = "ERR_JOB_DEADLINE";
/** The code of a job whose worker was stopped once it had used its CPU time (`run`'s `cpuMs`). */
export const JOB_CPU = "ERR_JOB_CPU";

/** How often a job's CPU time is read while it runs. */
const CPU_POLL_MS = 50;

/** A job the worker failed: its error's message and, when it had one, its code. */
export class JobFailedError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = "JobFailedError";
  }
}

export interface JobThreadOptions {
  /** Heap limits of the worker: a job past them kills the worker, not the process (ERR_WORKER_OUT_OF_MEMORY). */
  resourceLimits?: ResourceLimits;
  /** How long a worker with no job lives on before it is stopped. Default `DEFAULT_IDLE_MS`. */
  idleMs?: number;
}

/** Long enough for a burst of jobs to share one worker's start, short against an idle host's hours. */
export const DEFAULT_IDLE_MS = 120_000;

type Reply<Result> =
  | { id: number; started: true; task?: string }
  | { id: number; result: Result }
  | { id: number; error: { message: string; code?: string } };

interface Pending<Job, Result> {
  id: number;
  job: Job;
  resolve(result: Result): void;
  reject(error: unknown): void;
  signal?: AbortSignal;
  options: RunOptions;
  deadline?: NodeJS.Timeout;
  cpuWatch?: NodeJS.Timeout;
}

export interface RunOptions {
  /**
   * Wall-clock time the job may run once the worker has taken it (its wait in the queue and the worker's
   * start are not counted: those are the caller's own budget's). Past it the worker is terminated and the
   * job rejects with a `JobFailedError` of code `JOB_DEADLINE`.
   */
  deadlineMs?: number;
  /**
   * CPU time the worker's thread may use on the job (Linux: read from `/proc/<pid>/task/<tid>/stat` every
   * 50 ms, so a job on a busy host is not stopped for the time other threads took). Past it the worker is
   * terminated and the job rejects with code `JOB_CPU`. Where a thread's CPU time cannot be read, only
   * `deadlineMs` holds.
   */
  cpuMs?: number;
}

export class JobThread<Job, Result> {
  private worker: Worker | undefined;
  private readonly queue: Pending<Job, Result>[] = [];
  private running: Pending<Job, Result> | undefined;
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | undefined;

  /** `module`: the worker's source, a file that calls `serveJobs`. */
  constructor(
    private readonly module: URL,
    private readonly options: JobThreadOptions = {},
  ) {}

  /** Runs `job` in the worker; rejects with the signal's reason if it aborts first. */
  run(job: Job, signal?: AbortSignal, options: RunOptions = {}): Promise<Result> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<Result>((resolve, reject) => {
      const pending: Pending<Job, Result> = {
        id: this.nextId++,
        job,
        resolve,
        reject,
        signal,
        options,
      };
      signal?.addEventListener("abort", () => this.abort(pending), { once: true });
      this.queue.push(pending);
      this.pump();
    });
  }

  /** Stops the worker; waiting and running jobs are rejected. */
  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    const error = new Error("the worker thread is closed");
    for (const p of this.queue.splice(0)) p.reject(error);
    if (this.running) stopWatching(this.running);
    this.running?.reject(error);
    this.running = undefined;
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  /** Whether a worker is started (running a job or waiting for one), for health reports and tests. */
  get started(): boolean {
    return this.worker !== undefined;
  }

  private pump(): void {
    if (this.running) return;
    const next = this.queue.shift();
    if (!next) {
      this.idleAfter();
      return;
    }
    clearTimeout(this.idleTimer);
    this.running = next;
    this.spawn().postMessage({ id: next.id, job: next.job });
  }

  private spawn(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(BOOT, {
      workerData: { module: this.module.href },
      ...(this.options.resourceLimits && { resourceLimits: this.options.resourceLimits }),
    });
    // An idle worker must not keep the process alive.
    worker.unref();
    worker.on("message", (reply: Reply<Result>) => {
      const running = this.running;
      if (!running || running.id !== reply.id) return;
      if ("started" in reply) {
        this.startDeadline(running, reply.task);
        return;
      }
      stopWatching(running);
      this.running = undefined;
      if ("error" in reply) running.reject(new JobFailedError(reply.error.message, reply.error.code));
      else running.resolve(reply.result);
      this.pump();
    });
    worker.on("error", (error) => this.lose(worker, error));
    worker.on("exit", (code) => this.lose(worker, new Error(`the worker thread exited (${code})`)));
    this.worker = worker;
    return worker;
  }

  /** Starts the job's clocks; `task`: its thread's `/proc` directory, when the worker could name it. */
  private startDeadline(pending: Pending<Job, Result>, task: string | undefined): void {
    const { deadlineMs, cpuMs } = pending.options;
    if (deadlineMs !== undefined) {
      pending.deadline = setTimeout(() => {
        if (this.running !== pending) return;
        this.stopRunning(
          new JobFailedError(`the job ran past its deadline of ${deadlineMs} ms`, JOB_DEADLINE),
        );
      }, deadlineMs);
      pending.deadline.unref();
    }
    const start = task === undefined ? undefined : threadCpuMs(task);
    if (cpuMs === undefined || task === undefined || start === undefined) return;
    pending.cpuWatch = setInterval(() => {
      const used = (threadCpuMs(task) ?? start) - start;
      if (this.running !== pending || used < cpuMs) return;
      this.stopRunning(new JobFailedError(`the job used more than its ${cpuMs} ms of CPU`, JOB_CPU));
    }, CPU_POLL_MS);
    pending.cpuWatch.unref();
  }

  /** Stops the worker with its job (rejected with `error`); the queue goes on in a fresh one. */
  private stopRunning(error: unknown): void {
    const running = this.running;
    if (!running) return;
    stopWatching(running);
    this.running = undefined;
    running.reject(error);
    const worker = this.worker;
    this.worker = undefined;
    void worker?.terminate();
    this.pump();
  }

  /** Stops the worker once it has had no job for `idleMs`. */
  private idleAfter(): void {
    const worker = this.worker;
    if (!worker) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.worker !== worker || this.running) return;
      this.worker = undefined;
      void worker.terminate();
    }, this.options.idleMs ?? DEFAULT_IDLE_MS);
    this.idleTimer.unref();
  }

  /** The worker died or was terminated: fail its job and start over with the queue. */
  private lose(worker: Worker, error: unknown): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    const running = this.running;
    this.running = undefined;
    if (running) stopWatching(running);
    running?.reject(error);
    this.pump();
  }

  private abort(pending: Pending<Job, Result>): void {
    const reason = pending.signal?.reason ?? new Error("aborted");
    const queued = this.queue.indexOf(pending);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      pending.reject(reason);
      return;
    }
    if (this.running === pending) this.stopRunning(reason);
  }
}

/** The worker's side: answers each job the thread posts with `run`'s result or its error. */
export function serveJobs<Job, Result>(run: (job: Job) => Result | Promise<Result>): void {
  const port = parentPort;
  if (!port) throw new Error("serveJobs runs in a worker thread");
  port.on("message", async ({ id, job }: { id: number; job: Job }) => {
    // The thread's deadline counts from here: a fresh worker's start is not the job's.
    port.postMessage({ id, started: true, task: ownTask() } satisfies Reply<Result>);
    try {
      port.postMessage({ id, result: await run(job) } satisfies Reply<Result>);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      port.postMessage({
        id,
        error: {
          message: error instanceof Error ? error.message : String(error),
          ...(typeof code === "string" && { code }),
        },
      } satisfies Reply<Result>);
    }
  });
}

function stopWatching(pending: { deadline?: NodeJS.Timeout; cpuWatch?: NodeJS.Timeout }): void {
  clearTimeout(pending.deadline);
  clearInterval(pending.cpuWatch);
}

/** This thread's `/proc` directory (`/proc/<pid>/task/<tid>`), where Linux has one. */
function ownTask(): string | undefined {
  try {
    // The link reads "<pid>/task/<tid>", relative to /proc.
    return `/proc/${readlinkSync("/proc/thread-self")}`;
  } catch {
    return undefined;
  }
}

/**
 * CPU time a thread has used, in ms: user and system time, fields 14 and 15 of its `stat`, in the clock
 * ticks of Linux's user ABI (USER_HZ, 100 a second on every architecture Node runs on). Undefined once the
 * thread is gone or where there is no `/proc`.
 */
function threadCpuMs(task: string): number | undefined {
  try {
    const stat = readFileSync(`${task}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}
