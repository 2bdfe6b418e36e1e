import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * One scratch directory per test run, removed whole when the run ends: tests make their temporary directories
 * with `os.tmpdir()` (a PGlite cluster copied per database case, DuckDB stores, devnets' saved chains, NDJSON
 * files), and not all remove theirs (a clean clone's run left about 1,500 of them, 3.9 GB, in /tmp).
 *
 * On a tmpfs where the machine has one with room, unless TMPDIR is set: on the CI machines' ext4 (mounted with
 * `discard`) removing one copied PGlite cluster (971 files, 39 MB) blocked a fork 1-1.7 s and took 75-90 ms of
 * CPU, on /dev/shm 55-100 ms and 23 ms; the kernel's share of four PGlite-heavy files fell from 15-19 CPU-s to
 * 9 (docs/benchmarks-log.md, 2026-11-29, "the tests' scratch on a tmpfs"). Kept in memory, a run's leftovers must
 * not outlive it: hence the directory per run, and the removal of a run's that ended without its teardown.
 */
const TMPFS_MAGIC = 0x01021994; // statfs's f_type of a tmpfs (linux/magic.h)
/** Free memory a tmpfs must offer: the suite's scratch at its peak is a small part of it. */
const TMPFS_MIN_FREE = 4 * 1024 ** 3;
const PREFIX = "x402m-tests-";
/** Names the run's directory for the teardown, and for a second config load in the same process. */
const RUN_ENV = "X402M_TEST_SCRATCH";

/** Makes the run's scratch directory and points TMPDIR at it. Called by vitest.config.ts, before the forks start. */
export function useRunScratch(): string {
  const existing = process.env[RUN_ENV];
  if (existing && fs.existsSync(existing)) return existing;
  const base = process.env.TMPDIR || tmpfs() || os.tmpdir();
  removeEnded(base);
  const dir = fs.mkdtempSync(path.join(base, `${PREFIX}${process.pid}-`));
  process.env[RUN_ENV] = dir;
  process.env.TMPDIR = dir;
  return dir;
}

/** /dev/shm when it is a tmpfs with room and ours to write, else undefined. */
function tmpfs(): string | undefined {
  if (process.platform !== "linux") return undefined;
  try {
    const shm = fs.statfsSync("/dev/shm");
    if (shm.type !== TMPFS_MAGIC || shm.bavail * shm.bsize < TMPFS_MIN_FREE) return undefined;
    fs.accessSync("/dev/shm", fs.constants.W_OK);
    return "/dev/shm";
  } catch {
    return undefined;
  }
}

/** The scratch of runs whose process is gone (killed before their teardown). */
function removeEnded(base: string): void {
  for (const name of fs.readdirSync(base)) {
    const pid = Number(/^x402m-tests-(\d+)-/.exec(name)?.[1]);
    if (!pid || pid === process.pid || alive(pid)) continue;
    fs.rmSync(path.join(base, name), { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Vitest's global setup: the teardown removes the run's scratch. */
export default function setup(): () => void {
  const dir = useRunScratch();
  return () => fs.rmSync(dir, { recursive: true, force: true });
}
