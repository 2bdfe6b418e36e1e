/**
 * A paid call's heavy work in a child process of its own, one job at a time (the others wait their turn),
 * under a budget that is the call's real cost: the CPU time `/proc/<pid>/stat` gives for the whole process
 * (every thread it has or had: V8's collector threads, which no thread's clock attributes to the job, are
 * counted), a wall-clock deadline, and a heap cap (`--max-old-space-size`). Past the first two the process is
 * killed (SIGKILL: the kernel takes its memory back, nothing of it is torn down on the host's threads), past the
 * third V8 ends it; either way the job is refused (`JOB_CPU`, `JOB_DEADLINE`, `JOB_MEMORY`) and the next one
 * starts a fresh process. An idle process is stopped after `idleMs`, so what it loaded is the host's memory
 * only while such jobs come.
 *
 * The same worker module serves a job thread or a job process (`serveJobs`). The child runs the worker's
 * bundle (`workerBundle`: esbuild's, as the command line's, built once per set of sources and kept in
 * node_modules/.cache), not its TypeScript through tsx, whose loader transpiled every module the worker
 * imports at every start: about 1 CPU-s a fresh process, again after every kill and every idle stop. Where
 * no bundle can be had (no esbuild, a tree that cannot be written, X402M_CLI_FROM_SOURCES=1) it runs the
 * sources through tsx, as before. Either way it starts as `process-boot.mjs`. A job and its result cross the
 * process boundary by V8's structured clone (`serialization: "advanced"`): a 3 MB string costs milliseconds
 * each way.
 *
 * @example
 * const worker = new JobProcess<PageJob, unknown>(new URL("./page-worker.ts", import.meta.url), { maxOldSpaceMb: 120 });
 * const result = await worker.run(job, ctx.signal, { cpuMs: 1_800, deadlineMs: 4_500 });
 */
import { type ChildProcess, fork } from "node:child_process";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { sourceBundle } from "../../cli/launch.mjs";
import {
  DEFAULT_IDLE_MS,
  JOB_MEMORY,
  JobFailedError,
  JobRunner,
  type JobWorker,
  type Reply,
  type WorkerEvents,
} from "./job-runner.ts";

const BOOT = fileURLToPath(new URL("./process-boot.mjs", import.meta.url));
/** The project, whose src/ the bundles are built from. */
const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

/** Each worker module's bundle, once per host process: its URL, or undefined where there is none. */
const bundles = new Map<string, Promise<string | undefined>>();

/**
 * The bundle of `module` (a worker's source under src/), built if the sources changed since the last; undefined
 * where none can be had, and then not tried again in this process (a tree that cannot be written would
 * otherwise rebuild it at every start). The fingerprint of src/ costs 15-25 ms of CPU; a build, about 0.1 CPU-s
 * once per set of sources (docs/benchmarks-log.md).
 */
export function workerBundle(module: URL): Promise<string | undefined> {
  // Read at each start, as the command line reads it at its own.
  if (process.env.X402M_CLI_FROM_SOURCES === "1") return Promise.resolve(undefined);
  let bundle = bundles.get(module.href);
  if (!bundle) {
    const entry = module.protocol === "file:" ? fileURLToPath(module) : undefined;
    bundle =
      entry === undefined || !entry.startsWith(path.join(ROOT, "src") + path.sep)
        ? Promise.resolve(undefined)
        : sourceBundle({ root: ROOT, entry }).then(
            ({ file }) => pathToFileURL(file).href,
            () => undefined,
          );
    bundles.set(module.href, bundle);
  }
  return bundle;
}

/**
 * The young generation's semi-space, in MB, as `serve` runs with (bin/x402-merchants): V8 would otherwise
 * let it grow to 32 MB, memory the heap cap does not count.
 */
const SEMI_SPACE_MB = 4;

/** What V8 prints to stderr as it ends a process at its heap cap. */
const OUT_OF_MEMORY = /out of memory|Reached heap limit|allocation failed/i;

export interface JobProcessOptions {
  /** The child's old generation at most (`--max-old-space-size`): a job past it ends the child, not the host. */
  maxOldSpaceMb?: number;
  /** How long a process with no job lives on before it is stopped. Default `DEFAULT_IDLE_MS`. */
  idleMs?: number;
}

export class JobProcess<Job, Result> extends JobRunner<Job, Result> {
  /** `module`: the worker's source, a file that calls `serveJobs`. */
  constructor(
    private readonly module: URL,
    private readonly options: JobProcessOptions = {},
  ) {
    super(options.idleMs ?? DEFAULT_IDLE_MS);
  }

  protected launch(events: WorkerEvents<Result>): JobWorker {
    let child: ChildProcess | undefined;
    let stopped = false;
    let ready = false;
    let running = 0;
    const waiting: { id: number; job: unknown }[] = [];
    let exited = Promise.resolve();
    // An idle process must not keep the host alive; a running job does, until it is answered or the process
    // has exited (both the child and its channel: a child dead at its start closes the channel first).
    const hold = (on: boolean) => {
      if (on) child?.ref();
      else child?.unref();
      if (on) child?.channel?.ref();
      else child?.channel?.unref();
    };
    const start = (bundle: string | undefined) => {
      if (stopped) return;
      child = this.fork(bundle);
      const self = child;
      // A child in the middle of a job reads no message, so would not see its host go before the job ends:
      // the host takes it along when it exits (a SIGKILL of the host leaves it to finish its job alone).
      const killWithHost = () => self.kill("SIGKILL");
      process.once("exit", killWithHost);
      let stderr = "";
      self.stderr?.setEncoding("utf8");
      // Read as it comes: the native stack trace V8 prints after it can push it out of the kept tail.
      let outOfMemory = false;
      self.stderr?.on("data", (chunk: string) => {
        outOfMemory ||= OUT_OF_MEMORY.test(stderr.slice(-100) + chunk);
        stderr = (stderr + chunk).slice(-4_000);
      });
      hold(running > 0);
      (self.stderr as { unref?(): void } | null)?.unref?.();
      exited = new Promise<void>((resolve) => self.once("exit", () => resolve()));
      self.on("message", (reply: Reply<Result>) => {
        if ("ready" in reply) {
          ready = true;
          for (const message of waiting.splice(0)) self.send(message);
        } else if (("result" in reply || "error" in reply) && --running === 0) hold(false);
        events.reply(reply);
      });
      self.on("error", events.lost);
      // After its stderr is read to the end, so that V8's last words are seen.
      self.on("close", (code, signal) => {
        process.off("exit", killWithHost);
        const ending = `the job process exited (${signal ?? code})`;
        events.lost(
          outOfMemory
            ? new JobFailedError(`${ending}: out of its heap`, JOB_MEMORY)
            : new Error(`${ending}: ${lastWords(stderr)}`),
        );
      });
    };
    // Its bundle is known (or known missing) after the first start in this process; the first waits for its
    // build where the sources changed, which costs less CPU than a start through tsx (docs/benchmarks-log.md).
    void workerBundle(this.module).then(start);
    return {
      post(message) {
        if (running++ === 0) hold(true);
        if (ready) child?.send(message);
        else waiting.push(message);
      },
      async stop() {
        stopped = true;
        if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
        await exited;
      },
    };
  }

  /** The child process, running the worker's bundle, else its source through tsx. */
  private fork(bundle: string | undefined): ChildProcess {
    const execArgv = [`--max-semi-space-size=${SEMI_SPACE_MB}`];
    if (this.options.maxOldSpaceMb !== undefined)
      execArgv.push(`--max-old-space-size=${this.options.maxOldSpaceMb}`);
    // Not the host's own flags: a test runner's loader or an inspector port are not the child's.
    return fork(BOOT, bundle ? [bundle, "bundle"] : [this.module.href], {
      execArgv,
      serialization: "advanced",
      stdio: ["ignore", "ignore", "pipe", "ipc"],
    });
  }
}

/** The line of a child's stderr that says why it ended: its error's, else its last. */
function lastWords(stderr: string): string {
  const lines = stderr.trim().split("\n");
  return lines.find((line) => /\b\w*Error\b/.test(line)) ?? lines.at(-1) ?? "";
}
