/** One chain's week, as both Base's and a further chain's are played: the plan, its roles, its buyers. */
import type { DevnetAccount } from "../chain/devnet/index.ts";
import type { Mix } from "./mix.ts";
import { chooseRoles } from "./plan.ts";
import { type PlanMerchant, SLOT_SECONDS } from "./plan-types.ts";
import type { World } from "./resume.ts";
import type { SimChainOptions } from "./sim-chain.ts";
import type { SimMerchant } from "./sim-merchants.ts";
import { runSimulatorThread } from "./sim-thread.ts";
import type { SimulatorEvent, SimulatorOptions, SimulatorStats } from "./simulator.ts";
import { simulatedKeys, WALLET_HOSTS } from "./wallets.ts";

export interface WeekPlay {
  /** The merchants as the simulator pays them, and their wallets (`merchant:<id>`). */
  merchants: readonly SimMerchant[];
  named: readonly { id: string; key: DevnetAccount }[];
  /** First slot to play: 0, or the one after a resumed chain's head. */
  startSlot: number;
  files: { truth: string; truthComplete: string };
  signal: AbortSignal;
  onEvent: (event: SimulatorEvent) => void;
}

/** Plays `mix`'s population paying every merchant on `chain`, on a worker thread of its own (sim-thread.ts). */
export function playWeek(
  world: World,
  mix: Mix,
  chain: Omit<SimChainOptions, "genesisTime"> & Pick<SimulatorOptions, "network">,
  play: WeekPlay,
): Promise<SimulatorStats> {
  const merchants: PlanMerchant[] = play.merchants.map(({ id, endpoints }) => ({ id, endpoints }));
  return runSimulatorThread({
    ...chain,
    plan: {
      mix,
      merchants,
      // The inference and social-data APIs (and its proxy) take genuine demand only: the patterns the
      // screens exist for are played by the utility API and the shops.
      roles: chooseRoles(
        merchants,
        "utility",
        WALLET_HOSTS.filter((name) => name !== "utility"),
      ),
      epoch: world.epoch,
      slotSeconds: world.slotSeconds ?? SLOT_SECONDS,
    },
    merchants: play.merchants,
    wallets: simulatedKeys(play.named, mix),
    genesisTime: world.genesisTime,
    startSlot: play.startSlot,
    truthFile: play.files.truth,
    truthCompleteFile: play.files.truthComplete,
    signal: play.signal,
    onEvent: play.onEvent,
  });
}
