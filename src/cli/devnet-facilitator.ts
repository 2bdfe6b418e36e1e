import { type Devnet, devnetChain } from "../chain/devnet.ts";
import type { Config } from "../config/config.ts";
import { createFacilitator } from "../facilitator/index.ts";
import { openDatabase } from "../platform/db/index.ts";
import { listen } from "../platform/listen.ts";

/**
 * The devnet's facilitator: settles from the devnet's facilitator account, state in the configured
 * database, served on 127.0.0.1:`port`. `close()` stops it in order: HTTP, settlements, database.
 */
export async function startFacilitator(devnet: Devnet, config: Config, port: number) {
  const db = await openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    const facilitator = await createFacilitator({
      db,
      rpc: devnet.rpc,
      chain: devnetChain(devnet.rpc),
      privateKey: devnet.facilitatorAccount.privateKey,
      // A new anvil chain every start: the previous chain's ledger and catalogue describe nothing real.
      onNewChain: "reset",
      pollingIntervalMs: 250,
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
          await db.close();
        },
      };
    } catch (error) {
      await facilitator.close();
      throw error;
    }
  } catch (error) {
    await db.close();
    throw error;
  }
}
