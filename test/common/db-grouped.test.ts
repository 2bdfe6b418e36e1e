import { afterEach, describe, expect, it, vi } from "vitest";
import { groupedWriter, isRetryAlone, isValueError } from "../../src/common/db/grouped.ts";

/** A commit the test finishes by hand, to hold a batch in flight. */
function manualCommits() {
  const batches: number[][] = [];
  const pending: { resolve(): void; reject(error: unknown): void }[] = [];
  const commit = (batch: readonly number[]) =>
    new Promise<undefined>((resolve, reject) => {
      batches.push([...batch]);
      pending.push({ resolve: () => resolve(undefined), reject });
    });
  return { batches, pending, commit };
}

/**
 * Past the end of the event loop's turn that a grouped writer waits for before it commits: two, as the
 * writer may schedule its own after this test's continuation has scheduled the first.
 */
const turn = async () => {
  for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
};

const settled = async <T>(promise: Promise<T>) => {
  let state = "pending";
  promise.then(
    () => {
      state = "resolved";
    },
    () => {
      state = "rejected";
    },
  );
  await turn();
  return state;
};

/** An error as PostgreSQL gives one, with its SQLSTATE. */
const sqlError = (code: string, message: string) => Object.assign(new Error(message), { code });

afterEach(() => {
  vi.useRealTimers();
});

describe("groupedWriter", () => {
  it("commits a lone write within its turn, with no timer to wait for", async () => {
    // Timers that never fire: a write that waited for one would never be committed.
    vi.useFakeTimers({ toFake: ["setTimeout", "setInterval", "Date", "performance"] });
    const batches: number[][] = [];
    const writer = groupedWriter(async (batch: readonly number[]) => {
      batches.push([...batch]);
      return undefined;
    });
    const lone = writer.write(1);
    await turn();
    expect(batches).toEqual([[1]]);
    expect(await settled(lone)).toBe("resolved");
  });

  it("groups the writes of one turn's callbacks, as requests that arrive together, where a commit runs synchronously", async () => {
    // PGlite runs a statement in the process's own thread: nothing can be written "during" its commit.
    const batches: number[][] = [];
    const writer = groupedWriter(async (batch: readonly number[]) => {
      batches.push([...batch]);
      return undefined;
    });
    const writes: Promise<undefined>[] = [];
    await new Promise<void>((resolve) => {
      // Three callbacks of one turn (three requests' data read together), each writing once.
      setImmediate(() => writes.push(writer.write(1)));
      setImmediate(() => writes.push(writer.write(2)));
      setImmediate(() => {
        writes.push(writer.write(3));
        resolve();
      });
    });
    await Promise.all(writes);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it("groups what arrives during a commit into the next, and answers none before its own commit", async () => {
    const { batches, pending, commit } = manualCommits();
    const writer = groupedWriter(commit);
    const first = writer.write(1);
    await turn();
    expect(batches).toEqual([[1]]);
    const later = [writer.write(2), writer.write(3), writer.write(4)];
    await turn();
    expect(batches).toEqual([[1]]);
    expect(await settled(later[0] as Promise<void>)).toBe("pending");
    expect(await settled(first)).toBe("pending");
    pending[0]?.resolve();
    await first;
    await turn();
    expect(batches).toEqual([[1], [2, 3, 4]]);
    expect(await settled(later[0] as Promise<void>)).toBe("pending");
    pending[1]?.resolve();
    await Promise.all(later);
  });

  it("rejects every write of a failed commit, and goes on with the next", async () => {
    const { batches, pending, commit } = manualCommits();
    const writer = groupedWriter(commit, { itemError: isValueError });
    const first = writer.write(1);
    await turn();
    const grouped = [writer.write(2), writer.write(3)];
    pending[0]?.resolve();
    await first;
    await turn();
    const after = writer.write(4);
    // The database's failure, not a value's: no write of the group is tried again alone.
    pending[1]?.reject(sqlError("57P01", "terminating connection due to administrator command"));
    for (const write of grouped) await expect(write).rejects.toThrow("terminating connection");
    await turn();
    expect(batches).toEqual([[1], [2, 3], [4]]);
    pending[2]?.resolve();
    await after;
  });

  it("commits each write of a group alone when the group fails on one's values: only that one fails", async () => {
    const batches: number[][] = [];
    const writer = groupedWriter(
      async (batch: readonly number[]) => {
        batches.push([...batch]);
        if (batch.includes(13)) throw sqlError("22008", "timestamp out of range");
        return batch.map((n) => n * 10);
      },
      { itemError: isValueError },
    );
    const results = await Promise.allSettled([1, 13, 2].map((n) => writer.write(n)));
    expect(results.map((r) => (r.status === "fulfilled" ? r.value : (r.reason as Error).message))).toEqual([
      10,
      "timestamp out of range",
      20,
    ]);
    expect(batches).toEqual([[1, 13, 2], [1], [13], [2]]);
  });

  it("caps a batch at maxBatch", async () => {
    const { batches, pending, commit } = manualCommits();
    const writer = groupedWriter(commit, { maxBatch: 2 });
    const writes = [1, 2, 3, 4, 5, 6].map((n) => writer.write(n));
    for (let i = 0; i < 3; i++) {
      await turn();
      pending[i]?.resolve();
    }
    await Promise.all(writes);
    expect(batches).toEqual([
      [1, 2],
      [3, 4],
      [5, 6],
    ]);
  });

  it("starts again for a write made as the last batch's callers resume, and drains", async () => {
    const batches: number[][] = [];
    const writer = groupedWriter(async (batch: readonly number[]) => {
      batches.push([...batch]);
      return undefined;
    });
    // Each write waits for the one before, so every write comes as the writer has just gone idle.
    for (let n = 1; n <= 5; n++) await writer.write(n);
    expect(batches).toEqual([[1], [2], [3], [4], [5]]);
    const last = writer.write(6);
    await writer.drain();
    expect(await settled(last)).toBe("resolved");
  });

  it("survives a commit that throws before returning a promise", async () => {
    let calls = 0;
    const writer = groupedWriter((batch: readonly number[]) => {
      calls++;
      if (batch.includes(1)) throw new Error("bad batch");
      return Promise.resolve(undefined);
    });
    await expect(writer.write(1)).rejects.toThrow("bad batch");
    await writer.write(2);
    expect(calls).toBe(2);
  });
});

describe("isValueError", () => {
  it("is a data exception or a constraint's refusal, not the database's own failure", () => {
    expect(isValueError(sqlError("22008", "timestamp out of range"))).toBe(true);
    expect(isValueError(sqlError("22P02", "invalid input syntax for type numeric"))).toBe(true);
    expect(isValueError(sqlError("23505", "duplicate key value"))).toBe(true);
    expect(isValueError(sqlError("57P01", "terminating connection"))).toBe(false);
    expect(isValueError(sqlError("08006", "connection failure"))).toBe(false);
    expect(isValueError(sqlError("XX001", "invalid page in block"))).toBe(false);
    expect(isValueError(Object.assign(new Error("socket"), { code: "ECONNRESET" }))).toBe(false);
    expect(isValueError(new Error("no code"))).toBe(false);
    expect(isValueError(undefined)).toBe(false);
  });

  it("and a deadlock's victim is written again row by row, a connection's failure not", async () => {
    expect(isRetryAlone(sqlError("40P01", "deadlock detected"))).toBe(true);
    expect(isRetryAlone(sqlError("23505", "duplicate key value"))).toBe(true);
    expect(isRetryAlone(sqlError("08006", "connection failure"))).toBe(false);
    const batches: number[][] = [];
    const writer = groupedWriter(
      async (batch: readonly number[]) => {
        batches.push([...batch]);
        if (batch.length > 1) throw sqlError("40P01", "deadlock detected");
        return batch;
      },
      { itemError: isRetryAlone },
    );
    expect(await Promise.all([writer.write(1), writer.write(2)])).toEqual([1, 2]);
    expect(batches).toEqual([[1, 2], [1], [2]]);
  });
});
