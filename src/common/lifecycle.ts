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

/** A server as the lifecycle stops it: first it stops taking connections, later it is waited for. */
export interface Stoppable {
  stopAccepting(): void;
  close(): Promise<void>;
}

export class Lifecycle {
  private readonly closers: { name: string; close: () => Promise<void> | void }[] = [];
  private readonly servers: Stoppable[] = [];
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
   * Closes everything, last started first, once every server has stopped accepting. A closer that fails
   * is logged and the others still run; past `timeoutMs` the remaining ones are abandoned with a warning
   * naming them.
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
      if ((await Promise.race([all, late])) === "late") {
        log("warn", "stopping without waiting for the rest", {
          waitedMs: timeoutMs,
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
