/**
 * The bounded work of the page endpoints (alt-check, scrape, summarize, seo/metadata): the page is fetched
 * on the request loop (I/O), then parsed and read in a worker thread, one per endpoint, one page at a time,
 * under a CPU budget and a wall-clock deadline (the worker is terminated at either) and a heap cap (the
 * worker's `resourceLimits`). A hostile page of 3 MB parsed on the request loop took minutes of CPU, during which
 * every host of the process, `/healthz` included, stood still (issue 69); here it costs at most its budget,
 * is refused past it (422 `too_complex`, naming the limit, never charged), and the loop keeps answering.
 *
 * The budget scales with the price: `cpuMs` and `heapMb` per $0.001 (settings, `X402M_PAGE_CPU_MS` and
 * `X402M_PAGE_HEAP_MB`), so `/api/summarize` at $0.002 gets twice the CPU and memory of `/api/scrape`. CPU,
 * not wall-clock time, because on a busy host a thread gets a fraction of a core (a fifth, on the 2 cores
 * this was measured on): a wall-clock deadline refused ordinary pages there. The wall-clock deadline, five
 * times the thread's CPU, ends a job whose thread is starved, and is the only limit where a thread's CPU
 * time cannot be read (outside Linux).
 */
import { AppError } from "../../../common/errors.ts";
import { JOB_CPU, JOB_DEADLINE, JobFailedError, JobThread } from "../job-thread.ts";
import { DEFAULT_PAGE_BUDGET, type PageBudget } from "./budget.ts";
import { type FetchedPage, PAGE_ERRORS, PageError } from "./page.ts";

/** What a page worker is asked (`page-worker.ts` answers): which reading, of which fetched page. */
export type PageTask =
  | { kind: "alt-check" }
  | { kind: "scrape" }
  | { kind: "metadata" }
  | { kind: "summarize"; sentences: number };

export { DEFAULT_PAGE_BUDGET, type PageBudget };

export type PageJob = PageTask & { page: FetchedPage };

/** The refusals of a page endpoint whose reading runs here: the fetch's, and the budget's. */
export const WORK_ERRORS = {
  ...PAGE_ERRORS,
  422: `${PAGE_ERRORS[422]} Or reading the page would exceed the call's deadline or memory cap (too_complex; the message names the limit).`,
} as const;

/**
 * How long an idle page worker lives: short, since its heap (jsdom, and what the last page left) is the
 * host's memory only while pages come; a fresh start costs about 1 s of CPU, off the loop.
 */
export const PAGE_IDLE_MS = 10_000;

/**
 * The share of a call's CPU budget its reading's thread may use. V8's collector runs on threads the whole
 * process shares, which no per-thread clock attributes to the worker, and on a large page it spent about as
 * much again: a summarize stopped at 4 s of its thread's CPU cost the process 8.7 (3 MB page, 2 cores).
 */
const THREAD_SHARE = 0.45;

/** The share of a call's memory budget its worker's heap may take. */
const HEAP_SHARE = 0.6;

/** Wall-clock time a job may take per unit of its thread's CPU: a thread given a fifth of a core still ends. */
const WALL_PER_CPU = 5;

/** A worker's young generation, in MB: three 4 MB semi-spaces' worth. */
const YOUNG_MB = 12;

/** Budget refusals come once the work has run: the payer is counted for them as for a failure. */
const AFTER_WORK = { afterWork: true };

/** Codes the engines refuse a page with, raised in the worker and answered as the same 422 here. */
const PAGE_CODES = new Set(["no_text", "too_complex", "page_status", "not_html"]);

/**
 * Another worker than the page readers' (the accessibility audit's, `a11y-worker.ts`), on the same budget:
 * its module, how long it idles (a costly start is worth keeping warm longer), and a lower heap cap.
 */
export interface WorkerChoice {
  module?: URL;
  idleMs?: number;
  maxHeapMb?: number;
  /** The share of the call's CPU its thread may use, where the collector takes less than half (`THREAD_SHARE`). */
  threadShare?: number;
}

/** A page endpoint's worker and its limits, for a price in dollars ("0.002"). */
export class PageWorker {
  /** The call's CPU budget, all threads of the process together. */
  readonly cpuMs: number;
  /** What of it the reading's own thread may use (`THREAD_SHARE`). */
  readonly threadCpuMs: number;
  readonly deadlineMs: number;
  readonly heapMb: number;
  private readonly thread: JobThread<PageJob, unknown>;

  constructor(price: string, budget: PageBudget = DEFAULT_PAGE_BUDGET, worker: WorkerChoice = {}) {
    const scale = Number(price) / 0.001;
    this.cpuMs = Math.round(budget.cpuMs * scale);
    this.threadCpuMs = Math.round(this.cpuMs * (worker.threadShare ?? THREAD_SHARE));
    this.deadlineMs = this.threadCpuMs * WALL_PER_CPU;
    // The heap is part of what the process grows by, and V8 collects without pause as it nears its cap
    // (a summarize refused at its 400 MB cap spent 3.5 CPU-s collecting): the cap is kept below the budget.
    this.heapMb = Math.min(
      Math.round(budget.heapMb * scale * HEAP_SHARE),
      worker.maxHeapMb ?? Number.POSITIVE_INFINITY,
    );
    this.thread = new JobThread(worker.module ?? new URL("./page-worker.ts", import.meta.url), {
      idleMs: worker.idleMs ?? PAGE_IDLE_MS,
      // The young generation as `serve` caps the main thread's (bin/x402-merchants): V8 would give each
      // worker 32 MB semi-spaces, memory the cap does not count and the host does not get back at once.
      resourceLimits: { maxOldGenerationSizeMb: this.heapMb, maxYoungGenerationSizeMb: YOUNG_MB },
    });
  }

  /**
   * Runs `task` on `page` in the worker; refuses (422 `too_complex`) a page past the deadline or the heap.
   * `Result` is the caller's to name: the worker answers `task.kind`'s engine's result.
   */
  async run<Result>(task: PageTask, page: FetchedPage, signal: AbortSignal): Promise<Result> {
    return this.runJob<Result>({ ...task, page }, signal);
  }

  /** Runs a job of the worker's own shape (another worker module's, `WorkerChoice`) under the same limits. */
  async runJob<Result>(job: unknown, signal: AbortSignal): Promise<Result> {
    try {
      const limits = { cpuMs: this.threadCpuMs, deadlineMs: this.deadlineMs };
      return (await this.thread.run(job as PageJob, signal, limits)) as Result;
    } catch (error) {
      throw this.refusal(error);
    }
  }

  /** Whether its worker is started, for tests of memory given back. */
  get started(): boolean {
    return this.thread.started;
  }

  close(): Promise<void> {
    return this.thread.close();
  }

  private refusal(error: unknown): unknown {
    const code = (error as { code?: unknown }).code;
    if (code === JOB_CPU) {
      return new PageError(
        `reading the page needs more than this endpoint's CPU budget of ${this.cpuMs} ms (X402M_PAGE_CPU_MS per $0.001; ${this.threadCpuMs} ms in the reading's thread, the rest is the garbage collector's); the call is not charged`,
        "too_complex",
        AFTER_WORK,
      );
    }
    if (code === JOB_DEADLINE) {
      return new PageError(
        `reading the page took longer than this endpoint's deadline of ${this.deadlineMs} ms (${WALL_PER_CPU} times the CPU of its thread); the call is not charged`,
        "too_complex",
        AFTER_WORK,
      );
    }
    if (code === "ERR_WORKER_OUT_OF_MEMORY") {
      return new PageError(
        `reading the page needs more than this endpoint's memory cap of ${this.heapMb} MB (X402M_PAGE_HEAP_MB per $0.001); the call is not charged`,
        "too_complex",
        AFTER_WORK,
      );
    }
    if (error instanceof JobFailedError && typeof code === "string" && PAGE_CODES.has(code)) {
      return new AppError(422, code, error.message);
    }
    return error;
  }
}
