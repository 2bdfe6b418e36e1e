import fs from "node:fs";
import path from "node:path";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

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

/** statfs's f_type of a tmpfs (linux/magic.h). */
const TMPFS_MAGIC = 0x01021994;
/** Free memory a tmpfs must offer before the tests' scratch goes there: the suite's peak is well under it. */
const TMPFS_MIN_FREE = 4 * 1024 ** 3;

/**
 * The tests' scratch directories (a PGlite cluster copied and removed per database case, 971 files and 39 MB;
 * the DuckDB stores, the devnets' saved chains) on a tmpfs where the machine has one with room, unless TMPDIR
 * is set: on the CI machines' ext4 (mounted with `discard`) removing one cluster blocked a fork 1-1.7 s and
 * took 75-90 ms of CPU, on /dev/shm 55-100 ms and 23 ms; the kernel's share of four PGlite-heavy files fell
 * from 15-19 CPU-s to 9 (docs/benchmarks-log.md, "CI time", 2026-11-29). Everything under it is a test's own
 * temporary state: nothing there must outlive the process, and a file there is the same file to a child.
 * Forks and the processes tests start inherit it through the environment (`os.tmpdir()` reads TMPDIR).
 */
function tmpfsScratch(): string | undefined {
  if (process.env.TMPDIR || process.platform !== "linux") return undefined;
  try {
    const shm = fs.statfsSync("/dev/shm");
    if (shm.type !== TMPFS_MAGIC || shm.bavail * shm.bsize < TMPFS_MIN_FREE) return undefined;
    const dir = path.join("/dev/shm", `x402m-tests-${process.getuid?.() ?? "user"}`);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs.accessSync(dir, fs.constants.W_OK);
    return dir;
  } catch {
    return undefined;
  }
}
const scratch = tmpfsScratch();
if (scratch) process.env.TMPDIR = scratch;

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/setup-log.ts"],
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
