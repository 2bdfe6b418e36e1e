import { createTestClient, http } from "viem";
import { type Devnet, devnetChain } from "../../src/chain/devnet/index.ts";

/**
 * Mines a block whenever transactions wait in the pool of a devnet started with `blockTime: 0`: settlements
 * confirm within tens of milliseconds instead of a 1-2 s block interval, and the chain clock (2 s per
 * block) moves only when there is something to mine, so it stays close to the wall clock that buyers
 * sign `validBefore` with. `pause()` lets transactions wait (a confirmation that never comes).
 */
export function startMiner(devnet: Devnet, intervalMs = 20) {
  const test = createTestClient({
    chain: devnetChain(devnet.rpc),
    mode: "anvil",
    transport: http(devnet.rpc),
  });
  let paused = false;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
      if (paused || stopped) continue;
      try {
        const pool = await test.getTxpoolStatus();
        if (pool.pending > 0) await devnet.mine(1);
      } catch {
        // anvil is stopping.
      }
    }
  })();
  return {
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
    },
    async stop() {
      stopped = true;
      await loop;
    },
    /** Transactions waiting in the pool. */
    async pending(): Promise<number> {
      return (await test.getTxpoolStatus()).pending;
    },
  };
}
