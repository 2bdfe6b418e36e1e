import { describe, expect, it } from "vitest";
import { groupedWriter } from "../../src/common/db/grouped.ts";

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
  await new Promise((resolve) => setImmediate(resolve));
  return state;
};

describe("groupedWriter", () => {
  it("commits a lone write at once, and groups what arrives during a commit into the next", async () => {
    const { batches, pending, commit } = manualCommits();
    const writer = groupedWriter(commit);
    const first = writer.write(1);
    expect(batches).toEqual([[1]]);
    const later = [writer.write(2), writer.write(3), writer.write(4)];
    expect(batches).toEqual([[1]]);
    expect(await settled(later[0] as Promise<void>)).toBe("pending");
    pending[0]?.resolve();
    await first;
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1], [2, 3, 4]]);
    expect(await settled(later[0] as Promise<void>)).toBe("pending");
    pending[1]?.resolve();
    await Promise.all(later);
  });

  it("rejects every write of a failed commit, and goes on with the next", async () => {
    const { batches, pending, commit } = manualCommits();
    const writer = groupedWriter(commit);
    const first = writer.write(1);
    const grouped = [writer.write(2), writer.write(3)];
    pending[0]?.resolve();
    await first;
    await new Promise((resolve) => setImmediate(resolve));
    const after = writer.write(4);
    pending[1]?.reject(new Error("disk full"));
    for (const write of grouped) await expect(write).rejects.toThrow("disk full");
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1], [2, 3], [4]]);
    pending[2]?.resolve();
    await after;
  });

  it("caps a batch at maxBatch", async () => {
    const { batches, pending, commit } = manualCommits();
    const writer = groupedWriter(commit, 2);
    const writes = [1, 2, 3, 4, 5, 6].map((n) => writer.write(n));
    for (let i = 0; i < 4; i++) {
      pending[i]?.resolve();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(writes);
    expect(batches).toEqual([[1], [2, 3], [4, 5], [6]]);
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
