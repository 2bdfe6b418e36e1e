/**
 * The bounded work of the page endpoints (alt-check, scrape, summarize, seo/metadata, and a11y/check's
 * audit): the page is fetched on the request loop (I/O), then parsed and read in a child process, one per
 * endpoint, one page at a time (`JobProcess`), under a CPU budget and a wall-clock deadline (the process is
 * killed at either) and a heap cap (its `--max-old-space-size`). A hostile page of 3 MB parsed on the
 * request loop took minutes of CPU, during which every host of the process, `/healthz` included, stood still
 * (issue 69); here it costs at most its budget, is refused past it (422 `too_complex`, naming the limit,
 * never charged), and the loop keeps answering.
 *
 * The budget scales with the price: `cpuMs` and `heapMb` per $0.001 (settings, `X402M_PAGE_CPU_MS` and
 * `X402M_PAGE_HEAP_MB`), so `/api/summarize` at $0.002 gets twice the CPU and memory of `/api/scrape`. CPU,
 * not wall-clock time, because on a busy host a reader gets a fraction of a core (a fifth, on the 2 cores
 * this was measured on): a wall-clock deadline refused ordinary pages there. The CPU counted is the whole
 * process's, V8's collector threads included: in a worker thread only the thread's own time could be read,
 * and the collector and the thread's teardown, which no thread's clock attributes to it, took the process
 * 3-7% past the budget whatever share of it the thread was given (docs/benchmarks-log.md). The wall-clock
 * deadline ends a job whose process is starved, and is the only limit where CPU time cannot be read
 * (outside Linux).
 */
import { AppError } from "../../../common/errors.ts";
import { JobProcess } from "../job-process.ts";
import { JOB_CPU, JOB_DEADLINE, JOB_MEMORY, JobFailedError } from "../job-runner.ts";
import { DEFAULT_PAGE_BUDGET, type PageBudget } from "./budget.ts";
import { PAGE_ERRORS } from "./page.ts";
import { type FetchedPage, PageError } from "./parse.ts";

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
 * How long an idle page worker lives: short, since its memory (jsdom, and what the last page left) is the
 * host's only while pages come; a fresh start costs about 1 s of CPU, off the loop.
 */
export const PAGE_IDLE_MS = 10_000;

/**
 * The share of a call's CPU budget its reading's process may use. The rest is the host's part of the call,
 * which does not grow with the page's reading: the payment's checks, fetching and decoding the page and
 * handing it over (30-190 ms beside a reading of 3 MB cut at 1.8 s), and the reading's overshoot past its
 * cap before the next look at its clock (30-70 ms, its thread's and the collector's, and its exit).
 */
const PROCESS_SHARE = 0.85;

/** The share of a call's memory budget its worker's heap may take. */
const HEAP_SHARE = 0.6;

/**
 * Wall-clock time a job may take per unit of its process's CPU. The deadline does not guard the budget (the
 * process's CPU does, where Linux counts it); it ends a reading the host starves (a process given less than
 * 40% of a core), which holds its endpoint's queue and its caller. 4.25 s at $0.001, about the threads' 4.5.
 */
const WALL_PER_CPU = 2.5;

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
}

/** A page endpoint's worker and its limits, for a price in dollars ("0.002"). */
export class PageWorker {
  /** The call's CPU budget, the host's and the reading's process's together. */
  readonly cpuMs: number;
  /** What of it the reading's process may use, all its threads together (`PROCESS_SHARE`). */
  readonly processCpuMs: number;
  readonly deadlineMs: number;
  readonly heapMb: number;
  private readonly process: JobProcess<PageJob, unknown>;

  constructor(price: string, budget: PageBudget = DEFAULT_PAGE_BUDGET, worker: WorkerChoice = {}) {
    const scale = Number(price) / 0.001;
    this.cpuMs = Math.round(budget.cpuMs * scale);
    this.processCpuMs = Math.round(this.cpuMs * PROCESS_SHARE);
    this.deadlineMs = Math.round(this.processCpuMs * WALL_PER_CPU);
    // The heap is part of what the host grows by, and V8 collects without pause as it nears its cap
    // (a summarize refused at its 400 MB cap spent 3.5 CPU-s collecting): the cap is kept below the budget.
    this.heapMb = Math.min(
      Math.round(budget.heapMb * scale * HEAP_SHARE),
      worker.maxHeapMb ?? Number.POSITIVE_INFINITY,
    );
    this.process = new JobProcess(worker.module ?? new URL("./page-worker.ts", import.meta.url), {
      idleMs: worker.idleMs ?? PAGE_IDLE_MS,
      maxOldSpaceMb: this.heapMb,
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
      const limits = { cpuMs: this.processCpuMs, deadlineMs: this.deadlineMs };
      return (await this.process.run(job as PageJob, signal, limits)) as Result;
    } catch (error) {
      throw this.refusal(error);
    }
  }

  /** Whether its worker is started, for tests of memory given back. */
  get started(): boolean {
    return this.process.started;
  }

  close(): Promise<void> {
    return this.process.close();
  }

  private refusal(error: unknown): unknown {
    const code = (error as { code?: unknown }).code;
    if (code === JOB_CPU) {
      return new PageError(
        `reading the page needs more than this endpoint's CPU budget of ${this.cpuMs} ms (X402M_PAGE_CPU_MS per $0.001; ${this.processCpuMs} ms in the reading's process, its garbage collector included); the call is not charged`,
        "too_complex",
        AFTER_WORK,
      );
    }
    if (code === JOB_DEADLINE) {
      return new PageError(
        `reading the page took longer than this endpoint's deadline of ${this.deadlineMs} ms (${WALL_PER_CPU} times the CPU of its process); the call is not charged`,
        "too_complex",
        AFTER_WORK,
      );
    }
    if (code === JOB_MEMORY) {
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
