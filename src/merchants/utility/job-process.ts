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
 * The same worker module serves a job thread or a job process (`serveJobs`); `process-boot.mjs` registers tsx
 * in the child first, since the sources are TypeScript. A job and its result cross the process boundary by
 * V8's structured clone (`serialization: "advanced"`): a 3 MB string costs milliseconds each way.
 *
 * @example
 * const worker = new JobProcess<PageJob, unknown>(new URL("./page-worker.ts", import.meta.url), { maxOldSpaceMb: 120 });
 * const result = await worker.run(job, ctx.signal, { cpuMs: 1_800, deadlineMs: 4_500 });
 */
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
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
    const execArgv = [`--max-semi-space-size=${SEMI_SPACE_MB}`];
    if (this.options.maxOldSpaceMb !== undefined)
      execArgv.push(`--max-old-space-size=${this.options.maxOldSpaceMb}`);
    // Not the host's own flags: a test runner's loader or an inspector port are not the child's.
    const child = fork(BOOT, [this.module.href], {
      execArgv,
      serialization: "advanced",
      stdio: ["ignore", "ignore", "pipe", "ipc"],
    });
    // A child in the middle of a job reads no message, so would not see its host go before the job ends:
    // the host takes it along when it exits (a SIGKILL of the host leaves it to finish its job alone).
    const killWithHost = () => child.kill("SIGKILL");
    process.once("exit", killWithHost);
    let stderr = "";
    child.stderr?.setEncoding("utf8");
    // Read as it comes: the native stack trace V8 prints after it can push it out of the kept tail.
    let outOfMemory = false;
    child.stderr?.on("data", (chunk: string) => {
      outOfMemory ||= OUT_OF_MEMORY.test(stderr.slice(-100) + chunk);
      stderr = (stderr + chunk).slice(-4_000);
    });
    // An idle process must not keep the host alive; a running job does, until it is answered or the process
    // has exited (both the child and its channel: a child dead at its start closes the channel first).
    const hold = (on: boolean) => {
      if (on) child.ref();
      else child.unref();
      if (on) child.channel?.ref();
      else child.channel?.unref();
    };
    hold(false);
    (child.stderr as { unref?(): void } | null)?.unref?.();
    let ready = false;
    let running = 0;
    const waiting: { id: number; job: unknown }[] = [];
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.on("message", (reply: Reply<Result>) => {
      if ("ready" in reply) {
        ready = true;
        for (const message of waiting.splice(0)) child.send(message);
      } else if (("result" in reply || "error" in reply) && --running === 0) hold(false);
      events.reply(reply);
    });
    child.on("error", events.lost);
    // After its stderr is read to the end, so that V8's last words are seen.
    child.on("close", (code, signal) => {
      process.off("exit", killWithHost);
      const ending = `the job process exited (${signal ?? code})`;
      events.lost(
        outOfMemory
          ? new JobFailedError(`${ending}: out of its heap`, JOB_MEMORY)
          : new Error(`${ending}: ${lastWords(stderr)}`),
      );
    });
    return {
      post(message) {
        if (running++ === 0) hold(true);
        if (ready) child.send(message);
        else waiting.push(message);
      },
      async stop() {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
        await exited;
      },
    };
  }
}

/** The line of a child's stderr that says why it ended: its error's, else its last. */
function lastWords(stderr: string): string {
  const lines = stderr.trim().split("\n");
  return lines.find((line) => /\b\w*Error\b/.test(line)) ?? lines.at(-1) ?? "";
}
