import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { createPublicClient, http, maxUint256, parseEventLogs, zeroAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BASE_CHAIN_ID,
  MULTICALL3_ADDRESS,
  PERMIT2_ADDRESS,
  X402_UPTO_PROXY_ADDRESS,
} from "../../../src/chain/base.ts";
import { type Devnet, DevnetError, devnetChain, startDevnet } from "../../../src/chain/devnet/index.ts";
import { DEVNET_FACILITATOR_SIGNER } from "../../../src/chain/devnet-signer.ts";
import { MULTICALL3_RUNTIME_BYTECODE } from "../../../src/chain/multicall3.ts";
import { PERMIT2_RUNTIME_BYTECODE } from "../../../src/chain/permit2.ts";
import { UPTO_PROXY_RUNTIME_BYTECODE } from "../../../src/chain/upto-proxy.ts";
import { USDC_OWNER_SLOT, USDC_RUNTIME_BYTECODE, usdcAbi } from "../../../src/chain/usdc.ts";
import { alive, eventually } from "../../helpers/process.ts";

let devnet: Devnet;
let client: ReturnType<typeof connect>;
const connect = (rpc: string) => createPublicClient({ chain: devnetChain(rpc), transport: http(rpc) });

beforeAll(async () => {
  devnet = await startDevnet({ port: 0, buyers: 4, buyerUsdc: 250_000_000n, blockTime: 0 });
  client = connect(devnet.rpc);
});
afterAll(() => devnet?.stop());

describe("devnet", () => {
  it("serves Base's chain id on 127.0.0.1 with USDC installed at the canonical address", async () => {
    expect(devnet.rpc).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await client.getChainId()).toBe(BASE_CHAIN_ID);
    expect(devnet.chainId).toBe(BASE_CHAIN_ID);
    expect(await client.getCode({ address: devnet.usdc })).toBe(USDC_RUNTIME_BYTECODE);
    expect(await client.getStorageAt({ address: devnet.usdc, slot: `0x${USDC_OWNER_SLOT}` })).toBe(
      `0x${devnet.owner.address.slice(2).toLowerCase().padStart(64, "0")}`,
    );
    expect(await client.readContract({ address: devnet.usdc, abi: usdcAbi, functionName: "owner" })).toBe(
      devnet.owner.address,
    );
    // What x402's `upto` scheme needs beside the token, each at its canonical address.
    expect(await client.getCode({ address: PERMIT2_ADDRESS })).toBe(PERMIT2_RUNTIME_BYTECODE);
    expect(await client.getCode({ address: X402_UPTO_PROXY_ADDRESS })).toBe(UPTO_PROXY_RUNTIME_BYTECODE);
    expect(await client.getCode({ address: MULTICALL3_ADDRESS })).toBe(MULTICALL3_RUNTIME_BYTECODE);
  });

  it("funds anvil's well-known accounts: buyers with USDC and ETH, the facilitator signer with ETH", async () => {
    // anvil's default mnemonic, indices 0 (owner), 1 (facilitator), 2.. (buyers): stable across runs.
    expect(devnet.owner.address).toBe("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
    expect(devnet.facilitatorAccount.address).toBe("0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
    // The indexer knows it by this constant, without starting a devnet.
    expect(devnet.facilitatorAccount.address).toBe(DEVNET_FACILITATOR_SIGNER);
    expect(devnet.buyers[0]?.address).toBe("0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC");
    expect(devnet.buyers).toHaveLength(4);
    const balanceOf = (address: `0x${string}`) =>
      client.readContract({ address: devnet.usdc, abi: usdcAbi, functionName: "balanceOf", args: [address] });
    for (const account of [devnet.owner, devnet.facilitatorAccount, ...devnet.buyers]) {
      expect(privateKeyToAccount(account.privateKey).address).toBe(account.address);
    }
    // Each buyer approved Permit2 for everything in block 1, by a real transaction: 1 ETH less its fee.
    const approvals = parseEventLogs({
      abi: usdcAbi,
      eventName: "Approval",
      logs: await client.getLogs({ address: devnet.usdc, fromBlock: 1n, toBlock: 1n }),
    });
    expect(approvals.map((l) => l.args)).toEqual(
      devnet.buyers.map((b) => ({ owner: b.address, spender: PERMIT2_ADDRESS, value: maxUint256 })),
    );
    for (const [i, buyer] of devnet.buyers.entries()) {
      expect(await balanceOf(buyer.address)).toBe(250_000_000n);
      const allowance = await client.readContract({
        address: devnet.usdc,
        abi: usdcAbi,
        functionName: "allowance",
        args: [buyer.address, PERMIT2_ADDRESS],
      });
      expect(allowance).toBe(maxUint256);
      const receipt = await client.getTransactionReceipt({ hash: approvals[i]?.transactionHash ?? "0x" });
      expect(await client.getBalance({ address: buyer.address })).toBe(
        10n ** 18n - receipt.gasUsed * receipt.effectiveGasPrice,
      );
    }
    expect(await balanceOf(devnet.facilitatorAccount.address)).toBe(0n);
    expect(await client.getBalance({ address: devnet.facilitatorAccount.address })).toBeGreaterThanOrEqual(
      100n * 10n ** 18n,
    );
    // Funded by real mints in block 1: the Transfer-from-zero logs an indexer sees for real USDC.
    const logs = parseEventLogs({
      abi: usdcAbi,
      eventName: "Transfer",
      logs: await client.getLogs({ address: devnet.usdc, fromBlock: 1n, toBlock: 1n }),
    });
    expect(logs.map((l) => l.args)).toEqual(
      devnet.buyers.map((b) => ({ from: zeroAddress, to: b.address, value: 250_000_000n })),
    );
  });

  it("mines ahead on demand, every block exactly 2 s after its parent", async () => {
    const start = await client.getBlock();
    await devnet.mine(30);
    const blocks = await Promise.all(
      Array.from({ length: 31 }, (_, i) => client.getBlock({ blockNumber: start.number + BigInt(i) })),
    );
    expect(blocks.map((b) => b.timestamp - start.timestamp)).toEqual(blocks.map((_, i) => BigInt(2 * i)));
    // Every block since genesis keeps the same spacing.
    const genesis = await client.getBlock({ blockNumber: 0n });
    expect(start.timestamp - genesis.timestamp).toBe(2n * start.number);
  });

  it("fails with anvil's reason when the port is taken, leaving no process behind", async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as net.AddressInfo;
    try {
      const error = await startDevnet({ port, buyers: 0 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DevnetError);
      expect((error as Error).message).toMatch(/anvil exited .* before listening/);
    } finally {
      server.close();
    }
  });

  it("saves a long chain on stop and resumes it: blocks, logs and balances kept, the next block 2 s later", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-devnet-"));
    try {
      const options = {
        port: 0,
        buyers: 1,
        blockTime: 0,
        hardfork: "cancun",
        pruneHistory: 0,
        statePath: dir,
      } as const;
      const first = await startDevnet({ ...options, genesisTimestamp: 1_700_000_000 });
      expect(first.resumed).toBe(false);
      await first.mine(5_000);
      const before = await connect(first.rpc).getBlock();
      const [buyer] = first.buyers;
      await first.stop();

      const second = await startDevnet(options);
      try {
        expect(second.resumed).toBe(true);
        const c = connect(second.rpc);
        expect((await c.getBlock()).hash).toBe(before.hash);
        await second.mine(1);
        const next = await c.getBlock();
        expect(next.number).toBe(before.number + 1n);
        expect(next.timestamp).toBe(before.timestamp + 2n);
        expect(next.parentHash).toBe(before.hash);
        const balance = await c.readContract({
          address: second.usdc,
          abi: usdcAbi,
          functionName: "balanceOf",
          args: [buyer?.address ?? zeroAddress],
        });
        expect(balance).toBe(1_000_000_000n);
        // The mint's Transfer log is still there to index.
        const logs = await c.getLogs({ address: second.usdc, fromBlock: 0n, toBlock: 5n });
        expect(logs.length).toBeGreaterThan(0);
      } finally {
        await second.stop();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("stops anvil and waits for its exit; stop() is idempotent", async () => {
    const other = await startDevnet({ port: 0, buyers: 0, genesisTimestamp: 1_700_000_000 });
    expect((await connect(other.rpc).getBlock({ blockNumber: 0n })).timestamp).toBe(1_700_000_000n);
    expect(alive(other.pid)).toBe(true);
    await Promise.all([other.stop(), other.stop()]);
    expect(await other.exited).toEqual({ code: 0, signal: null });
    expect(await eventually(() => !alive(other.pid))).toBe(true);
    await other.stop();
  });
});
