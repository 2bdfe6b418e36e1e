/**
 * The demo's chain: the devnet, tuned for a week of blocks and saved in the data directory.
 */
import { createPublicClient, http } from "viem";
import type { ChainRecord } from "../chain/chains.ts";
import { type Devnet, devnetChain, SavedChainError, startDevnet } from "../chain/devnet/index.ts";
import { portSetting } from "../config/ports.ts";
import { FURTHER_CHAIN_PORTS, type FurtherChain } from "./further-chains.ts";
import { DemoError, type World } from "./resume.ts";

/**
 * Starts the devnet on `port` from the chain saved in `statePath`, or a fresh one for `world`; a saved
 * chain anvil refuses, or a port in use, is a DemoError saying what to do. `further`: a chain played beside
 * Base (its id, its USDC), whose blocks come on demand (sim-chain.ts).
 */
export async function startChain(
  port: number,
  statePath: string,
  world: World,
  further?: ChainRecord & { slug: FurtherChain },
): Promise<Devnet> {
  // No state roots, Cancun rather than Prague and no historical states: each keeps anvil's cost per block
  // low (docs/benchmarks-log.md). A world an earlier version made with a higher first block resumes the chain
  // it saved, which has state roots (a fresh one with a higher first block could have none). A further
  // chain has no empty blocks, a few hundred in a week: state roots cost it nothing worth a fork.
  return await startDevnet({
    port,
    buyers: 0,
    blockTime: 0,
    hardfork: "cancun",
    pruneHistory: 0,
    statePath,
    saveIntervalSeconds: 600,
    genesisTimestamp: world.genesisTime,
    ...(further
      ? { chain: further }
      : {
          stateRoots: false,
          // Read by anvil on a fresh chain only; a saved chain carries its own numbers.
          ...(world.genesisNumber ? { genesisNumber: world.genesisNumber } : {}),
        }),
  }).catch((error) => {
    if (error instanceof SavedChainError) {
      throw new DemoError(
        `${error.message}: restore it, or start afresh with --fresh (npm start -- --fresh), which deletes the week`,
      );
    }
    if (/address already in use|EADDRINUSE/i.test(String(error))) {
      throw new DemoError(
        `the devnet's port ${port} is in use: stop the other chain or set ${portSetting(further ? FURTHER_CHAIN_PORTS[further.slug] : "devnet")} (0 picks a free one)`,
      );
    }
    throw error;
  });
}

/** The number and time of the chain's head block. */
export async function headOf(devnet: Devnet): Promise<{ number: number; time: number }> {
  const head = await createPublicClient({
    chain: devnetChain(devnet.rpc, devnet.chainId),
    transport: http(devnet.rpc),
  }).getBlock({ blockTag: "latest" });
  return { number: Number(head.number), time: Number(head.timestamp) };
}
