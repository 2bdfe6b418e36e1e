/**
 * What `bench:paid`'s modes share (bench/paid.ts, bench/paid-user.ts): the load its buyers put on a stack, and
 * the devnet's miner.
 */
import { createTestClient, http } from "viem";
import { type Devnet, devnetChain } from "../src/chain/devnet/index.ts";

const log = (message: string) => process.stderr.write(`${message}\n`);

export interface Load {
  requests: number;
  ok: number;
  failures: Map<string, number>;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/**
 * `concurrency` workers each calling `request(worker)` back to back until `seconds` have passed or `total`
 * requests have started. Every request is timed; req/s counts successful ones over the phase's wall time.
 */
export async function load(
  concurrency: number,
  limit: { seconds?: number; total?: number },
  request: (worker: number, n: number) => Promise<string | null>,
): Promise<Load> {
  const latencies: number[] = [];
  const failures = new Map<string, number>();
  let started = 0;
  const begin = performance.now();
  const deadline = limit.seconds === undefined ? Number.POSITIVE_INFINITY : begin + limit.seconds * 1000;
  const total = limit.total ?? Number.POSITIVE_INFINITY;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (performance.now() < deadline && started < total) {
        const n = started++;
        const t0 = performance.now();
        let failure: string | null;
        try {
          failure = await request(worker, n);
        } catch (error) {
          failure = String((error as Error)?.message ?? error).slice(0, 120);
        }
        if (failure === null) latencies.push(performance.now() - t0);
        else failures.set(failure, (failures.get(failure) ?? 0) + 1);
      }
    }),
  );
  const seconds = (performance.now() - begin) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: started,
    ok: latencies.length,
    failures,
    seconds,
    rps: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

/** A 200 with calc's answer, else why not. */
export async function expectCalc(response: Response): Promise<string | null> {
  const body = await response.text();
  // Whole enough to hold the reason: a 503's names the facilitator's failure past its first 80 characters.
  if (response.status !== 200) return `status ${response.status}: ${body.slice(0, 400)}`;
  return body.includes('"result"') ? null : `unexpected body ${body.slice(0, 80)}`;
}

/** A block at least this often, as Base makes one every 2 s (see the file's comment). */
export const IDLE_BLOCK_MS = 2000;

/**
 * Mines when transactions wait (`pending`) and at least every `IDLE_BLOCK_MS`, or every tick (`interval`);
 * counts the blocks it made.
 */
export function startBenchMiner(devnet: Devnet, mode: "pending" | "interval", tickMs: number) {
  const test = createTestClient({
    chain: devnetChain(devnet.rpc),
    mode: "anvil",
    transport: http(devnet.rpc),
  });
  let stopped = false;
  let blocks = 0;
  let last = performance.now();
  const loop = (async () => {
    while (!stopped) {
      await new Promise((resolve) => setTimeout(resolve, tickMs));
      try {
        if (
          mode === "interval" ||
          performance.now() - last >= IDLE_BLOCK_MS ||
          (await test.getTxpoolStatus()).pending > 0
        ) {
          await test.mine({ blocks: 1 });
          blocks++;
          last = performance.now();
        }
      } catch {
        // anvil is stopping.
      }
    }
  })();
  return {
    get blocks() {
      return blocks;
    },
    pending: async () => (await test.getTxpoolStatus()).pending,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

export function summary(name: string, l: Load) {
  const fails = [...l.failures].map(([why, n]) => `${n}x ${why}`).join("; ");
  log(
    `${name.padEnd(30)} ${l.rps.toFixed(1).padStart(8)} req/s  p50 ${l.p50.toFixed(2).padStart(7)} ms  p99 ${l.p99
      .toFixed(2)
      .padStart(
        7,
      )} ms  (${l.ok}/${l.requests} ok in ${l.seconds.toFixed(1)} s${fails ? `; failed: ${fails}` : ""})`,
  );
}
