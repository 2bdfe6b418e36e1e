/**
 * The lifecycle's close and work it must not abandon (`Unfinished`): waited for past the close time-out
 * while under way, up to its own bound; not waited for at all when none is under way.
 */
import { describe, expect, it } from "vitest";
import { Lifecycle, Unfinished } from "../../src/common/lifecycle.ts";

describe("a lifecycle's close", () => {
  it("waits past its time-out for unfinished work, then closes what was registered before it", async () => {
    const lifecycle = new Lifecycle();
    const order: string[] = [];
    lifecycle.add("database", () => {
      order.push("database");
    });
    const work = new Unfinished(60_000);
    lifecycle.addUnfinished("paid calls", work);
    const end = work.start("a call");
    lifecycle.add("server", () => new Promise<void>((resolve) => setTimeout(resolve, 10)));
    const closed = lifecycle.close(50).then(() => order.push("closed"));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(order).toEqual([]);
    order.push("ended");
    end();
    await closed;
    expect(order).toEqual(["ended", "database", "closed"]);
  });

  it("abandons unfinished work after its own bound, and the rest with it", async () => {
    const lifecycle = new Lifecycle();
    let database = false;
    lifecycle.add("database", () => {
      database = true;
    });
    const work = new Unfinished(300);
    lifecycle.addUnfinished("paid calls", work);
    work.start("a call that never ends");
    const started = performance.now();
    await lifecycle.close(50);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(database).toBe(false);
  });

  it("keeps its time-out when no unfinished work is under way", async () => {
    const lifecycle = new Lifecycle();
    const work = new Unfinished(60_000);
    lifecycle.addUnfinished("paid calls", work);
    work.start("a call")();
    lifecycle.add("hung", () => new Promise<void>(() => {}));
    const started = performance.now();
    await lifecycle.close(50);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
