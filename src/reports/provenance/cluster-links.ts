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

export interface ClusterLink {
  wallet: string;
  /** The wallet it is linked to: its funder, or the first of the wallets that behave as it does. */
  to: string;
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

/** Union-find over wallets; a cluster is named by its smallest address (the same whatever the links' order). */
export class UnionFind {
  private readonly parent = new Map<string, string>();

  find(w: string): string {
    let root = w;
    for (let p = this.parent.get(root); p !== undefined && p !== root; p = this.parent.get(root)) root = p;
    for (let x = w; x !== root; ) {
      const next = this.parent.get(x) as string;
      this.parent.set(x, root);
      x = next;
    }
    return root;
  }

  /** Joins the clusters of `a` and `b`; false when they were one already. */
  union(a: string, b: string): boolean {
    if (!this.parent.has(a)) this.parent.set(a, a);
    if (!this.parent.has(b)) this.parent.set(b, b);
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra === rb) return false;
    if (ra < rb) this.parent.set(rb, ra);
    else this.parent.set(ra, rb);
    return true;
  }

  /** Each wallet in a link and its cluster. */
  entries(): [string, string][] {
    return [...this.parent.keys()].map((w) => [w, this.find(w)]);
  }
}

/** Each wallet of the links and its cluster, named by its smallest address. */
export function unionFind(links: readonly { wallet: string; funder: string }[]): Map<string, string> {
  const uf = new UnionFind();
  for (const { wallet, funder } of links) uf.union(wallet, funder);
  return new Map(uf.entries());
}

/** The links found so far, and the clusters they make: all of them, and the strong ones alone. */
export class ClusterLinks {
  readonly all = new UnionFind();
  readonly strong = new UnionFind();
  readonly links: ClusterLink[] = [];
  /** Every link added, for the price test's forest: a heavier link between wallets already joined counts. */
  private readonly edges: ClusterLink[] = [];

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
  priceShares(): [string, string, number][] {
    const sorted = [...this.edges].sort(
      (a, b) => b.weight - a.weight || cmp(a.wallet, b.wallet) || cmp(a.to, b.to),
    );
    const forest = new UnionFind();
    const near = new Map<string, { to: string; weight: number }[]>();
    const connect = (a: string, b: string, weight: number) => {
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
    const share = new Map<string, number>();
    for (const [wallet, cluster] of this.all.entries()) {
      if (wallet !== cluster) continue;
      share.set(cluster, 1);
      const queue = [cluster];
      for (let i = 0; i < queue.length; i++) {
        const at = queue[i] as string;
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

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
