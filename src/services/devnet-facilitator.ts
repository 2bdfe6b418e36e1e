import { type Devnet, devnetChain } from "../chain/devnet/index.ts";
import type { Database } from "../common/db/index.ts";
import { listen } from "../common/listen.ts";
import { createFacilitator } from "../facilitator/facilitator.ts";

/**
 * The devnet's facilitator: settles from the devnet's facilitator account, state in `db` (the caller opens
 * and closes it), served on 127.0.0.1:`port`. `close()` stops it in order: HTTP, then settlements.
 * A busy port is an error naming X402M_FACILITATOR_PORT.
 */
export async function startFacilitator(
  devnet: Devnet,
  db: Database,
  port: number,
  options: { pollingIntervalMs?: number } = {},
) {
  const facilitator = await createFacilitator({
    db,
    rpc: devnet.rpc,
    chain: devnetChain(devnet.rpc),
    privateKey: devnet.facilitatorAccount.privateKey,
    // A new anvil chain every start: the previous chain's ledger and Bazaar describe nothing real.
    // (A resumed demo chain keeps its genesis, so its ledger stays.)
    onNewChain: "reset",
    pollingIntervalMs: options.pollingIntervalMs ?? 250,
  });
  try {
    const server = await listen(facilitator.app.fetch, "127.0.0.1", port).catch((error) => {
      if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
      throw new Error(
        `the facilitator's port ${port} is in use: set X402M_FACILITATOR_PORT (0 picks a free one)`,
      );
    });
    return {
      url: server.url,
      async close() {
        await server.close();
        await facilitator.close();
      },
    };
  } catch (error) {
    await facilitator.close();
    throw error;
  }
}
