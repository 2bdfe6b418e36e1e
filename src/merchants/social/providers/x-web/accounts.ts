/**
 * The operator's X sessions as a pool: used round-robin, each rested until a time after X refused or
 * rate-limited it, and never given more than `MAX_IN_FLIGHT_PER_ACCOUNT` requests at once.
 */
import { retryAfterSeconds } from "../../../../merchant-kit/index.ts";

export interface XAccount {
  authToken: string;
  ct0: string;
}

/** How long a session that X refused (401/403 without a reset) is rested. */
export const REFUSED_REST_MS = 15 * 60_000;

/**
 * Requests one session has at X at once. More spends its rate limit in a burst and looks like the
 * automation X locks accounts for; the calls beyond it wait for a free session, within their time limit.
 */
export const MAX_IN_FLIGHT_PER_ACCOUNT = 4;

export class AccountPool {
  private turn = 0;
  private readonly restedUntil: number[];
  private readonly inFlight: number[];
  private readonly waiting = new Set<() => void>();
  constructor(readonly accounts: readonly XAccount[]) {
    this.restedUntil = accounts.map(() => 0);
    this.inFlight = accounts.map(() => 0);
  }
  /**
   * The next usable account's index, taken (give it back with `release`); "busy" when the usable ones all
   * have their most requests in flight; undefined when every one not yet tried is resting.
   */
  take(tried: ReadonlySet<number>): number | "busy" | undefined {
    const now = Date.now();
    let busy = false;
    for (let i = 0; i < this.accounts.length; i++) {
      const index = (this.turn + i) % this.accounts.length;
      if (tried.has(index) || (this.restedUntil[index] ?? 0) > now) continue;
      if ((this.inFlight[index] ?? 0) >= MAX_IN_FLIGHT_PER_ACCOUNT) {
        busy = true;
        continue;
      }
      this.turn = index + 1;
      this.inFlight[index] = (this.inFlight[index] ?? 0) + 1;
      return index;
    }
    return busy ? "busy" : undefined;
  }
  release(index: number): void {
    this.inFlight[index] = (this.inFlight[index] ?? 1) - 1;
    for (const wake of this.waiting) wake();
    this.waiting.clear();
  }
  /** Resolves when a request gives its session back; rejects when `signal` aborts first. */
  freed(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.waiting.delete(wake);
        reject(signal.reason);
      };
      const wake = () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      };
      if (signal.aborted) return reject(signal.reason);
      this.waiting.add(wake);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }
  rest(index: number, untilMs: number): void {
    this.restedUntil[index] = Math.max(this.restedUntil[index] ?? 0, untilMs);
  }
  /** Seconds until the first resting account is usable again (1 s to an hour). */
  waitSeconds(): number {
    const now = Date.now();
    const resting = this.restedUntil.filter((t) => t > now);
    const soonest = resting.length > 0 ? Math.min(...resting) : now + 30_000;
    return Math.min(3_600, Math.max(1, Math.ceil((soonest - now) / 1000)));
  }
}

/** When X says a rate limit ends: `x-rate-limit-reset` (epoch seconds), else `retry-after`, else 15 minutes. */
export function resetAt(headers: Headers): number {
  const reset = headers.get("x-rate-limit-reset");
  if (reset && /^\d+$/.test(reset.trim())) return Number(reset.trim()) * 1000;
  const retry = headers.get("retry-after");
  if (retry) return Date.now() + retryAfterSeconds(retry) * 1000;
  return Date.now() + 15 * 60_000;
}
