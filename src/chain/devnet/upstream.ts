/**
 * The empty chain a devnet without state roots forks (./forked.ts): a second anvil process, started before
 * the devnet and tied to it.
 */
import { log } from "../../common/log.ts";
import { BASE_CHAIN_ID } from "../base.ts";
import { GAS_LIMIT } from "./anvil-args.ts";
import { emptyChainArgs, type ForkGenesis } from "./forked.ts";
import type { DevnetSettings } from "./options.ts";
import { type Anvil, hasExited, launch } from "./process.ts";

/** Starts the empty chain whose genesis is `genesis`, under the devnet's rules. */
export function launchUpstream(
  binary: string,
  genesis: ForkGenesis,
  hardfork: DevnetSettings["hardfork"],
): Promise<Anvil> {
  return launch(
    binary,
    emptyChainArgs(genesis, { chainId: BASE_CHAIN_ID, hardfork, gasLimit: GAS_LIMIT }),
    15_000,
  );
}

/**
 * The devnet and the empty chain it forks, as one process: stopping stops both, the devnet first, and one
 * exiting on its own stops the other (a devnet that lost its upstream cannot read an untouched account).
 */
export function withUpstream(devnet: Anvil, upstream: Anvil): Anvil {
  void upstream.exited.then(async () => {
    if (await hasExited(devnet)) return;
    log("warn", "the devnet's empty upstream chain exited: stopping the devnet", { pid: upstream.pid });
    await devnet.stop();
  });
  void devnet.exited.then(() => upstream.stop());
  return {
    ...devnet,
    stop: async () => {
      await devnet.stop();
      await upstream.stop();
    },
  };
}
