/**
 * A chain's simulator on a worker thread of its own. The demo's one process serves every merchant, the
 * facilitator, the indexers and the reports on its main thread, and that thread bounds how fast a week is
 * played: with the buyers' side of each payment there too (its 402 read, its signature, its requests, the
 * simulator's own chain calls), a second chain's buyers slowed Base's week by their whole work. On a thread
 * of their own, the buyers run beside the servers (docs/benchmarks-log.md, issue 67 item 7).
 *
 * The same `runSimulator` runs there (sim-worker.ts), with its options as structured data; its events and
 * its end come back as messages, and the signal's abort goes as one.
 */
import { Worker } from "node:worker_threads";
import { sizedChat, tinyChat } from "./chat-work.ts";
import type { PlanEndpoint } from "./plan-types.ts";
import type { SimMerchant } from "./sim-merchants.ts";
import type { SimulatorEvent, SimulatorOptions, SimulatorStats } from "./simulator.ts";

const BOOT = new URL("../common/worker-boot.mjs", import.meta.url);
const MODULE = new URL("./sim-worker.ts", import.meta.url);

/** What the thread runs `runSimulator` with: its options, less what cannot cross to it. */
export type ThreadOptions = Omit<SimulatorOptions, "signal" | "onEvent" | "now">;

/**
 * A metered chat endpoint's work is a function of its example (chat-work.ts), which a thread cannot be
 * given: it crosses as a mark and is made again there from the same input. The plan's merchants are the
 * simulator's, as both callers give them.
 */
type Crossing = Omit<ThreadOptions, "plan" | "merchants"> & {
  plan: Omit<ThreadOptions["plan"], "merchants">;
  merchants: (Omit<SimMerchant, "endpoints"> & { endpoints: CrossingEndpoint[] })[];
};
type CrossingEndpoint = Omit<PlanEndpoint, "sized" | "tiny"> & { sized?: true; tiny?: true };

function crossing({ plan, merchants, ...rest }: ThreadOptions): Crossing {
  const { merchants: _same, ...context } = plan;
  return {
    ...rest,
    plan: context,
    merchants: merchants.map((m) => ({
      ...m,
      endpoints: m.endpoints.map(({ sized, tiny, ...e }) => ({
        ...e,
        ...(sized && { sized: true as const }),
        ...(tiny && { tiny: true as const }),
      })),
    })),
  };
}

/** The options as the thread runs them. */
export function crossed({ plan, merchants, ...rest }: Crossing): ThreadOptions {
  const simMerchants: SimMerchant[] = merchants.map((m) => ({
    ...m,
    endpoints: m.endpoints.map(({ sized, tiny, ...e }) => ({
      ...e,
      ...(sized && { sized: sizedChat(e.input) }),
      ...(tiny && { tiny: tinyChat(e.input) }),
    })),
  }));
  return {
    ...rest,
    merchants: simMerchants,
    plan: { ...plan, merchants: simMerchants.map(({ id, endpoints }) => ({ id, endpoints })) },
  };
}

/** The messages from the thread. */
export type FromThread =
  | { type: "event"; event: SimulatorEvent }
  | { type: "done"; stats: SimulatorStats }
  | { type: "failed"; message: string; stack?: string };

/** The messages to it. */
export type ToThread = { type: "abort" };

/** Runs the simulator on a worker thread; settles as `runSimulator` would, once the thread has ended. */
export function runSimulatorThread(
  options: ThreadOptions & Pick<SimulatorOptions, "signal" | "onEvent">,
): Promise<SimulatorStats> {
  const { signal, onEvent, ...data } = options;
  const worker = new Worker(BOOT, {
    workerData: { module: MODULE.href, options: crossing(data) },
  });
  const send = (message: ToThread) => worker.postMessage(message);
  const abort = () => send({ type: "abort" });
  if (signal.aborted) abort();
  else signal.addEventListener("abort", abort, { once: true });
  return new Promise<SimulatorStats>((resolve, reject) => {
    let ended: { stats: SimulatorStats } | { error: Error } | undefined;
    worker.on("message", (message: FromThread) => {
      if (message.type === "event") {
        onEvent?.(message.event);
        return;
      }
      if (message.type === "done") ended = { stats: message.stats };
      else ended = { error: Object.assign(new Error(message.message), { stack: message.stack }) };
      // Its end told: what the simulator leaves behind (keep-alive sockets) must not hold the thread.
      worker.terminate().catch(() => undefined);
    });
    worker.on("error", (error) => {
      ended ??= { error };
    });
    worker.on("exit", (code) => {
      signal.removeEventListener("abort", abort);
      if (ended && "stats" in ended) resolve(ended.stats);
      else reject(ended?.error ?? new Error(`the simulator's thread exited (${code})`));
    });
  });
}
