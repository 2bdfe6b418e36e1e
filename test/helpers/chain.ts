import { createPublicClient, createTestClient, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { type Devnet, type DevnetAccount, devnetChain } from "../../src/chain/devnet/index.ts";
import { pollReceipt } from "../../src/facilitator/outcome.ts";
import { sendTransfer } from "./settle.ts";

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

/**
 * A fresh wallet holding exactly `amount` atomic USDC units (sent by buyer `from`, mined by the running
 * `miner`) and no ETH: it can pay with signed authorizations only.
 */
export async function walletHolding(devnet: Devnet, amount: bigint, from = 0): Promise<DevnetAccount> {
  const funder = devnet.buyers[from];
  if (!funder) throw new Error(`the devnet has no buyer ${from}`);
  const privateKey = generatePrivateKey();
  const account = { address: privateKeyToAccount(privateKey).address, privateKey };
  const hash = await sendTransfer(devnet, funder, account.address, amount);
  const client = createPublicClient({
    chain: devnetChain(devnet.rpc),
    transport: http(devnet.rpc),
    pollingInterval: 20,
  });
  // Polled by hash: viem's block-watching wait can sleep past the one block mined on demand.
  const receipt = await pollReceipt(client, hash, 10_000, 20);
  if (receipt?.status !== "success") throw new Error("funding the wallet failed");
  return account;
}
