/**
 * The demo attests its weeks on its devnet as an operator does on Base (src/reports/attest/): with a key of
 * its own, funded for its gas, at the close of each of the demo's weeks, the first being the week it plays.
 */
import { createTestClient, http } from "viem";
import { BLOCK_SECONDS, WEEK_BLOCKS } from "../chain/base.ts";
import { type Devnet, derive } from "../chain/devnet/index.ts";
import { WeekCloses } from "../reports/index.ts";
import type { AttestOptions, Config } from "../services/index.ts";
import { SLOT_SECONDS, SLOTS_PER_WEEK } from "./plan-types.ts";
import type { World } from "./resume.ts";
import { ATTESTER_KEY } from "./wallets.ts";

/** How often the demo's attester looks: a demo's blocks come every 2 s. */
const INTERVAL_MS = 2_000;
/** The attester's gas on the devnet, set on every start. */
const GAS_MONEY = 10n ** 19n;

export async function demoAttester(devnet: Devnet, world: World, config: Config): Promise<AttestOptions> {
  const key = derive(ATTESTER_KEY);
  await createTestClient({ mode: "anvil", transport: http(devnet.rpc) }).setBalance({
    address: key.address,
    value: GAS_MONEY,
  });
  return {
    key: key.privateKey,
    rpc: devnet.rpc,
    closes: WeekCloses.everyWeekFrom(demoWeekCloses(world)),
    maxCostWei: config.attest.maxCostWei,
    intervalMs: INTERVAL_MS,
  };
}

/**
 * Where the demo's weeks close: at the block that ends the week it plays (its blocks are 2 s apart from
 * its genesis), then every WEEK_BLOCKS; Base's weeks close on Mondays instead (src/reports/attest/weeks.ts).
 */
export function demoWeekCloses(world: World): number {
  const weekEnd = world.epoch + SLOTS_PER_WEEK * (world.slotSeconds ?? SLOT_SECONDS);
  return ((world.genesisNumber ?? 0) + (weekEnd - world.genesisTime) / BLOCK_SECONDS) % WEEK_BLOCKS;
}
