/**
 * The links that join wallets into clusters, each with the rule that made it, kept three ways: every link (the
 * "one buyer" counts: a farm's payments, a crawler's merchants), the strong ones alone (the rules that need a
 * yes or no: hubs fed by clusters, the funding rule's fixed point, the null model's payers), and every link
 * with its weight, for the price test, which counts buyers in proportion to how sure each link is: a
 * wrong merge there erases a merchant's genuine buyers, and a link that counts not at all below a cut is a
 * cut a farm sits just past. See `clusters.ts`.
 */

/** The rule behind a link: docs/screens.md, "Clusters and hubs", says what each one means. */
export type LinkRule = "funding" | "first_funder" | "behaviour";

/**
 * Wallets are numbers here, their places in `rw_cluster_ids` (clusters.ts), which are in address order: a
 * comparison of two numbers is the comparison of their addresses, and a 10M build no longer decodes hundreds
 * of thousands of addresses into strings and back.
 */
export interface ClusterLink {
  wallet: number;
  /** The wallet it is linked to: its funder, or the first of the wallets that behave as it does. */
  to: number;
  rule: LinkRule;
  strong: boolean;
  /** funding: the funder cluster's share of what the wallet received; behaviour: the null model's chance. */
  measure: number;
  /**
   * How far the price test counts the two as one buyer, 0 to 1 (1 for a strong link): two wallets joined
   * with weight w count as 2 - w buyers there (`ClusterLinks.priceShares`).
   */
  weight: number;
}

/** Union-find over wallets `0 .. size - 1`; a cluster is named by its smallest (the same whatever the links' order). */
export class UnionFind {
  /** Each wallet's parent; -1 for a wallet in no link. */
  private readonly parent: Int32Array;
  /** The wallets in a link, in the order they came. */
  private readonly members: number[] = [];

  constructor(size: number) {
    this.parent = new Int32Array(size).fill(-1);
  }

  find(w: number): number {
    const parent = this.parent;
    if (parent[w] === -1) return w;
    let root = w;
    while (parent[root] !== root) root = parent[root] as number;
    for (let x = w; x !== root; ) {
      const next = parent[x] as number;
      parent[x] = root;
      x = next;
    }
    return root;
  }

  /** Joins the clusters of `a` and `b`; false when they were one already. */
  union(a: number, b: number): boolean {
    this.add(a);
    this.add(b);
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra === rb) return false;
    if (ra < rb) this.parent[rb] = ra;
    else this.parent[ra] = rb;
    return true;
  }

  /** Each wallet in a link and its cluster. */
  entries(): [number, number][] {
    return this.members.map((w) => [w, this.find(w)]);
  }

  private add(w: number): void {
    if (this.parent[w] !== -1) return;
    this.parent[w] = w;
    this.members.push(w);
  }
}

/** The links found so far, and the clusters they make: all of them, and the strong ones alone. */
export class ClusterLinks {
  readonly all: UnionFind;
  readonly strong: UnionFind;
  readonly links: ClusterLink[] = [];
  /** Every link added, for the price test's forest: a heavier link between wallets already joined counts. */
  private readonly edges: ClusterLink[] = [];

  /** Links among `size` wallets (`rw_cluster_ids`). */
  constructor(private readonly size: number) {
    this.all = new UnionFind(size);
    this.strong = new UnionFind(size);
  }

  /** Adds a link; true when it joined two strong clusters (for the funding rule's fixed point). */
  add(link: ClusterLink): boolean {
    const joinedAll = this.all.union(link.wallet, link.to);
    const joinedStrong = link.strong && this.strong.union(link.wallet, link.to);
    // A link between wallets already one cluster by the same strength explains nothing new.
    if (joinedAll || joinedStrong) this.links.push(link);
    this.edges.push(link);
    return joinedStrong;
  }

  /**
   * Each linked wallet, its cluster (every link) and its share of a buyer in the price test: the heaviest
   * links that join the cluster (a maximum spanning forest, Kruskal's), rooted at the cluster's name; the
   * root counts 1, every other wallet 1 - the weight of the link to its parent. The payers of one cluster in
   * a band then count as the sum of their shares, at least 1: one buyer where every link is strong, as many
   * as wallets where every link weighs nothing, and in between in proportion, with no cut to sit past.
   */
  priceShares(): [number, number, number][] {
    const sorted = [...this.edges].sort((a, b) => b.weight - a.weight || a.wallet - b.wallet || a.to - b.to);
    const forest = new UnionFind(this.size);
    const near = new Map<number, { to: number; weight: number }[]>();
    const connect = (a: number, b: number, weight: number) => {
      const list = near.get(a);
      if (list) list.push({ to: b, weight });
      else near.set(a, [{ to: b, weight }]);
    };
    for (const e of sorted) {
      if (!forest.union(e.wallet, e.to)) continue;
      const weight = Math.min(Math.max(e.weight, 0), 1);
      connect(e.wallet, e.to, weight);
      connect(e.to, e.wallet, weight);
    }
    const share = new Map<number, number>();
    for (const [wallet, cluster] of this.all.entries()) {
      if (wallet !== cluster) continue;
      share.set(cluster, 1);
      const queue = [cluster];
      for (let i = 0; i < queue.length; i++) {
        const at = queue[i] as number;
        for (const next of near.get(at) ?? []) {
          if (share.has(next.to)) continue;
          share.set(next.to, 1 - next.weight);
          queue.push(next.to);
        }
      }
    }
    return this.all.entries().map(([wallet, cluster]) => [wallet, cluster, share.get(wallet) ?? 1]);
  }
}
