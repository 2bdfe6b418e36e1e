/**
 * The ring screen's graph work: which x402 payments belong to money going round in circles.
 *
 * The window's money moves (x402 payments and plain USDC transfers, hubs left out) form a directed
 * graph. Money can only come back to a wallet that lies on a cycle, and the wallets on cycles are
 * exactly the strongly connected components of two or more wallets, found here in one pass (Tarjan's
 * algorithm, iterative, linear in wallets and moves), whatever the cycles' length.
 *
 * A payment from P to M inside a component is a ring pair when what P received from inside the
 * component is at least `minReturnShare` of what it sent into it (the report takes any share, 0, and
 * flags the pair's payments in proportion to it: `week/aggregates.ts`), and the money came back while P was
 * still paying M, unless it came back only as plain transfers from M itself of no more than P paid it.
 * Such a transfer after the buyer's last payment is a refund, and a refunded customer is a customer.
 */

/** The money that moved from one wallet to another in the window, by one means. */
export interface FlowEdge {
  src: string;
  dst: string;
  /** Atomic USDC units, summed over the moves. */
  amount: number;
  firstBlock: number;
  lastBlock: number;
  /** x402 payments (src paid dst), else plain transfers. */
  paid: boolean;
}

export interface RingPair {
  payer: string;
  payTo: string;
  /** What came back to the payer from inside its component, and what it sent into it (atomic units). */
  returned: number;
  sent: number;
}

/** A closed walk of money moves through a ring pair, for the evidence: the pair's payment first. */
export interface RingCycle {
  /** The moves in order, from the payer back to it: all of them up to `maxSteps`, else the first `maxSteps - 1` and the last. */
  steps: FlowEdge[];
  /** How many moves the cycle has. */
  moves: number;
  /** The wallets of the pair's component (strongly connected: every one can reach every other). */
  componentSize: number;
}

/**
 * The window's money moves as a graph: the ring pairs (see the module's comment) and, for the
 * evidence, a cycle through any of them.
 */
export class RingGraph {
  readonly pairs: RingPair[] = [];
  private readonly component: Map<string, number>;
  private readonly componentSizes = new Map<number, number>();
  /** Moves inside components, by sender. */
  private readonly out = new Map<string, FlowEdge[]>();

  constructor(edges: readonly FlowEdge[], minReturnShare = 0) {
    this.component = stronglyConnected(edges);
    for (const c of this.component.values())
      this.componentSizes.set(c, (this.componentSizes.get(c) ?? 0) + 1);
    const inside = edges.filter((e) => e.src !== e.dst && sameComponent(this.component, e.src, e.dst));

    const received = new Map<string, FlowEdge[]>();
    const sent = new Map<string, number>();
    for (const e of inside) {
      push(received, e.dst, e);
      push(this.out, e.src, e);
      sent.set(e.src, (sent.get(e.src) ?? 0) + e.amount);
    }

    for (const e of inside) {
      if (!e.paid) continue;
      const back = received.get(e.src) ?? [];
      const returned = back.reduce((sum, r) => sum + r.amount, 0);
      const out = sent.get(e.src) ?? 0;
      if (returned < minReturnShare * out) continue;
      const refundOnly = returned <= e.amount && back.every((r) => !r.paid && r.src === e.dst);
      const firstBack = Math.min(...back.map((r) => r.firstBlock));
      if (refundOnly && firstBack > e.lastBlock) continue;
      this.pairs.push({ payer: e.src, payTo: e.dst, returned, sent: out });
    }
  }

  /**
   * The shortest way the money of `payer`'s x402 payments to `payTo` came back to `payer` (breadth first
   * from `payTo`, looking at no more than `budget` wallets), after the payment itself; null when the
   * pair is not in one component or the search ran out of budget.
   */
  cycle(payer: string, payTo: string, budget = 10_000, maxSteps = 12): RingCycle | null {
    const c = this.component.get(payer);
    if (c === undefined || c !== this.component.get(payTo)) return null;
    const first = this.out.get(payer)?.find((e) => e.dst === payTo && e.paid);
    if (!first) return null;
    const via = new Map<string, FlowEdge>([[payTo, first]]);
    const queue = [payTo];
    for (let i = 0; i < queue.length && via.size <= budget; i++) {
      const wallet = queue[i] as string;
      for (const e of this.out.get(wallet) ?? []) {
        if (via.has(e.dst)) continue;
        via.set(e.dst, e);
        if (e.dst === payer) {
          const steps = walkBack(via, payer);
          const shown =
            steps.length > maxSteps ? [...steps.slice(0, maxSteps - 1), steps.at(-1) as FlowEdge] : steps;
          return { steps: shown, moves: steps.length, componentSize: this.sizeOf(c) };
        }
        queue.push(e.dst);
      }
    }
    return null;
  }

  private sizeOf(component: number): number {
    return this.componentSizes.get(component) ?? 0;
  }
}

/** The ring pairs of a set of money moves (`RingGraph`). */
export function ringPairs(edges: readonly FlowEdge[], minReturnShare: number): RingPair[] {
  return new RingGraph(edges, minReturnShare).pairs;
}

/** The moves that led back to `end`, in order from its payment on. */
function walkBack(via: Map<string, FlowEdge>, end: string): FlowEdge[] {
  const steps: FlowEdge[] = [];
  let e = via.get(end);
  while (e) {
    steps.push(e);
    e = e.src === end ? undefined : via.get(e.src);
  }
  return steps.reverse();
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function sameComponent(component: Map<string, number>, a: string, b: string): boolean {
  const c = component.get(a);
  return c !== undefined && c === component.get(b);
}

/**
 * Wallet -> component id, for wallets in components of two or more wallets only. Tarjan's algorithm
 * with an explicit stack, so a long chain cannot overflow the call stack.
 */
export function stronglyConnected(edges: readonly FlowEdge[]): Map<string, number> {
  const ids = new Map<string, number>();
  const names: string[] = [];
  const idOf = (w: string) => {
    let id = ids.get(w);
    if (id === undefined) {
      id = names.length;
      ids.set(w, id);
      names.push(w);
    }
    return id;
  };
  const pairs = edges.map((e) => [idOf(e.src), idOf(e.dst)] as const);
  const n = names.length;
  // Adjacency in compressed rows: out-edges of v are targets[start[v] .. start[v + 1]).
  const start = new Int32Array(n + 1);
  for (const [s] of pairs) start[s + 1] = (start[s + 1] as number) + 1;
  for (let v = 0; v < n; v++) start[v + 1] = (start[v + 1] as number) + (start[v] as number);
  const targets = new Int32Array(pairs.length);
  const fill = start.slice(0, n);
  for (const [s, d] of pairs) {
    targets[fill[s] as number] = d;
    fill[s] = (fill[s] as number) + 1;
  }

  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const next = new Int32Array(n); // the next out-edge of v to look at
  const stack: number[] = [];
  const calls: number[] = [];
  const component = new Map<string, number>();
  let counter = 0;
  let components = 0;

  for (let root = 0; root < n; root++) {
    if ((index[root] as number) >= 0) continue;
    calls.push(root);
    index[root] = low[root] = counter++;
    next[root] = start[root] as number;
    stack.push(root);
    onStack[root] = 1;
    while (calls.length > 0) {
      const v = calls[calls.length - 1] as number;
      if ((next[v] as number) < (start[v + 1] as number)) {
        const w = targets[next[v] as number] as number;
        next[v] = (next[v] as number) + 1;
        if ((index[w] as number) < 0) {
          index[w] = low[w] = counter++;
          next[w] = start[w] as number;
          stack.push(w);
          onStack[w] = 1;
          calls.push(w);
        } else if (onStack[w]) {
          low[v] = Math.min(low[v] as number, index[w] as number);
        }
        continue;
      }
      calls.pop();
      const parent = calls[calls.length - 1];
      if (parent !== undefined) low[parent] = Math.min(low[parent] as number, low[v] as number);
      if (low[v] !== index[v]) continue;
      const members: number[] = [];
      let w: number;
      do {
        w = stack.pop() as number;
        onStack[w] = 0;
        members.push(w);
      } while (w !== v);
      if (members.length < 2) continue;
      for (const m of members) component.set(names[m] as string, components);
      components++;
    }
  }
  return component;
}
