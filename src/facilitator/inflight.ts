/**
 * The settlements under way in this process, by authorization: identical concurrent requests share one
 * settlement's answer, and a request with other signed content waits for the one under way to end.
 */
import type { SettleResponse } from "@x402/core/types";

export class InFlight {
  private readonly running = new Map<string, { digest: string; result: Promise<SettleResponse> }>();

  /**
   * The answer of the settlement of `id` with `digest`: the one under way (`shared`), or one `start`ed now.
   */
  async share(
    id: string,
    digest: string,
    start: () => Promise<SettleResponse>,
  ): Promise<{ answered: SettleResponse; shared: boolean }> {
    const running = this.running.get(id);
    if (running?.digest === digest) return { answered: await running.result, shared: true };
    if (running) await running.result.catch(() => undefined);
    const started = start().finally(() => {
      if (this.running.get(id)?.result === started) this.running.delete(id);
    });
    this.running.set(id, { digest, result: started });
    return { answered: await started, shared: false };
  }

  /** Whether a request of this process is deciding the authorization right now. */
  has(id: string): boolean {
    return this.running.has(id);
  }

  /** Waits for the settlements under way. */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.running.values()].map((f) => f.result));
  }
}
