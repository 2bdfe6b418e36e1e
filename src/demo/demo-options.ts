/**
 * What `startDemo` (world.ts) takes, and what it tells its caller as it runs. A file of its own: world.ts
 * starts the parts that read them (open-world.ts), so they cannot import them from there.
 */
import type { IndexerEvent } from "../indexer/index.ts";
import type { Config } from "../services/index.ts";
import type { Mix } from "./mix.ts";
import type { SimulatorEvent } from "./simulator.ts";
import type { DemoUrls } from "./urls.ts";

export interface DemoOptions {
  /** Ports, data directory and the rest; the merchants' wallets are the demo's own. */
  config: Config;
  mix: Mix;
  /**
   * Delete the demo's week (its folder and analytics database) and start a fresh one; without it, a data
   * directory holding part of a week, or a damaged one, stops the demo (resume.ts).
   */
  fresh?: boolean;
  /** The indexer's `fundingLookback` (blocks); default its own, which the young chain clamps at block 0. */
  fundingLookback?: number;
  /**
   * Days of chain the week is played in (1 to 7, default 7), for a fresh start. Fewer days play the same
   * week's actions closer together in the week's last days, after empty blocks for the first ones, so the
   * window is still a week and a day chart shows the payments on the last days only.
   */
  days?: number;
  /**
   * The chains a fresh week plays beside Base, by slug (default every one of `DEMO_CHAINS`: Arbitrum and
   * Solana); `[]` plays Base alone. A resumed week plays the chains it started with.
   */
  chains?: readonly string[];
  onEvent?: (event: DemoEvent) => void;
}

export type DemoEvent =
  | { type: "started"; resumed: boolean; urls: DemoUrls; slot: number; slots: number }
  /** `chain`: a chain played beside Base (its slug); none, Base's. */
  | { type: "simulator"; chain?: string; event: SimulatorEvent }
  | { type: "indexer"; chain?: string; event: IndexerEvent }
  | { type: "note"; message: string };
