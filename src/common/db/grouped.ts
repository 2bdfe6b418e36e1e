/**
 * Group commit: writes that arrive while one is being committed wait and go together in the next
 * commit. Alone, a write goes at once (no timer, so no added latency at low load); under load, N callers
 * share one transaction instead of N, which is what a commit costs the server (its WAL flush) and the
 * client (its round trips). Each caller resolves when the commit that holds its write is done, and
 * rejects with that commit's error: a grouped write is as durable, when its promise resolves, as one
 * committed alone.
 */
export interface GroupedWriter<T, R = undefined> {
  /** Resolves once `item` is committed (with whatever was grouped with it), with its result. */
  write(item: T): Promise<R>;
  /** Resolves when every write handed over so far is committed or has failed. */
  drain(): Promise<void>;
}

interface Waiting<T, R> {
  item: T;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * `commit(batch)` writes a batch in one transaction and returns each item's result, in the batch's
 * order (or undefined, for writes without one); at most one runs at a time, and a batch holds at most
 * `maxBatch` items (a later batch takes the rest).
 */
export function groupedWriter<T, R = undefined>(
  commit: (batch: readonly T[]) => Promise<readonly R[] | undefined>,
  maxBatch = 100,
): GroupedWriter<T, R> {
  let queue: Waiting<T, R>[] = [];
  // Set and cleared synchronously, never by a promise's settling: a write that comes in the same turn as
  // the loop's last look at the queue must find it either still looping or stopped, not in between.
  let active = false;
  let current = Promise.resolve();

  const run = async (): Promise<void> => {
    while (queue.length > 0) {
      const batch = queue.slice(0, maxBatch);
      queue = queue.slice(batch.length);
      try {
        const results = await commit(batch.map((w) => w.item));
        for (const [i, w] of batch.entries()) w.resolve(results?.[i] as R);
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
    active = false;
  };

  return {
    write(item) {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        if (!active) {
          active = true;
          current = run();
        }
      });
    },
    async drain() {
      while (active) await current;
    },
  };
}
