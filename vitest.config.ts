import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { useRunScratch } from "./test/scratch.ts";

/**
 * The demo test plays a whole week on a devnet (minutes, most of the run's length). Started first, it
 * overlaps the rest of the suite on the other worker instead of adding its minutes at the end.
 */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const long = (f: TestSpecification) => f.moduleId.endsWith("/test/demo/demo.test.ts");
    return [...sorted.filter(long), ...sorted.filter((f) => !long(f))];
  }
}

// Before the forks start: they, and every process a test starts, inherit it through TMPDIR.
useRunScratch();

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/setup-log.ts", "test/setup-scratch.ts"],
    globalSetup: ["test/scratch.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // DuckDB is multi-threaded on its own; two forks keep a 2-core machine responsive. A third saves 8% of
    // Vitest's wall time and none of the whole run's, and starves the CPU-bound tests (docs/benchmarks-log.md,
    // "CI time", 2026-11-27).
    pool: "forks",
    maxWorkers: 2,
    // Each fork runs file after file with the modules it has loaded (DuckDB, viem, the SDKs, PGlite's
    // WebAssembly) instead of a fresh process per file: the whole suite in 736 s instead of 882 s on 2 cores
    // (2026-11-25, docs/benchmarks-log.md "CI time"). Files share no state but what they import: no test mocks
    // modules or leaves globals changed.
    isolate: false,
    sequence: { sequencer: LongestFirst },
  },
});
