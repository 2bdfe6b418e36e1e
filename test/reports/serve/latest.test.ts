import { describe, expect, it } from "vitest";
import { StoreChanges } from "../../../src/analytics/changes.ts";
import { sleep } from "../../../src/common/sleep.ts";
import type { ReportWindow } from "../../../src/reports/model.ts";
import { LatestWindow } from "../../../src/reports/serve/latest.ts";

/** A latest window over `changes` whose build takes `ms` and names the epoch it started at as its end block. */
function latestOf(changes: StoreChanges, ms: number, chain = "base") {
  const builds: number[] = [];
  const latest = new LatestWindow(
    changes,
    async () => {
      const epoch = changes.epoch;
      builds.push(epoch);
      await sleep(ms);
      return { end_block: epoch } as ReportWindow;
    },
    chain,
  );
  return { latest, builds };
}

/** Lets the commits' listeners (microtasks) run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("the latest window", () => {
  it("is not rebuilt by another chain's commits, and is by its own and by those of every chain", async () => {
    const changes = new StoreChanges();
    const { latest, builds } = latestOf(changes, 5, "arbitrum");
    expect(await latest.end()).toBe(0);
    for (let i = 0; i < 5; i++) changes.committed(100 + i, "base");
    await settle();
    await latest.built();
    expect(builds).toEqual([0]);
    expect(await latest.end()).toBe(0);
    changes.committed(10, "arbitrum");
    await settle();
    await latest.built();
    expect(builds).toEqual([0, 6]);
    changes.committed(0);
    await settle();
    await latest.built();
    expect(builds).toEqual([0, 6, 7]);
  });

  it("rests four times a build's time before the commits' next, serving the last one built meanwhile", async () => {
    const changes = new StoreChanges();
    const { latest, builds } = latestOf(changes, 100);
    expect(await latest.end()).toBe(0);
    // Five commits within the rest: one build, once it is over, not one for each or back to back.
    for (let i = 1; i <= 5; i++) {
      changes.committed(i);
      await settle();
    }
    expect(builds).toEqual([0]);
    // A reader meanwhile is answered with the last one built, no build of its own.
    expect(await latest.end()).toBe(0);
    expect(builds).toEqual([0]);
    await sleep(600);
    expect(builds).toEqual([0, 5]);
    await latest.built();
    expect(await latest.end()).toBe(5);
  });

  it("builds a waiting window at once for whoever waits for every commit's", async () => {
    const changes = new StoreChanges();
    const { latest, builds } = latestOf(changes, 300);
    await latest.end();
    changes.committed(1);
    await settle();
    const asked = performance.now();
    await latest.built();
    // Started at once, not after the 1.2 s rest.
    expect(performance.now() - asked).toBeLessThan(1_200);
    expect(builds).toEqual([0, 1]);
    expect(await latest.end()).toBe(1);
  });

  it("is not built for commits while nobody has asked for it", async () => {
    const changes = new StoreChanges();
    const { latest, builds } = latestOf(changes, 1);
    changes.committed(1);
    await settle();
    await latest.built();
    expect(builds).toEqual([]);
  });
});
