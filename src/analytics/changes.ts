/**
 * The store's writes as this process sees them, the moment each commits. DuckDB lets one process write the
 * file, so every write that can change a report while the report service runs is made here, on one of
 * the instance's connections, and passes through `bumpDataVersion` (src/analytics/migrations.ts): what
 * the service has rendered stays true until a write reaches the blocks it was rendered from, and this is
 * how it knows without asking the store.
 */

/** Writes remembered; a reader whose last look is older than the oldest takes everything as changed. */
const KEPT = 4_096;

interface Write {
  epoch: number;
  /** The lowest block the write changed data at or after; 0 for a write that may touch any window. */
  from: number;
  /** The chain whose data it changed (its slug); undefined: any chain's. */
  chain?: string;
}

export class StoreChanges {
  /** Commits seen so far: a reader keeps the epoch it rendered at. */
  epoch = 0;
  private readonly writes: Write[] = [];
  private readonly listeners = new Set<(epoch: number, chain: string | undefined) => void>();

  /** A write committed that changed `chain`'s data (undefined: any chain's) from block `from` on (0: anything). */
  committed(from: number, chain?: string): void {
    this.epoch += 1;
    this.writes.push({ epoch: this.epoch, from: Math.max(0, from), chain });
    if (this.writes.length > KEPT) this.writes.splice(0, this.writes.length - KEPT);
    // After the writer's call returns: a listener's work is never part of the write, nor its failure.
    const epoch = this.epoch;
    for (const listener of this.listeners) queueMicrotask(() => listener(epoch, chain));
  }

  /**
   * True when no write committed after `epoch` changed data of `chain` (its slug) at or below `block`: a
   * window of that chain ending at `block`, built or rendered at `epoch`, is still what the store holds. Any
   * write of the chain counts for `block` Infinity (the latest window, which every commit of it moves).
   */
  untouchedSince(epoch: number, block: number, chain = "base"): boolean {
    if (epoch === this.epoch) return true;
    const oldest = this.writes[0];
    if (!oldest || oldest.epoch > epoch + 1) return false;
    for (let i = this.writes.length - 1; i >= 0; i--) {
      const write = this.writes[i] as Write;
      if (write.epoch <= epoch) break;
      if (write.from <= block && (write.chain === undefined || write.chain === chain)) return false;
    }
    return true;
  }

  /**
   * Calls `listener` soon after each commit (a microtask), with the new epoch and the chain whose data it
   * changed (undefined: any chain's); returns how to stop.
   */
  subscribe(listener: (epoch: number, chain: string | undefined) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
