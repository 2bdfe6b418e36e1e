import nodeHttp from "node:http";
import { createPublicClient, createTestClient, createWalletClient, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll } from "vitest";
import { PERMIT2_ADDRESS } from "../../src/chain/base.ts";
import {
  type Devnet,
  type DevnetAccount,
  type DevnetOptions,
  devnetChain,
  startDevnet,
} from "../../src/chain/devnet/index.ts";
import { pollReceipt } from "../../src/chain/receipt.ts";
import { usdcAbi } from "../../src/chain/usdc.ts";
import { rpc, sendTransfer } from "./settle.ts";

/**
 * Mines a block whenever transactions wait in the pool of a devnet started with `blockTime: 0`: settlements
 * confirm within tens of milliseconds instead of a 1-2 s block interval, and the chain clock (2 s per
 * block) moves only when there is something to mine, so it stays close to the wall clock that buyers
 * sign `validBefore` with. `pause()` lets transactions wait (a confirmation that never comes). With `clock:
 * "wall"` the miner removes the devnet's 2 s block timestamp interval and a block takes the wall clock's
 * time: for runs of hundreds of settlements, where 2 s a block would put the chain minutes ahead and
 * expire buyers' authorizations.
 */
export function startMiner(devnet: Devnet, intervalMs = 20, clock: "devnet" | "wall" = "devnet") {
  const test = createTestClient({
    chain: devnetChain(devnet.rpc),
    mode: "anvil",
    transport: http(devnet.rpc),
  });
  // The pool is read 50 times a second for as long as a test runs: on one kept-alive socket, 0.3 ms of CPU
  // a read, where viem's client takes 1.5-2.7 ms (a tenth of a core for the miner alone).
  const pool = txpoolReader(devnet.rpc);
  let paused = false;
  let stopped = false;
  const loop = (async () => {
    if (clock === "wall") await test.removeBlockTimestampInterval();
    while (!stopped) {
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
      if (paused || stopped) continue;
      try {
        if ((await pool.pending()) > 0) {
          if (clock === "devnet") await devnet.mine(1);
          else await test.mine({ blocks: 1 });
        }
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
      pool.close();
    },
    /** Transactions waiting in the pool. */
    async pending(): Promise<number> {
      return (await test.getTxpoolStatus()).pending;
    },
  };
}

export type Miner = ReturnType<typeof startMiner>;

/** The chain a test file shares (`useDevnet`): read its fields inside hooks and tests, once it has started. */
export interface SharedDevnet {
  readonly devnet: Devnet;
  readonly miner: Miner;
}

/**
 * The one devnet fixture of the suite: anvil started once before a file's tests (`beforeAll`) with a miner
 * (a block whenever a transaction waits), shared by the file's tests, both stopped after them. anvil mines
 * on demand (`blockTime: 0` unless asked otherwise) and never automines: with several senders automine
 * stalls. Its hooks are registered where it is called, so a file's own `beforeAll` written after it sees the
 * chain, and its own `afterAll` (facilitators, hosts) runs before the chain stops. The port is anvil's choice.
 *
 * Tests that share it must not read what another moves: each its own buyer, or balances as differences.
 *
 * @example
 * const chain = useDevnet({ buyers: 2 });
 * it("pays", async () => { const [buyer] = chain.devnet.buyers; ... });
 */
export function useDevnet(options: Omit<DevnetOptions, "port"> = {}): SharedDevnet {
  let devnet: Devnet | undefined;
  let miner: Miner | undefined;
  beforeAll(async () => {
    devnet = await startDevnet({ port: 0, blockTime: 0, ...options });
    miner = startMiner(devnet);
  }, 60_000);
  afterAll(async () => {
    await miner?.stop();
    await devnet?.stop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the file's devnet is read before its beforeAll ran");
    return value;
  };
  return {
    get devnet() {
      return started(devnet);
    },
    get miner() {
      return started(miner);
    },
  };
}

/** `txpool_status`'s pending count, over plain HTTP on one kept-alive socket. */
function txpoolReader(rpcUrl: string) {
  const url = new URL(rpcUrl);
  const agent = new nodeHttp.Agent({ keepAlive: true, maxSockets: 1 });
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "txpool_status", params: [] });
  const pending = () =>
    new Promise<number>((resolve, reject) => {
      const request = nodeHttp.request(
        {
          host: url.hostname,
          port: url.port,
          path: `${url.pathname}${url.search}`,
          method: "POST",
          agent,
          timeout: 10_000,
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        },
        (response) => {
          let text = "";
          response.setEncoding("utf8");
          response.on("data", (chunk: string) => {
            text += chunk;
          });
          response.on("error", reject);
          response.on("end", () => {
            try {
              const answer = JSON.parse(text) as {
                result?: { pending: string };
                error?: { message: string };
              };
              if (!answer.result) throw new Error(`txpool_status: ${answer.error?.message ?? text}`);
              resolve(Number(answer.result.pending));
            } catch (error) {
              reject(error);
            }
          });
        },
      );
      request.on("timeout", () => request.destroy(new Error("txpool_status: no answer in 10 s")));
      request.on("error", reject);
      request.end(body);
    });
  return { pending, close: () => agent.destroy() };
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

/**
 * `walletHolding`, plus the one transaction a wallet sends before its first upto payment: approving
 * Permit2 for the token (with ETH for its gas, then none to speak of).
 */
export async function permit2WalletHolding(devnet: Devnet, amount: bigint, from = 0): Promise<DevnetAccount> {
  const wallet = await walletHolding(devnet, amount, from);
  await rpc(devnet.rpc, "anvil_setBalance", [wallet.address, "0x2386f26fc10000"]); // 0.01 ETH
  const chain = devnetChain(devnet.rpc);
  const client = createWalletClient({
    account: privateKeyToAccount(wallet.privateKey),
    chain,
    transport: http(devnet.rpc),
  });
  const hash = await client.writeContract({
    address: devnet.usdc,
    abi: usdcAbi,
    functionName: "approve",
    args: [PERMIT2_ADDRESS, 2n ** 256n - 1n],
  });
  const reader = createPublicClient({ chain, transport: http(devnet.rpc) });
  const receipt = await pollReceipt(reader, hash, 10_000, 20);
  if (receipt?.status !== "success") throw new Error("approving Permit2 failed");
  return wallet;
}
