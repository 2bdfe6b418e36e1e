import { createPublicClient, createTestClient, http, parseEventLogs } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIRST_BACKGROUND_INDEX } from "../../../src/chain/devnet/background.ts";
import {
  type Devnet,
  DevnetError,
  derive,
  devnetChain,
  startDevnet,
} from "../../../src/chain/devnet/index.ts";
import { MAX_BACKGROUND_TPS } from "../../../src/chain/devnet/options.ts";
import { usdcAbi } from "../../../src/chain/usdc.ts";
import { alive, eventually } from "../../helpers/process.ts";
import { Settler } from "../../helpers/settle.ts";
import { newMerchant, usdcReader } from "../../helpers/x402.ts";

const TPS = 60;
/** Blocks read per density check: 8 s of a 2 s chain. */
const BLOCKS = 4;
const TRANSFER = "0xa9059cbb"; // transfer(address,uint256)

let devnet: Devnet;
let client: ReturnType<typeof connect>;
const connect = (rpc: string) =>
  createPublicClient({ chain: devnetChain(rpc), transport: http(rpc), cacheTime: 0 });

beforeAll(async () => {
  devnet = await startDevnet({ port: 0, buyers: 2, backgroundTps: TPS });
  client = connect(devnet.rpc);
});
afterAll(() => devnet?.stop());

function trafficOf(on: Devnet) {
  if (!on.background) throw new Error("the devnet has no background traffic");
  return on.background;
}

/** The next `count` blocks mined from now, with their transactions. */
async function nextBlocks(on: Devnet, count: number) {
  const reader = connect(on.rpc);
  const from = (await reader.getBlockNumber()) + 1n;
  const to = from + BigInt(count - 1);
  expect(await eventually(async () => (await reader.getBlockNumber()) >= to, (count + 3) * 2_000)).toBe(true);
  const blocks = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      reader.getBlock({ blockNumber: from + BigInt(i), includeTransactions: true }),
    ),
  );
  return { from, to, blocks };
}

/**
 * The tests wait on blocks (8 s of a 2 s chain for the density, a block or two for the others) far more than
 * they run. The density test runs alone: its figure is CPU-bound (other devnets' traffic beside it brought a
 * loaded machine's blocks to 33 transactions of the 48 it needs). The others then wait for their blocks at the
 * same time: the settlement on the shared devnet, the stops on devnets of their own that mine every second
 * (what they check is block after block, not the interval).
 */
describe("devnet background traffic", () => {
  it("fills blocks with about tps × 2 s each of ETH and USDC transfers among accounts of its own", async () => {
    const { from, to, blocks } = await nextBlocks(devnet, BLOCKS);
    const background = trafficOf(devnet);
    const own = new Set(background.accounts.map((a) => a.toLowerCase()));
    expect(own.size).toBeGreaterThanOrEqual(64);
    expect(background.accounts[0]).toBe(derive(FIRST_BACKGROUND_INDEX).address);
    for (const account of [devnet.owner, devnet.facilitatorAccount, ...devnet.buyers]) {
      expect(own.has(account.address.toLowerCase())).toBe(false);
    }

    const txs = blocks.flatMap((b) => b.transactions);
    // A noisy 2-core machine sends late at times; what matters is Base's order of magnitude, not the figure.
    const perBlock = txs.length / BLOCKS;
    expect(perBlock).toBeGreaterThanOrEqual(0.4 * TPS * 2);
    expect(perBlock).toBeLessThanOrEqual(1.5 * TPS * 2);
    const token = devnet.usdc.toLowerCase();
    for (const tx of txs) {
      expect(own.has(tx.from.toLowerCase())).toBe(true);
      expect(own.has(tx.to?.toLowerCase() ?? "") || tx.to?.toLowerCase() === token).toBe(true);
    }
    const plain = txs.filter((tx) => tx.input === "0x" && tx.value > 0n);
    const usdc = txs.filter((tx) => tx.to?.toLowerCase() === token && tx.input.startsWith(TRANSFER));
    expect(plain.length + usdc.length).toBe(txs.length);
    expect(plain.length).toBeGreaterThanOrEqual(0.3 * txs.length);
    expect(usdc.length).toBeGreaterThanOrEqual(0.3 * txs.length);

    const logs = await client.getLogs({ address: devnet.usdc, fromBlock: from, toBlock: to });
    const transfers = parseEventLogs({ abi: usdcAbi, eventName: "Transfer", logs });
    expect(transfers).toHaveLength(usdc.length);
    for (const { args } of transfers) {
      expect(own.has(args.from.toLowerCase()) && own.has(args.to.toLowerCase())).toBe(true);
    }
    // Nothing here may look like an x402 settlement to the indexer.
    expect(parseEventLogs({ abi: usdcAbi, eventName: "AuthorizationUsed", logs })).toEqual([]);
    expect(background.failed).toBe(0);
    expect(background.byKind.eth.sent).toBeGreaterThan(0);
    expect(background.byKind.usdc.sent).toBeGreaterThan(0);
  }, 30_000);

  it.concurrent("leaves x402 settlements to settle among the traffic", async () => {
    const payTo = newMerchant();
    const settler = new Settler(devnet, devnet.facilitatorAccount);
    const buyer = devnet.buyers[0] as Devnet["buyers"][number];
    const [paid] = await settler.settle([{ buyer, payTo, amount: 1_234n }]);
    const usdc = usdcReader(devnet.rpc);
    const receipt = await usdc.receipt(paid?.tx ?? "0x");
    expect(receipt.status).toBe("success");
    expect(parseEventLogs({ abi: usdcAbi, eventName: "AuthorizationUsed", logs: receipt.logs })).toHaveLength(
      1,
    );
    expect(await usdc.balanceOf(payTo)).toBe(1_234n);
    const block = await client.getBlock({ blockNumber: receipt.blockNumber });
    expect(block.transactions.length).toBeGreaterThan(1);
  }, 30_000);

  it.concurrent("stop() waits for the sends under way and sends nothing after", async () => {
    const own = await startDevnet({ port: 0, buyers: 0, backgroundTps: TPS, blockTime: 1 });
    try {
      const background = trafficOf(own);
      expect(await eventually(() => background.sent > 0)).toBe(true);
      await background.stop();
      const sent = background.sent;
      // The next block takes what was sent last; the one after it is empty, and so is the pool.
      const { blocks } = await nextBlocks(own, 2);
      expect(blocks[1]?.transactions).toEqual([]);
      const test = createTestClient({ chain: devnetChain(own.rpc), mode: "anvil", transport: http(own.rpc) });
      expect(await test.getTxpoolStatus()).toEqual({ pending: 0, queued: 0 });
      expect(background.sent).toBe(sent);
      expect(background.failed).toBe(0);
    } finally {
      await own.stop();
    }
  }, 30_000);

  it.concurrent("devnet.stop() stops the traffic before anvil, so no send meets a stopped chain", async () => {
    const own = await startDevnet({ port: 0, buyers: 0, backgroundTps: TPS, blockTime: 1 });
    const background = trafficOf(own);
    expect(await eventually(() => background.sent > 0)).toBe(true);
    await own.stop();
    expect(alive(own.pid)).toBe(false);
    const sent = background.sent;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(background.sent).toBe(sent);
    expect(background.failed).toBe(0);
  }, 30_000);

  it("refuses a rate above the maximum, or a devnet that does not mine by interval", async () => {
    await expect(startDevnet({ port: 0, backgroundTps: MAX_BACKGROUND_TPS + 1 })).rejects.toThrow(
      DevnetError,
    );
    await expect(startDevnet({ port: 0, backgroundTps: 10, blockTime: 0 })).rejects.toThrow(
      /interval mining/,
    );
  });
});
