import { describe, expect, it } from "vitest";
import { Slots } from "../../../../src/merchants/social/providers/slots.ts";

const never = () => new AbortController().signal;

describe("slots of an upstream account", () => {
  it("lets `size` through at once and the others in turn, first come first served", async () => {
    const slots = new Slots(2);
    const a = await slots.take(never());
    const b = await slots.take(never());
    const order: string[] = [];
    const inLine = (name: string) =>
      slots.take(never()).then((give) => {
        order.push(name);
        return give;
      });
    const c = inLine("c");
    const d = inLine("d");
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(order).toEqual([]);
    a();
    a(); // giving back twice frees one slot only
    expect(await c).toBeTypeOf("function");
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(order).toEqual(["c"]);
    b();
    await d;
    expect(order).toEqual(["c", "d"]);
  });

  it("gives up waiting when the caller's signal aborts, and the queue goes on without it", async () => {
    const slots = new Slots(1);
    const first = await slots.take(never());
    const gone = new AbortController();
    const waiting = slots.take(gone.signal);
    const next = slots.take(never());
    gone.abort(new Error("caller left"));
    await expect(waiting).rejects.toThrow("caller left");
    first();
    expect(await next).toBeTypeOf("function");
    await expect(slots.take(AbortSignal.abort(new Error("already gone")))).rejects.toThrow("already gone");
  });
});
