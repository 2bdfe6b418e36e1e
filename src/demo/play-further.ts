/**
 * The chains the demo plays beside Base (issue 67 item 7). Each is a devnet of its own (Arbitrum One's chain
 * id and USDC, x402's contracts at their addresses, blocks as transactions come: sim-chain.ts), with buyers
 * of its own paying the same merchants through the same facilitator (every host's 402 lists each network),
 * a ground truth of its own under `demo/<slug>/`, and an indexer of its own into the one analytics database,
 * so that its reports, its leaderboard and `simulate --check --chain <slug>` stand apart from Base's.
 */
import { chainBySlug } from "../chain/chains.ts";
import type { Devnet } from "../chain/devnet/index.ts";
import type { Lifecycle } from "../common/lifecycle.ts";
import type { DemoChainFiles } from "../config/layout.ts";
import type { Config } from "../services/index.ts";
import { headOf, startChain } from "./chain.ts";
import { FURTHER_CHAIN_PORTS, type FurtherChain } from "./further-chains.ts";
import { furtherMix } from "./mix.ts";
import { SLOT_SECONDS } from "./plan-types.ts";
import { playWeek, type WeekPlay } from "./play-week.ts";
import type { World } from "./resume.ts";
import type { SimulatorStats } from "./simulator.ts";
import { repairTruthNotes } from "./truth-notes.ts";

/** A chain played beside Base, once its devnet runs. */
export interface FurtherChainRun {
  slug: FurtherChain;
  devnet: Devnet;
  files: DemoChainFiles;
  /** The time of the head block the devnet started with: where a resumed week's plan goes on. */
  headTime: number;
}

/** Starts the devnet of each chain `world` plays beside Base, registered with `lifecycle`. */
export async function startFurtherDevnets(
  world: World,
  config: Config,
  files: (slug: string) => DemoChainFiles,
  lifecycle: Lifecycle,
  note: (message: string) => void,
): Promise<FurtherChainRun[]> {
  const runs: FurtherChainRun[] = [];
  for (const slug of (world.chains ?? []) as FurtherChain[]) {
    const chainFiles = files(slug);
    const devnet = await startChain(config.ports[FURTHER_CHAIN_PORTS[slug]], chainFiles.chain, world, {
      ...chainBySlug(slug),
      slug,
    });
    lifecycle.add(`anvil (${slug})`, () => devnet.stop());
    const head = await headOf(devnet);
    for (const message of repairTruthNotes(chainFiles.truth, chainFiles.truthComplete, head.number))
      note(`${slug}: ${message}`);
    runs.push({ slug, devnet, files: chainFiles, headTime: head.time });
  }
  return runs;
}

/** What a further chain's week is played with: Base's merchants, the world, whether it resumes. */
export interface FurtherPlay extends Omit<WeekPlay, "startSlot" | "files"> {
  world: World;
  resumed: boolean;
}

/** Plays the chain's week: its own population (`furtherMix`) paying on its network. */
export function playFurtherChain(
  run: FurtherChainRun,
  index: number,
  play: FurtherPlay,
): Promise<SimulatorStats> {
  const { world } = play;
  const { devnet } = run;
  const slotSeconds = world.slotSeconds ?? SLOT_SECONDS;
  return playWeek(
    world,
    furtherMix(world.mix, index),
    {
      rpc: devnet.rpc,
      usdc: devnet.usdc,
      owner: devnet.owner,
      chainId: devnet.chainId,
      network: chainBySlug(run.slug).caip2,
      blocksOnDemand: true,
    },
    {
      ...play,
      // The slot after the one the chain's head is dated in: its blocks have no fixed rhythm to count by.
      startSlot: play.resumed ? Math.max(0, Math.floor((run.headTime - world.epoch) / slotSeconds) + 1) : 0,
      files: run.files,
    },
  );
}
