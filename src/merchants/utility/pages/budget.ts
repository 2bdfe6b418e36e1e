/**
 * What a page endpoint's call may spend reading its page, per $0.001 of its price (`work.ts` enforces it).
 * Apart from `work.ts` so the configuration, which every command reads, does not load the page engines.
 */

export interface PageBudget {
  /**
   * Milliseconds of CPU the process may spend parsing and reading the page (the fetch is not counted: it
   * has its own 10 s): half in the worker's thread, half left to V8's collector threads (`work.ts`).
   */
  cpuMs: number;
  /** Heap of the worker, in MB. */
  heapMb: number;
}

/** Issue 69's budget: 2 CPU-s and 200 MB per call at a tenth of a cent. */
export const DEFAULT_PAGE_BUDGET: PageBudget = { cpuMs: 2_000, heapMb: 200 };
