import { describe, expect, it } from "vitest";
import { StoreChanges } from "../../src/analytics/changes.ts";
import { bumpDataVersion } from "../../src/analytics/migrations.ts";
import { tempAnalytics } from "../helpers/data.ts";

describe("StoreChanges", () => {
  it("knows whether a write since an epoch reached a window's end block", () => {
    const changes = new StoreChanges();
    expect(changes.untouchedSince(0, 100)).toBe(true);
    changes.committed(200);
    expect(changes.untouchedSince(0, 100)).toBe(true);
    expect(changes.untouchedSince(0, 200)).toBe(false);
    expect(changes.untouchedSince(0, Number.POSITIVE_INFINITY)).toBe(false);
    expect(changes.untouchedSince(1, Number.POSITIVE_INFINITY)).toBe(true);
    changes.committed(50);
    expect(changes.untouchedSince(1, 100)).toBe(false);
    expect(changes.untouchedSince(1, 49)).toBe(true);
  });

  it("takes everything as changed past the writes it remembers", () => {
    const changes = new StoreChanges();
    for (let i = 0; i < 5_000; i++) changes.committed(1_000_000);
    expect(changes.untouchedSince(0, 10)).toBe(false);
    expect(changes.untouchedSince(changes.epoch - 100, 10)).toBe(true);
  });
});

describe("a store's writes", () => {
  it("are told once committed, to every connection of the process, and never when undone", async () => {
    const analytics = await tempAnalytics();
    const fork = await analytics.fork();
    try {
      const seen: number[] = [];
      fork.changes.subscribe((epoch) => seen.push(epoch));
      await analytics.transaction(async () => {
        await bumpDataVersion(analytics, 10);
        expect(fork.changes.epoch).toBe(0);
      });
      expect(seen).toEqual([1]);
      await expect(
        analytics.transaction(async () => {
          await bumpDataVersion(analytics, 5);
          throw new Error("undone");
        }),
      ).rejects.toThrow("undone");
      expect(seen).toEqual([1]);
      expect(fork.changes.untouchedSince(1, 9)).toBe(true);
      await bumpDataVersion(fork, 3);
      expect(seen).toEqual([1, 2]);
      expect(analytics.changes.untouchedSince(1, 9)).toBe(false);
    } finally {
      fork.close();
      analytics.close();
    }
  });
});
