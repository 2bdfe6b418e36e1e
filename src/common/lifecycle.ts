/**
 * One lifecycle per process: what was started is closed in reverse order, once, within a time limit;
 * SIGINT and SIGTERM have one handler, which starts that. Commands that run until stopped (`serve`,
 * `demo`, `devnet`, `facilitator`, `index --follow`) use it instead of each catching signals itself.
 */
import { log } from "./log.ts";

/** How long closing may take before the rest is abandoned (the process then exits anyway). */
export const DEFAULT_CLOSE_TIMEOUT_MS = 8_000;

/** A part still closing after this long is named in the log, so that a stop that hangs says where. */
const SLOW_CLOSE_MS = 30_000;

/**
 * Work a stop waits for past its time limit, never abandons: a paid call between its settlement and the
 * commit of what it paid for (src/merchant-kit/payments/paid-handler.ts). Exiting there would leave the
 * payer charged for nothing. Bounded by `maxMs` from the stop's start, as long as the work's own time
 * limits (a settlement's time-out and a commit): past that it is abandoned with the rest, with a warning.
 */
export class Unfinished {
  private readonly running = new Map<symbol, string>();
  private idle: (() => void)[] = [];

  constructor(readonly maxMs: number) {}

  /** Starts one piece of work, named in the log if a stop waits for it; call the result when it has ended. */
  start(what: string): () => void {
    const id = Symbol(what);
    this.running.set(id, what);
    return () => {
      if (!this.running.delete(id) || this.running.size > 0) return;
      for (const resolve of this.idle.splice(0)) resolve();
    };
  }

  /** The work under way, by name. */
  get pending(): string[] {
    return [...this.running.values()];
  }

  /** Resolves once no work is under way. */
  done(): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }
}

/** A server as the lifecycle stops it: first it stops taking connections, later it is waited for. */
export interface Stoppable {
  stopAccepting(): void;
  close(): Promise<void>;
}

export class Lifecycle {
  private readonly closers: { name: string; close: () => Promise<void> | void }[] = [];
  private readonly servers: Stoppable[] = [];
  private readonly unfinished: Unfinished[] = [];
  private closing: Promise<void> | undefined;

  /** Registers something to close; later registrations close first. */
  add(name: string, close: () => Promise<void> | void): void {
    if (this.closing) throw new Error(`cannot add ${name}: the process is stopping`);
    this.closers.push({ name, close });
  }

  /**
   * Registers a server that outside clients call (the report service, a merchant host). All of them stop
   * accepting the moment stopping starts, and their requests under way drain side by side; each is then
   * waited for in its turn, like `add`. Closed one after another instead, the last would still take new
   * connections while the first drained. A server that the process's own requests need until they are
   * answered (the in-process facilitator the merchants settle through) is registered with `add`.
   */
  addServer(name: string, server: Stoppable): void {
    this.add(name, () => server.close());
    this.servers.push(server);
  }

  /**
   * Registers work to wait for before what was registered earlier closes (the database it commits to), past
   * the close's time limit while it is under way (up to its `maxMs`): `Unfinished`.
   */
  addUnfinished(name: string, work: Unfinished): void {
    this.add(name, () => work.done());
    this.unfinished.push(work);
  }

  /**
   * Closes everything, last started first, once every server has stopped accepting. A closer that fails
   * is logged and the others still run; past `timeoutMs` the remaining ones are abandoned with a warning
   * naming them, unless work registered with `addUnfinished` is still under way: then closing goes on
   * until that work has ended, or for its `maxMs` from the start at most.
   */
  close(timeoutMs = DEFAULT_CLOSE_TIMEOUT_MS): Promise<void> {
    this.closing ??= (async () => {
      for (const server of this.servers.splice(0)) server.stopAccepting();
      const pending = this.closers.splice(0).reverse();
      const all = (async () => {
        while (pending.length > 0) {
          const next = pending[0] as (typeof pending)[number];
          const started = performance.now();
          const slow = setTimeout(
            () => log("warn", "still closing", { what: next.name, ms: SLOW_CLOSE_MS }),
            SLOW_CLOSE_MS,
          );
          slow.unref();
          try {
            await next.close();
          } catch (error) {
            log("warn", "closing failed", { what: next.name, error });
          } finally {
            clearTimeout(slow);
          }
          log("debug", "closed", { what: next.name, ms: Math.round(performance.now() - started) });
          pending.shift();
        }
      })();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), timeoutMs);
        timer.unref();
      });
      let outcome = await Promise.race([all, late]);
      let waitedMs = timeoutMs;
      const busy = this.unfinished.filter((u) => u.pending.length > 0);
      if (outcome === "late" && busy.length > 0) {
        waitedMs = Math.max(timeoutMs, ...busy.map((u) => u.maxMs));
        log("warn", "waiting past the close time-out for work that must not be abandoned", {
          waitedMs: timeoutMs,
          upToMs: waitedMs,
          pending: busy.flatMap((u) => u.pending),
        });
        const later = new Promise<"late">((resolve) => {
          timer = setTimeout(() => resolve("late"), waitedMs - timeoutMs);
          timer.unref();
        });
        outcome = await Promise.race([all, later]);
      }
      if (outcome === "late") {
        log("warn", "stopping without waiting for the rest", {
          waitedMs,
          left: pending.map((p) => p.name),
        });
      }
      clearTimeout(timer);
    })();
    return this.closing;
  }
}

/**
 * Resolves on the first SIGINT or SIGTERM (with the signal's name). A second signal while stopping exits
 * at once with 130, as a user pressing Ctrl-C twice expects.
 */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const first = (signal: NodeJS.Signals) => {
      process.off("SIGINT", first);
      process.off("SIGTERM", first);
      const again = () => process.exit(130);
      process.once("SIGINT", again);
      process.once("SIGTERM", again);
      resolve(signal);
    };
    process.on("SIGINT", first);
    process.on("SIGTERM", first);
  });
}
