import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { onTestFinished } from "vitest";

/**
 * Temporary directories that go when what made them ends: a test's when its test finishes, one made outside a
 * test (in a hook, or while the file is collected) when its file ends (test/setup-scratch.ts). The run's scratch
 * is in memory (a tmpfs, test/scratch.ts) and went only at the run's end: one fork's files left their stores
 * and NDJSON files behind for the whole run, hundreds of them.
 */
const ofFile = new Set<string>();

/** A new directory under the temporary directory, named `prefix` and a random tail, removed as above. */
export function removedTempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  try {
    // After the test's afterEach hooks, which close what the test opened in it.
    onTestFinished(() => remove(dir));
  } catch {
    // Not in a test: the file's directory, until its afterAll hooks have run.
    ofFile.add(dir);
  }
  return dir;
}

/** Removes the directories made outside a test so far (the file ends). */
export function removeFileTempDirs(): void {
  for (const dir of ofFile) remove(dir);
  ofFile.clear();
}

function remove(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}
