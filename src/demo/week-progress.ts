import { sleep } from "../common/sleep.ts";
import { DEFAULT_REORG_DEPTH, type IndexerEvent } from "../indexer/index.ts";
import { DemoError } from "./resume.ts";
import type { SimulatorEvent } from "./simulator.ts";

/** How far the demo's week is: the block the simulator reached the present at, and the indexer's last. */
export class WeekProgress {
  private indexed = -1;
  private caughtUp: number | undefined;
  /** Whether the listings were read from discovery (or that failed) since the simulator caught up. */
  private listedSinceCaughtUp = false;

  /**
   * `pastWeek`: how many blocks after the played week's last the indexer must hold too. A chain whose blocks
   * come as transactions (Arbitrum's, sim-chain.ts) dates its week's end by its latest confirmed block, and the
   * played week's last is dated by its last payment, minutes before the present the simulator reached: ready at
   * it, the demo showed its day as "23.9 hours" for the minute the blocks after it took to confirm. The first
   * block after it (`confirmPlayed`'s, seconds before that present) ends the finished week; it costs a second.
   */
  constructor(private readonly pastWeek = 0) {}

  indexer(event: IndexerEvent): void {
    if (event.type === "batch") this.indexed = Math.max(this.indexed, event.to);
    if (event.type === "caught_up") this.indexed = Math.max(this.indexed, event.block);
    if (event.type === "listings" || event.type === "listings_failed") this.listed();
  }

  /**
   * The listings were read from discovery (or that failed). A chain beside Base hears it from Base's
   * indexer: one indexer reads the listings for all, as `index` with several RPCs does.
   */
  listed(): void {
    if (this.caughtUp !== undefined) this.listedSinceCaughtUp = true;
  }

  simulator(event: SimulatorEvent): void {
    if (event.type === "caught_up") this.caughtUp = event.block;
  }

  /**
   * Settles once the week is played and indexed: the simulator reached the present, the indexer has every
   * block of the week it can confirm and has read the listings since (the Bazaar lists an endpoint once it
   * is first paid: read before the week's last new endpoints were, a merchant's prices would be missing
   * from its report, and the tiny payments its prices expose with them). Rejects when `signal` aborts first.
   * The demo asks for the leaderboards only once every chain's week is: a latest window asked for is rebuilt
   * at each of its chain's commits (src/reports/serve/latest.ts), and a chain ready first would be rebuilt
   * while the others catch up.
   */
  async played(signal: AbortSignal): Promise<void> {
    for (;;) {
      if (signal.aborted) throw new DemoError("stopped before the week was ready");
      const indexed =
        this.caughtUp !== undefined && this.indexed >= this.caughtUp - DEFAULT_REORG_DEPTH + this.pastWeek;
      if (indexed && this.listedSinceCaughtUp) return;
      await sleep(250);
    }
  }
}
