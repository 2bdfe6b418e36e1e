/**
 * At most `size` calls at once to one upstream account; the others wait their turn, each no longer than its
 * own signal allows (its time limit, or its caller leaving). A burst of paid calls then reaches the
 * provider as a steady stream, within the rate its account is allowed, rather than as refusals.
 */
export class Slots {
  private used = 0;
  private readonly queue: (() => void)[] = [];

  constructor(readonly size: number) {}

  /** A slot; call what it answers once to give it back. Rejects with the signal's reason when it aborts first. */
  async take(signal: AbortSignal): Promise<() => void> {
    signal.throwIfAborted();
    if (this.used < this.size) this.used++;
    else
      await new Promise<void>((resolve, reject) => {
        const turn = () => {
          signal.removeEventListener("abort", leave);
          resolve();
        };
        const leave = () => {
          this.queue.splice(this.queue.indexOf(turn), 1);
          reject(signal.reason);
        };
        this.queue.push(turn);
        signal.addEventListener("abort", leave, { once: true });
      });
    let given = false;
    return () => {
      if (given) return;
      given = true;
      // Handed straight to the next in line, or freed.
      const next = this.queue.shift();
      if (next) next();
      else this.used--;
    };
  }
}
