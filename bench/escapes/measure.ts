/**
 * One strategy at one knob value, measured as the sweeps measure a farm (test/helpers/window-flags.ts): the shared
 * week (`world.ts`) with the strategy's records on top, every report's window tables built, and read: what the
 * fake payments paid and how much of it passed unflagged (hidden), what the gamer's ledger says is gone, and what
 * each genuine look-alike lost.
 */
import { dispose, SharedStore, windowFlags } from "../../test/helpers/window-flags.ts";
import { type Knob, limitAt, type Strategy } from "./strategy.ts";
import { ARBITRUM_WINDOW, world } from "./world.ts";

export interface Point {
  strategy: Strategy;
  knob: Knob;
  /** The fake payments in the window: atomic units and count, and what passed unflagged. */
  fake: number;
  fakeTx: number;
  hidden: number;
  hiddenTx: number;
  /** Money gone from the gamer's control, by its ledger (atomic units). */
  gone: number;
  /** Each look-alike's share of its revenue flagged (Arbitrum's where the strategy built Arbitrum's week). */
  lost: Map<string, number>;
  /** Wall time of the point (building the store and the window), ms. */
  ms: number;
}

/** The bar: nothing hidden, or money gone at least half of what it hides. */
export const meetsBar = (p: Point) => p.hidden <= 0 || p.gone * 2 >= p.hidden;

/** The largest loss among the strategy's own look-alikes. */
export const ownLoss = (p: Point) =>
  Math.max(0, ...p.strategy.lookAlikes.map((n) => p.lost.get(n) ?? Number.NaN));

/** Whether the point is where its strategy says the escape is open. */
export const knownOpen = (p: Point) => limitAt(p.strategy, p.knob);

/** The shared week in a store made once, and each point played on a copy of it. */
export class Bench {
  private constructor(
    private readonly store: SharedStore,
    private readonly lookAlikes: ReturnType<typeof world>["lookAlikes"],
  ) {}

  static async open(): Promise<Bench> {
    const w = world();
    return new Bench(await SharedStore.of(w.records), w.lookAlikes);
  }

  async measure(strategy: Strategy, knob: Knob): Promise<Point> {
    const started = performance.now();
    const play = strategy.play(knob);
    for (const name of strategy.lookAlikes)
      if (!this.lookAlikes.has(name)) throw new Error(`${strategy.name}: no look-alike named "${name}"`);
    const analytics = await this.store.with(play.records);
    try {
      const base = await windowFlags(analytics);
      const arbitrum =
        strategy.chain === "arbitrum" ? await windowFlags(analytics, undefined, ARBITRUM_WINDOW) : undefined;
      const flags = arbitrum ?? base;
      let fake = 0;
      let fakeTx = 0;
      let flagged = 0;
      let flaggedTx = 0;
      for (const g of play.fake) {
        const f = flags(g);
        fake += f.paid;
        fakeTx += f.tx;
        flagged += f.flagged;
        flaggedTx += f.flaggedTx;
      }
      const lost = new Map<string, number>();
      for (const [name, g] of this.lookAlikes) {
        const on = g.chain === "arbitrum" ? arbitrum : base;
        if (!on) continue;
        const f = on(g);
        if (f.paid === 0) throw new Error(`look-alike "${name}" paid nothing in the window`);
        lost.set(name, f.flagged / f.paid);
      }
      const gone = Math.round(play.ledger.filter((l) => l.gone).reduce((s, l) => s + l.usd, 0) * 1e6);
      return {
        strategy,
        knob,
        fake,
        fakeTx,
        hidden: fake - flagged,
        hiddenTx: fakeTx - flaggedTx,
        gone,
        lost,
        ms: performance.now() - started,
      };
    } finally {
      dispose(analytics);
    }
  }

  close(): void {
    this.store.remove();
  }
}
