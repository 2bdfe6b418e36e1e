import { sleep } from "../../common/sleep.ts";
/**
 * A request-rate limit shared by every call of one client: at most `rps` requests per second on
 * average, with bursts of up to one second's worth. Each call inside a JSON-RPC batch counts as one
 * request, as providers count them (Alchemy, Infura and QuickNode bill and throttle per call).
 */
export class RateLimiter {
  /** The "theoretical arrival time" of the cell rate algorithm: when the requests so far would have
   * been sent at exactly `rps` (ms, performance.now() clock). Up to one second ahead of now is a burst. */
  private tat = 0;

  /** `rps` of 0 means no limit. */
  constructor(
    private readonly rps: number,
    private readonly now: () => number = () => performance.now(),
    private readonly wait: (ms: number) => Promise<void> = sleep,
  ) {
    if (!(rps >= 0) || !Number.isFinite(rps)) throw new RangeError(`bad request rate ${rps}`);
  }

  /** Waits until `requests` more requests fit in the rate. */
  async take(requests = 1): Promise<void> {
    if (this.rps === 0) return;
    const now = this.now();
    // Idle time earns a burst of at most one second of requests, never more.
    this.tat = Math.max(this.tat, now) + (requests * 1000) / this.rps;
    const wait = this.tat - now - 1000;
    if (wait > 0) await this.wait(wait);
  }
}
