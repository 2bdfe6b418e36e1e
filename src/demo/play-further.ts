/**
 * The chains the demo plays beside Base (issue 67 item 7). Each is a devnet of its own (Arbitrum One's chain
 * id and USDC, x402's contracts at their addresses, blocks as transactions come: sim-chain.ts), with buyers
 * of its own paying the same merchants through the same facilitator (every host's 402 lists each network),
 * a ground truth of its own under `demo/<slug>/`, and an indexer of its own into the one analytics database,
 * so that its reports, its leaderboard and `simulate --check --chain <slug>` stand apart from Base's.
 */
import { chainBySlug } from "../chain/chains.ts";
import type { Devnet, DevnetAccount } from "../chain/devnet/index.ts";
import type { Lifecycle } from "../common/lifecycle.ts";
import type { DemoChainFiles } from "../config/layout.ts";
import type { Config } from "../services/index.ts";
import { headOf, startChain } from "./chain.ts";
import { FURTHER_CHAIN_PORTS, type FurtherChain } from "./further-chains.ts";
import { furtherMix } from "./mix.ts";
import { chooseRoles } from "./plan.ts";
import { type PlanMerchant, SLOT_SECONDS } from "./plan-types.ts";
import type { World } from "./resume.ts";
import type { SimMerchant } from "./sim-merchants.ts";
import { runSimulatorThread } from "./sim-thread.ts";
import type { SimulatorEvent, SimulatorStats } from "./simulator.ts";
import { repairTruthNotes } from "./truth-notes.ts";
import { simulatedKeys, WALLET_HOSTS } from "./wallets.ts";

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

export interface FurtherPlay {
  world: World;
  resumed: boolean;
  /** The merchants as Base's simulator pays them, and their wallets (`merchant:<id>`). */
  merchants: readonly SimMerchant[];
  named: readonly { id: string; key: DevnetAccount }[];
  signal: AbortSignal;
  onEvent: (event: SimulatorEvent) => void;
}

/** Plays the chain's week: its own population (`furtherMix`) paying on its network. */
export function playFurtherChain(
  run: FurtherChainRun,
  index: number,
  play: FurtherPlay,
): Promise<SimulatorStats> {
  const { world } = play;
  const mix = furtherMix(world.mix, index);
  const planMerchants: PlanMerchant[] = play.merchants.map(({ id, endpoints }) => ({ id, endpoints }));
  const slotSeconds = world.slotSeconds ?? SLOT_SECONDS;
  const { devnet } = run;
  return runSimulatorThread({
    rpc: devnet.rpc,
    usdc: devnet.usdc,
    owner: devnet.owner,
    chainId: devnet.chainId,
    network: chainBySlug(run.slug).caip2,
    blocksOnDemand: true,
    plan: {
      mix,
      merchants: planMerchants,
      // As on Base: the patterns the screens exist for are played by the utility API and the shops.
      roles: chooseRoles(
        planMerchants,
        "utility",
        WALLET_HOSTS.filter((name) => name !== "utility"),
      ),
      epoch: world.epoch,
      slotSeconds,
    },
    merchants: play.merchants,
    wallets: simulatedKeys(play.named, mix),
    genesisTime: world.genesisTime,
    // The slot after the one the chain's head is dated in: its blocks have no fixed rhythm to count by.
    startSlot: play.resumed ? Math.max(0, Math.floor((run.headTime - world.epoch) / slotSeconds) + 1) : 0,
    truthFile: run.files.truth,
    truthCompleteFile: run.files.truthComplete,
    signal: play.signal,
    onEvent: play.onEvent,
  });
}
