import { describe, expect, it } from "vitest";
import { type FlowEdge, RingGraph, stronglyConnected } from "../../../src/reports/screens/cycles.ts";

/** The ring pairs as (payer, payTo) only. */
const ringPairs = (edges: FlowEdge[], share: number) =>
  new RingGraph(edges, share).pairs.map(({ payer, payTo }) => ({ payer, payTo }));

const edge = (
  src: string,
  dst: string,
  amount = 10,
  paid = true,
  firstBlock = 1,
  lastBlock = 1,
): FlowEdge => ({
  src,
  dst,
  amount,
  firstBlock,
  lastBlock,
  paid,
});

describe("stronglyConnected", () => {
  it("finds every cycle's wallets and leaves chains out", () => {
    const c = stronglyConnected([
      edge("a", "b"),
      edge("b", "c"),
      edge("c", "a"),
      edge("c", "d"),
      edge("x", "y"),
      edge("y", "x"),
      edge("y", "z"),
    ]);
    expect(c.get("a")).toBe(c.get("b"));
    expect(c.get("b")).toBe(c.get("c"));
    expect(c.get("x")).toBe(c.get("y"));
    expect(c.get("a")).not.toBe(c.get("x"));
    expect([c.has("d"), c.has("z")]).toEqual([false, false]);
  });

  it("handles a cycle of 200,000 wallets without running out of stack", () => {
    const n = 200_000;
    const edges = Array.from({ length: n }, (_, i) => edge(`w${i}`, `w${(i + 1) % n}`));
    const c = stronglyConnected(edges);
    expect(c.size).toBe(n);
    expect(new Set(c.values()).size).toBe(1);
  });
});

describe("ringPairs", () => {
  it("flags balanced payments around a cycle, not a lopsided one", () => {
    expect(ringPairs([edge("a", "b"), edge("b", "c"), edge("c", "a")], 0.5)).toHaveLength(3);
    // b got 10 from a but sent 100: b's payment is not money coming round.
    expect(ringPairs([edge("a", "b"), edge("b", "a", 100)], 0.5)).toEqual([{ payer: "a", payTo: "b" }]);
  });

  it("leaves a refund after the last payment alone, but not one the buyer spends again", () => {
    const paid = edge("buyer", "m", 100, true, 10, 20);
    expect(ringPairs([paid, edge("m", "buyer", 100, false, 30, 30)], 0.5)).toEqual([]);
    expect(ringPairs([paid, edge("m", "buyer", 100, false, 15, 15)], 0.5)).toEqual([
      { payer: "buyer", payTo: "m" },
    ]);
    // Giving back more than was paid is no refund.
    expect(ringPairs([paid, edge("m", "buyer", 400, false, 30, 30)], 0.5)).toEqual([
      { payer: "buyer", payTo: "m" },
    ]);
  });

  it("does not call money back through another wallet a refund", () => {
    const edges = [
      edge("buyer", "m", 100, true, 10, 20),
      edge("m", "x", 100, false, 30),
      edge("x", "buyer", 100, false, 31),
    ];
    expect(ringPairs(edges, 0.5)).toEqual([{ payer: "buyer", payTo: "m" }]);
  });
});

describe("RingGraph", () => {
  it("says how much came back to each ring payer", () => {
    const graph = new RingGraph([edge("a", "b", 10), edge("b", "c", 8), edge("c", "a", 6)], 0.5);
    expect(graph.pairs).toContainEqual({ payer: "a", payTo: "b", returned: 6, sent: 10 });
  });

  it("gives the shortest cycle through a payment, in order", () => {
    const edges = [
      edge("a", "b"),
      edge("b", "c"),
      edge("c", "d"),
      edge("d", "a"),
      edge("b", "x", 5, false),
      edge("x", "y", 5, false),
      edge("y", "z", 5, false),
      edge("z", "a", 5, false),
    ];
    const cycle = new RingGraph(edges, 0.5).cycle("a", "b");
    expect(cycle?.steps.map((e) => `${e.src}>${e.dst}`)).toEqual(["a>b", "b>c", "c>d", "d>a"]);
    expect(cycle?.moves).toBe(4);
    expect(cycle?.componentSize).toBe(7);
    // Not in one component: no cycle.
    expect(new RingGraph(edges, 0.5).cycle("a", "nobody")).toBeNull();
  });

  it("shows the first moves and the last of a long cycle, and counts them all", () => {
    const n = 30;
    const edges = Array.from({ length: n }, (_, i) => edge(`w${i}`, `w${(i + 1) % n}`));
    const cycle = new RingGraph(edges, 0.5).cycle("w0", "w1", 10_000, 12);
    expect(cycle?.moves).toBe(30);
    expect(cycle?.steps).toHaveLength(12);
    expect(cycle?.steps[0]?.src).toBe("w0");
    expect(cycle?.steps[11]?.dst).toBe("w0");
    // A search budget smaller than the cycle gives up rather than scanning a huge component.
    expect(new RingGraph(edges, 0.5).cycle("w0", "w1", 5)).toBeNull();
  });
});
