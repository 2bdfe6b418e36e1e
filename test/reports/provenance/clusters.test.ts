import { describe, expect, it } from "vitest";
import { UnionFind } from "../../../src/reports/provenance/cluster-links.ts";

/** Wallets are their places in address order (clusters.ts's `rw_cluster_ids`). */
function roots(links: readonly [wallet: number, funder: number][], size = 10): Record<number, number> {
  const uf = new UnionFind(size);
  for (const [wallet, funder] of links) uf.union(wallet, funder);
  return Object.fromEntries(uf.entries());
}

describe("clusters from funder links", () => {
  it("joins wallets through funders up and down any number of levels, named by the smallest", () => {
    const found = roots([
      [7, 3],
      [8, 4],
      [3, 0],
      [4, 0],
      [6, 5],
    ]);
    expect(found).toEqual({ 0: 0, 3: 0, 4: 0, 7: 0, 8: 0, 5: 5, 6: 5 });
  });

  it("names the same clusters whatever the links' order, cycles included", () => {
    const links: [number, number][] = [
      [3, 2],
      [2, 3],
      [5, 3],
      [9, 8],
    ];
    const forward = roots(links);
    expect(roots([...links].reverse())).toEqual(forward);
    expect(forward[5]).toBe(2);
  });

  it("leaves a wallet in no link out, and its own cluster", () => {
    const uf = new UnionFind(4);
    uf.union(1, 2);
    expect(uf.entries()).toEqual([
      [1, 1],
      [2, 1],
    ]);
    expect(uf.find(3)).toBe(3);
  });
});
