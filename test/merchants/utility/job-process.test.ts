/**
 * A job process runs its worker's bundle (src/cli/launch.mjs's `sourceBundle`), not the worker's TypeScript
 * through tsx, whose loader costs a fresh process about 1 CPU-s; and through tsx where bundling is off. Either
 * way it starts as `process-boot.mjs`, which the readers' tests look for.
 */
import { readdirSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ConvertJob } from "../../../src/merchants/utility/data/convert-worker.ts";
import { JobProcess, workerBundle } from "../../../src/merchants/utility/job-process.ts";

const WORKER = new URL("../../../src/merchants/utility/data/convert-worker.ts", import.meta.url);
const job: ConvertJob = { data: '[{"a":1}]', options: { from: "json", to: "csv" } };

/** The command lines of this process's children, their arguments split. */
function children(): string[][] {
  return readdirSync("/proc/self/task")
    .flatMap((task) => readFileSync(`/proc/self/task/${task}/children`, "utf8").split(" ").filter(Boolean))
    .flatMap((pid) => {
      try {
        return [readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0$/, "").split("\0")];
      } catch {
        return [];
      }
    });
}

/** Runs one job in a fresh process and gives the command line it ran as. */
async function commandLine(): Promise<string[]> {
  const before = new Set(children().map((argv) => argv.join(" ")));
  const worker = new JobProcess<ConvertJob, unknown>(WORKER, { maxOldSpaceMb: 100 });
  try {
    await expect(worker.run(job)).resolves.toMatchObject({ data: "a\r\n1\r\n", rows: 1, columns: ["a"] });
    const started = children().filter((argv) => !before.has(argv.join(" ")));
    expect(started).toHaveLength(1);
    return started[0] as string[];
  } finally {
    await worker.close();
  }
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("a job process", () => {
  it("runs its worker's bundle, with no tsx, named as process-boot.mjs", async () => {
    const bundle = await workerBundle(WORKER);
    expect(bundle).toMatch(
      /node_modules\/\.cache\/x402-merchants\/merchants-utility-data-convert-worker-[0-9a-f]{16}\/convert-worker\.mjs$/,
    );
    const argv = await commandLine();
    expect(argv.some((arg) => arg.endsWith("/process-boot.mjs"))).toBe(true);
    expect(argv.slice(-2)).toEqual([bundle, "bundle"]);
    // The heap cap and the young generation as before.
    expect(argv).toEqual(expect.arrayContaining(["--max-semi-space-size=4", "--max-old-space-size=100"]));
  }, 30_000);

  it("runs its worker's source through tsx when bundling is off", async () => {
    vi.stubEnv("X402M_CLI_FROM_SOURCES", "1");
    expect(await workerBundle(WORKER)).toBeUndefined();
    const argv = await commandLine();
    expect(argv.some((arg) => arg.endsWith("/process-boot.mjs"))).toBe(true);
    expect(argv.at(-1)).toBe(WORKER.href);
  }, 30_000);
});
