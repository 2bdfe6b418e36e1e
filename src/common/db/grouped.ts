/**
 * Group commit: writes that arrive together go to the database in one statement, so a busy process pays one
 * statement's parse, plan and commit (and, on a server, one round trip and one WAL flush) for many. Each
 * caller resolves only when the commit that holds its write is done, and rejects with that commit's error: a
 * grouped write is as durable, when its promise resolves, as one committed alone, and nothing that waits on
 * it (a paid answer) goes out before.
 *
 * What "together" is. A write that finds no commit under way starts one at the end of the event loop's turn
 * (`setImmediate`, not a timer), and takes every write made until then; writes made while that commit runs go
 * together in the next. The turn is what PGlite needs: its statements run synchronously in the process's one
 * thread, so no request can arrive "during" a commit, and a commit started at once took each write alone
 * (2.00 statements a request for a take and a finish at 16 requests at once over HTTP, against 0.16-0.20
 * with the turn: `bench:ledger`, docs/benchmarks-log.md, 2026-11-28, night, "group commit"). Requests whose data came
 * in together are handled in the same turn, up to their write; a lone write waits for nothing but the end of
 * its own turn.
 */

/** Captured at load: a test's fake timers must not hold the database's writes. */
const endOfTurn = globalThis.setImmediate;

export interface GroupedWriter<T, R = undefined> {
  /** Resolves once `item` is committed (with whatever was grouped with it), with its result. */
  write(item: T): Promise<R>;
  /** Resolves when every write handed over so far is committed or has failed. */
  drain(): Promise<void>;
}

export interface GroupOptions {
  /** The most items in one commit; a later commit takes the rest. Default 100. */
  maxBatch?: number;
  /**
   * Whether a group's failure may come from one item's values rather than from the database (a value out of
   * range, a duplicate key): then nothing of the group was written, and each item is committed alone, so that
   * only those at fault fail, as they would have alone. Default: never (the group fails whole).
   */
  itemError?: (error: unknown) => boolean;
}

interface Waiting<T, R> {
  item: T;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * `commit(batch)` writes a batch in one statement (or one transaction) and returns each item's result, in the
 * batch's order (or undefined, for writes without one); at most one runs at a time.
 */
export function groupedWriter<T, R = undefined>(
  commit: (batch: readonly T[]) => Promise<readonly R[] | undefined>,
  { maxBatch = 100, itemError }: GroupOptions = {},
): GroupedWriter<T, R> {
  let queue: Waiting<T, R>[] = [];
  // Set and cleared synchronously, never by a promise's settling: a write that comes in the same turn as
  // the loop's last look at the queue must find it either still looping or stopped, not in between.
  let active = false;
  let current = Promise.resolve();

  const settle = async (batch: readonly Waiting<T, R>[]): Promise<void> => {
    try {
      const results = await commit(batch.map((w) => w.item));
      for (const [i, w] of batch.entries()) w.resolve(results?.[i] as R);
    } catch (error) {
      if (batch.length > 1 && itemError?.(error)) {
        // One statement wrote nothing: each alone, as each would have been without company.
        for (const w of batch) await settle([w]);
        return;
      }
      for (const w of batch) w.reject(error);
    }
  };

  const run = async (): Promise<void> => {
    while (queue.length > 0) {
      await new Promise((resolve) => endOfTurn(resolve));
      const batch = queue.slice(0, maxBatch);
      queue = queue.slice(batch.length);
      await settle(batch);
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

/**
 * Whether PostgreSQL refused a statement for the values it was given: a data exception (SQLSTATE class 22: a
 * number or a time out of range, a malformed value) or a row that breaks a constraint (class 23: a duplicate
 * key, a check). The statement wrote nothing, and the same rows one by one would fail only where one of them
 * is at fault. Not a connection's failure, a time-out or a damaged file: those fail whatever was asked.
 */
export function isValueError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^2[23][0-9A-Z]{3}$/.test(code);
}

/**
 * Whether a group's statement may be written again row by row: refused for one row's values (`isValueError`), or
 * chosen as a deadlock's victim (40P01). One statement updating several rows locks them in the order its plan
 * meets them, so two processes' groups over the same rows can each wait on the other; the victim's statement
 * wrote nothing, and its rows alone, a lock each, close no cycle (a CI run saw it: 60 charges on two channels
 * from two processes).
 */
export function isRetryAlone(error: unknown): boolean {
  return isValueError(error) || (error as { code?: unknown } | null)?.code === "40P01";
}
