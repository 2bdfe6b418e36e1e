/**
 * What a job thread (`job-thread.ts`) and a job process (`job-process.ts`) share: one job at a time on one
 * worker (the others wait their turn), clocks that stop it (a wall-clock deadline, CPU time read from
 * `/proc`), a worker stopped once idle, and the worker's side of the conversation (`serveJobs`). What
 * differs is what a worker is, how it starts and stops, and so whose CPU time `/proc` counts: a thread's
 * own, or a whole process's (its collector's threads included).
 */
import { readFileSync, readlinkSync } from "node:fs";
import { parentPort } from "node:worker_threads";

/** The code of a job whose worker was stopped at its deadline (`run`'s `deadlineMs`). */
export const JOB_DEADLINE = "ERR_JOB_DEADLINE";
/** The code of a job whose worker was stopped once it had used its CPU time (`run`'s `cpuMs`). */
export const JOB_CPU = "ERR_JOB_CPU";
/** The code of a job whose worker ran out of its heap: V8 ends a thread or a process there. */
export const JOB_MEMORY = "ERR_WORKER_OUT_OF_MEMORY";

/** How often a job's CPU time is read while it runs. */
const CPU_POLL_MS = 50;

/** Long enough for a burst of jobs to share one worker's start, short against an idle host's hours. */
export const DEFAULT_IDLE_MS = 120_000;

/** A job the worker failed: its error's message and, when it had them, its code and HTTP status. */
export class JobFailedError extends Error {
  constructor(
    message: string,
    readonly code?: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "JobFailedError";
  }
}

export interface RunOptions {
  /**
   * Wall-clock time the job may run once the worker has taken it (its wait in the queue and the worker's
   * start are not counted: those are the caller's own budget's). Past it the worker is stopped and the
   * job rejects with a `JobFailedError` of code `JOB_DEADLINE`.
   */
  deadlineMs?: number;
  /**
   * CPU time the worker may use on the job, read from `/proc` every 50 ms (Linux; a thread's own time for
   * a job thread, every thread of the process for a job process), so a job on a busy host is not stopped
   * for the time others took. Past it the worker is stopped and the job rejects with code `JOB_CPU`. Where
   * that time cannot be read, only `deadlineMs` holds.
   */
  cpuMs?: number;
}

/** What a worker answers: it took the job (where to read its CPU time), or the job's outcome. */
export type Reply<Result> =
  | { ready: true }
  | { id: number; started: true; task?: string; cpuMs?: number }
  | { id: number; result: Result }
  | { id: number; error: { message: string; code?: string; status?: number } };

/** What a started worker tells its runner. */
export interface WorkerEvents<Result> {
  reply(reply: Reply<Result>): void;
  /** The worker is gone (died, or exited on its own): the error its running job fails with. */
  lost(error: unknown): void;
}

/** A started worker, as its runner drives it. */
export interface JobWorker {
  post(message: { id: number; job: unknown }): void;
  /** Stops it at once; its end is not reported to `WorkerEvents.lost`. Settles once it is gone. */
  stop(): Promise<void>;
}

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

export abstract class JobRunner<Job, Result> {
  private worker: JobWorker | undefined;
  private readonly queue: Pending<Job, Result>[] = [];
  private running: Pending<Job, Result> | undefined;
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(private readonly idleMs: number) {}

  /** Starts a worker whose replies and end go to `events`. */
  protected abstract launch(events: WorkerEvents<Result>): JobWorker;

  /** Runs `job` in the worker; rejects with the signal's reason if it aborts first. */
  run(job: Job, signal?: AbortSignal, options: RunOptions = {}): Promise<Result> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<Result>((resolve, reject) => {
      const pending: Pending<Job, Result> = { id: this.nextId++, job, resolve, reject, signal, options };
      signal?.addEventListener("abort", () => this.abort(pending), { once: true });
      this.queue.push(pending);
      this.pump();
    });
  }

  /** Stops the worker; waiting and running jobs are rejected. */
  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    const error = new Error("the job worker is closed");
    for (const p of this.queue.splice(0)) p.reject(error);
    if (this.running) stopWatching(this.running);
    this.running?.reject(error);
    this.running = undefined;
    const worker = this.worker;
    this.worker = undefined;
    await worker?.stop();
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
    this.spawn().post({ id: next.id, job: next.job });
  }

  private spawn(): JobWorker {
    if (this.worker) return this.worker;
    // Events of a worker since replaced (stopped at a deadline, then its exit reported) are not this one's.
    const self: { worker?: JobWorker } = {};
    const current = () => self.worker !== undefined && this.worker === self.worker;
    self.worker = this.launch({
      reply: (reply) => {
        if (current()) this.answer(reply);
      },
      lost: (error) => {
        if (current()) this.lose(error);
      },
    });
    this.worker = self.worker;
    return self.worker;
  }

  private answer(reply: Reply<Result>): void {
    const running = this.running;
    if ("ready" in reply || !running || running.id !== reply.id) return;
    if ("started" in reply) {
      this.startClocks(running, reply.task, reply.cpuMs);
      return;
    }
    stopWatching(running);
    this.running = undefined;
    if ("error" in reply) {
      const { message, code, status } = reply.error;
      running.reject(new JobFailedError(message, code, status));
    } else running.resolve(reply.result);
    this.pump();
  }

  /**
   * Starts the job's clocks. `task`: the `/proc` directory whose CPU time is the job's, when the worker
   * could name it; `cpuAtStart`: that time as the worker read it on taking the job, if it did.
   */
  private startClocks(pending: Pending<Job, Result>, task?: string, cpuAtStart?: number): void {
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
    const start = task === undefined ? undefined : (cpuAtStart ?? cpuTimeMs(task));
    if (cpuMs === undefined || task === undefined || start === undefined) return;
    pending.cpuWatch = setInterval(() => {
      const used = (cpuTimeMs(task) ?? start) - start;
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
    void worker?.stop();
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
      void worker.stop();
    }, this.idleMs);
    this.idleTimer.unref();
  }

  /** The worker died or exited: fail its job and start over with the queue. */
  private lose(error: unknown): void {
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

/**
 * The worker's side, in a worker thread or a child process (`job-process.ts`): answers each job its runner
 * sends with `run`'s result or its error (an `AppError`'s status and code kept, so the runner's caller can
 * answer the same refusal).
 */
export function serveJobs<Job, Result>(run: (job: Job) => Result | Promise<Result>): void {
  const port = parentPort;
  const send: ((reply: Reply<Result>) => void) | undefined = port
    ? (reply) => port.postMessage(reply)
    : process.send && ((reply) => process.send?.(reply));
  if (!send) throw new Error("serveJobs runs in a worker thread or a child process with an IPC channel");
  const onJob = async ({ id, job }: { id: number; job: Job }) => {
    // The job's clocks count from here: a fresh worker's start is not the job's.
    send(port ? { id, started: true, task: ownTask() } : { id, started: true, ...ownProcess() });
    try {
      send({ id, result: await run(job) });
    } catch (error) {
      const { code, status } = error as { code?: unknown; status?: unknown };
      send({
        id,
        error: {
          message: error instanceof Error ? error.message : String(error),
          ...(typeof code === "string" && { code }),
          ...(typeof status === "number" && { status }),
        },
      });
    }
  };
  if (port) {
    port.on("message", onJob);
    return;
  }
  process.on("message", onJob);
  // The runner's process is gone (or has stopped this one): nothing is left to answer.
  process.on("disconnect", () => process.exit(0));
  // A process reads its channel from its start: jobs are sent once it listens, or they would be lost.
  send({ ready: true });
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

/** This process's `/proc` directory and its CPU time so far, all threads together. */
function ownProcess(): { task?: string; cpuMs: number } {
  const { user, system } = process.cpuUsage();
  const task = `/proc/${process.pid}`;
  return { ...(cpuTimeMs(task) !== undefined && { task }), cpuMs: (user + system) / 1000 };
}

/**
 * CPU time of a thread (`/proc/<pid>/task/<tid>`) or of a whole process, every thread it has or had
 * (`/proc/<pid>`), in ms: user and system time, fields 14 and 15 of its `stat`, in the clock ticks of Linux's
 * user ABI (USER_HZ, 100 a second on every architecture Node runs on). Undefined once it is gone or where
 * there is no `/proc`.
 */
export function cpuTimeMs(task: string): number | undefined {
  try {
    const stat = readFileSync(`${task}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}
