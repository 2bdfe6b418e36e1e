/**
 * The devnet's anvil command line.
 */
import { BASE_CHAIN_ID } from "../base.ts";
import { forkArgs } from "./forked.ts";
import type { DevnetOptions, DevnetSettings } from "./options.ts";

/**
 * Block gas limit. A settlement to a new payee costs about 83k gas, so anvil's default of 30M holds only
 * ~360 per block (180/s at one block per 2 s): the block, not the facilitator, would bound a benchmark.
 */
export const GAS_LIMIT = 300_000_000n;

/**
 * anvil's arguments for the devnet: forking the empty chain at `upstreamPort` when there is one, loading
 * the saved state at `loadState` when there is one.
 */
export function devnetArgs(
  options: DevnetOptions,
  { port, hardfork }: DevnetSettings,
  upstreamPort: number | undefined,
  loadState: string | undefined,
): string[] {
  return [
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "--chain-id",
    String(options.chain?.chainId ?? BASE_CHAIN_ID),
    // Base has every Prague (Isthmus) change; pinned so a newer anvil's default cannot change behaviour.
    "--hardfork",
    hardfork,
    "--gas-limit",
    String(GAS_LIMIT),
    // No prefunded dev accounts: every funded account is one `startDevnet` returns.
    "--accounts",
    "0",
    "--no-mining",
    ...(upstreamPort !== undefined
      ? forkArgs(`http://127.0.0.1:${upstreamPort}`)
      : [
          ...(options.genesisTimestamp === undefined
            ? []
            : ["--timestamp", String(options.genesisTimestamp)]),
          ...(options.genesisNumber === undefined ? [] : ["--number", String(options.genesisNumber)]),
        ]),
    ...(options.pruneHistory === undefined
      ? []
      : ["--prune-history", ...(options.pruneHistory > 0 ? [String(options.pruneHistory)] : [])]),
    ...(loadState === undefined ? [] : ["--load-state", loadState]),
  ];
}
