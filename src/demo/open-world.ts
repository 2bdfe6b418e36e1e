/**
 * The world a demo starts with: the one its data directory saved (resume.ts), or a fresh one, for which
 * the directory is cleared.
 */
import { BLOCK_SECONDS, WEEK_BLOCKS } from "../chain/base.ts";
import { dataLayout } from "../config/layout.ts";
import { DEFAULT_REORG_DEPTH } from "../indexer/index.ts";
import type { DemoOptions } from "./demo-options.ts";
import { DEMO_CHAINS, FURTHER_CHAINS } from "./further-chains.ts";
import type { Mix } from "./mix.ts";
import { SLOTS_PER_WEEK, slotSecondsFor } from "./plan-types.ts";
import { clearForFreshStart, DemoError, prepareStart, type World } from "./resume.ts";

/** Slot 0 starts this many blocks after genesis; the chain holds a week plus this and the confirmations. */
const LEAD_BLOCKS = 600;

/**
 * The saved world of `dataDir`, or a fresh one; `note` is told what a resumed world ignores and what
 * `--fresh` deleted. Throws a DemoError, before any file is changed, when the demo cannot start there.
 */
export async function openWorld(
  dataDir: string,
  options: Pick<DemoOptions, "mix" | "fresh" | "days" | "chains">,
  note: (message: string) => void,
): Promise<{ world: World; resumed: boolean }> {
  if (
    options.days !== undefined &&
    !(Number.isInteger(options.days) && options.days >= 1 && options.days <= 7)
  ) {
    throw new DemoError(`a week is played in 1 to 7 days, not ${options.days}`);
  }
  const unknown = options.chains?.find((slug) => !(DEMO_CHAINS as readonly string[]).includes(slug));
  if (unknown !== undefined) {
    throw new DemoError(`the demo plays Base and ${DEMO_CHAINS.join(", ")}, not ${unknown}`);
  }
  // Before anything starts: a refusal leaves every file as it was (the devnet saves its chain when it stops).
  const { plan, files } = await prepareStart(dataDir, { fresh: options.fresh === true });
  if (plan.start === "resume") {
    const w = plan.world;
    if (JSON.stringify(w.mix) !== JSON.stringify(options.mix)) {
      note(
        "resuming with the population the demo started with (--mix and --scale apply to a fresh data directory)",
      );
    }
    const days = w.slotSeconds === undefined ? 7 : Math.round((w.slotSeconds * SLOTS_PER_WEEK) / 86_400);
    if (options.days !== undefined && options.days !== days) {
      note(`resuming the week played in ${days} days (--days applies to a fresh data directory)`);
    }
    const played = [...(w.chains ?? []), ...(w.solana ? ["solana"] : [])];
    if (options.chains !== undefined && options.chains.join(",") !== played.join(",")) {
      note(
        `resuming the week on ${["base", ...played].join(" and ")}, the chains it started with (--chain applies to a fresh data directory)`,
      );
    }
    return { world: w, resumed: true };
  }
  clearForFreshStart(dataDir);
  const layout = dataLayout(dataDir);
  const deleted = [
    ...(files.world.state !== "absent" || files.chain || files.others.length > 0 ? [layout.demo.dir] : []),
    ...(files.analytics ? [layout.analytics.file] : []),
  ];
  if (options.fresh && deleted.length > 0) note(`--fresh: deleted ${deleted.join(" and ")}`);
  return {
    world: freshWorld(Math.floor(Date.now() / 1000), options.days ?? 7, options.mix, options.chains),
    resumed: false,
  };
}

/** A fresh world whose week, played in `days` days, ends at `now`, on Base and `chains` (default every one). */
export function freshWorld(
  now: number,
  days: number,
  mix: Mix,
  chains: readonly string[] = DEMO_CHAINS,
): World {
  const slotSeconds = slotSecondsFor(days);
  // The blocks of the week's unplayed first days: mined empty before slot 0, which a chain without state
  // roots does at tens of thousands a second.
  const skipped = WEEK_BLOCKS - (SLOTS_PER_WEEK * slotSeconds) / BLOCK_SECONDS;
  const genesisTime = now - 2 * (WEEK_BLOCKS + DEFAULT_REORG_DEPTH + LEAD_BLOCKS);
  return {
    version: 1,
    genesisTime,
    epoch: genesisTime + 2 * (LEAD_BLOCKS + skipped),
    mix,
    ...(days < 7 ? { slotSeconds } : {}),
    chains: chains.filter((slug) => (FURTHER_CHAINS as readonly string[]).includes(slug)),
    ...(chains.includes("solana") ? { solana: true } : {}),
  };
}
