/**
 * The walk that finds the other chain's wallets on a way from a burn's recipient to a burner
 * (src/reports/provenance/bridge-relays.ts); what the screens make of those ways is tested with the bridge's
 * moves (bridges.test.ts).
 */
import { describe, expect, it } from "vitest";
import { walk } from "../../../src/reports/provenance/bridge-relays.ts";

describe("the wallets on a way between a burn's recipient and a burner", () => {
  it("are those reachable from a start that reach an end", () => {
    // 0 -> 1 -> 2 -> 3 (an end), 1 -> 4 (a dead end), 5 -> 3 (not reached from a start).
    const edges = [
      { src: 0, dst: 1 },
      { src: 1, dst: 2 },
      { src: 2, dst: 3 },
      { src: 1, dst: 4 },
      { src: 5, dst: 3 },
    ];
    expect([...walk(edges, [0], [3])].sort()).toEqual([0, 1, 2, 3]);
    expect([...walk(edges, [4], [3])]).toEqual([]);
  });
});
