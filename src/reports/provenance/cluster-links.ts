/**
 * The links that join wallets into clusters, each with the rule that made it, kept twice: every link (the
 * "one buyer" counts: a farm's payments, a crawler's merchants) and the strong ones alone (the price test,
 * which erases a merchant's genuine buyers when it merges them wrongly). See `clusters.ts`.
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

  /** Adds a link; true when it joined two strong clusters (for the funding rule's fixed point). */
  add(link: ClusterLink): boolean {
    const joinedAll = this.all.union(link.wallet, link.to);
    const joinedStrong = link.strong && this.strong.union(link.wallet, link.to);
    // A link between wallets already one cluster by the same strength explains nothing new.
    if (joinedAll || joinedStrong) this.links.push(link);
    return joinedStrong;
  }
}
