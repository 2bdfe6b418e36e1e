import { spawn } from "node:child_process";
import path from "node:path";
import { createPublicClient, getAddress, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it, type TestContext } from "vitest";
import { BASE_USDC } from "../../src/chain/base.ts";
import { MAX_BACKGROUND_TPS } from "../../src/chain/devnet/index.ts";
import { DEVNET_FACILITATOR_SIGNER } from "../../src/chain/devnet-signer.ts";
import { usdcAbi } from "../../src/chain/usdc.ts";
import { DATABASE_KINDS, isolatedDatabaseOptions } from "../helpers/db.ts";
import { runMain } from "../helpers/in-process.ts";
import { alive, childrenOf, commandName, eventually } from "../helpers/process.ts";

const BIN = path.resolve("bin/x402-merchants");
/**
 * Starts `devnet --port 0 ARGS` with the facilitator on a free port and its state in a fresh place (a
 * schema of the server when DATABASE_URL is set, else PGlite in a temporary data directory); the child
 * is killed after the test if it still runs (a failed test), and the state removed.
 */
async function devnet(context: TestContext, ...args: string[]) {
  const state = await isolatedDatabaseOptions(DATABASE_KINDS.at(-1) ?? "pglite");
  const env: NodeJS.ProcessEnv = { ...process.env, X402M_FACILITATOR_PORT: "0", X402M_METRICS_PORT: "0" };
  if (state.databaseUrl) env.DATABASE_URL = state.databaseUrl;
  else delete env.DATABASE_URL;
  const child = spawn(process.execPath, [BIN, "devnet", "--port", "0", "--data", state.dataDir, ...args], {
    stdio: "pipe",
    env,
  });
  const exit = new Promise<number | null>((resolve) => child.once("exit", resolve));
  context.onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exit;
    await state.cleanup();
  });
  const line = new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("\n")) resolve(out.split("\n")[0] ?? "");
    });
    let err = "";
    child.stderr.on("data", (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.once("exit", (code) => reject(new Error(`exited with ${code}: ${err}`)));
  });
  return { child, exit, line };
}

/** The anvil process the CLI started (its one child named anvil). */
function anvilOf(pid: number): number {
  const anvils = childrenOf(pid).filter((p) => commandName(p) === "anvil");
  expect(anvils).toHaveLength(1);
  return anvils[0] as number;
}

// Linux: the checks read /proc. The cases run concurrently: each waits mostly on a child process (about
// 20 s each beside the rest of the suite, hence 60 s). The refusals end at once and run in this process.
// A devnet command costs 5-6 CPU-s to start: the background traffic is checked on the one whose ready line
// and stop are (the traffic's accounts are none of the buyers', so their balances hold), and only the case
// that kills the command has one of its own.
describe.runIf(process.platform === "linux").concurrent("devnet command", () => {
  it("prints one JSON line when ready, mines a block every 2 s, carries --background-tps N transfers a second beside the payments, and stops on SIGTERM with exit 0", async (context) => {
    const { child, exit, line } = await devnet(context, "--buyers", "2", "--background-tps", "40");
    const ready = JSON.parse(await line);
    expect(Object.keys(ready)).toEqual([
      "rpc",
      "facilitator",
      "signer",
      "chainId",
      "usdc",
      "buyers",
      "metrics",
    ]);
    expect(ready).toMatchObject({
      chainId: 8453,
      usdc: getAddress(BASE_USDC),
      signer: DEVNET_FACILITATOR_SIGNER,
    });
    expect(ready.rpc).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(ready.facilitator).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    // The facilitator settles on this chain from the devnet's facilitator account (anvil's account 1).
    const supported = await (await fetch(`${ready.facilitator}/supported`)).json();
    expect(supported).toEqual({
      kinds: [
        { x402Version: 2, scheme: "exact", network: "eip155:8453" },
        {
          x402Version: 2,
          scheme: "upto",
          network: "eip155:8453",
          extra: { facilitatorAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" },
        },
        {
          x402Version: 2,
          scheme: "batch-settlement",
          network: "eip155:8453",
          extra: { receiverAuthorizer: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" },
        },
        { x402Version: 1, scheme: "exact", network: "base" },
      ],
      extensions: ["bazaar", "builder-code", "eip2612GasSponsoring", "erc20ApprovalGasSponsoring"],
      signers: { "eip155:*": ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"] },
    });
    expect(ready.buyers).toHaveLength(2);

    const client = createPublicClient({ transport: http(ready.rpc) });
    expect(await client.getChainId()).toBe(8453);
    for (const buyer of ready.buyers as { address: `0x${string}`; privateKey: `0x${string}` }[]) {
      expect(Object.keys(buyer)).toEqual(["address", "privateKey"]);
      expect(privateKeyToAccount(buyer.privateKey).address).toBe(buyer.address);
      expect(
        await client.readContract({
          address: ready.usdc,
          abi: usdcAbi,
          functionName: "balanceOf",
          args: [buyer.address],
        }),
      ).toBe(1_000_000_000n);
    }

    // Interval mining is on: a new block comes by itself, 2 s after its parent.
    const start = await client.getBlockNumber({ cacheTime: 0 });
    expect(await eventually(async () => (await client.getBlockNumber({ cacheTime: 0 })) > start)).toBe(true);
    const [parent, next] = await Promise.all([
      client.getBlock({ blockNumber: start }),
      client.getBlock({ blockNumber: start + 1n }),
    ]);
    expect(next.timestamp - parent.timestamp).toBe(2n);

    // The traffic starts before the ready line; a block mined wholly under it holds about 40 × 2 s of it
    // (40% is the margin for a busy machine). Block start + 1 was mined after the ready line (start was the
    // latest after it), so start + 2's two seconds all come after it: the first such block, one block sooner
    // than two blocks past the one seen above.
    const later = start + 2n;
    expect(
      await eventually(async () => (await client.getBlockNumber({ cacheTime: 0 })) >= later, 10_000),
    ).toBe(true);
    const carried = await client.getBlock({ blockNumber: later });
    expect(carried.transactions.length).toBeGreaterThanOrEqual(0.4 * 40 * 2);

    const anvil = anvilOf(child.pid as number);
    child.kill("SIGTERM");
    expect(await exit).toBe(0);
    expect(alive(anvil)).toBe(false);
    await expect(fetch(`${ready.facilitator}/healthz`)).rejects.toThrow();
  }, 60_000);

  it("leaves no anvil behind when the command itself is killed", async (context) => {
    const { child, exit, line } = await devnet(context, "--buyers", "0");
    await line;
    const anvil = anvilOf(child.pid as number);
    child.kill("SIGKILL");
    await exit;
    expect(await eventually(() => !alive(anvil))).toBe(true);
  }, 60_000);

  it("rejects a --background-tps that is not a whole number up to the maximum, in one line with exit code 2", async () => {
    const values = ["fast", "2.5", String(MAX_BACKGROUND_TPS + 1)];
    const runs = await Promise.all(
      values.map((v) => runMain(["devnet", "--port", "0", "--background-tps", v])),
    );
    for (const [i, { code, stdout, stderr }] of runs.entries()) {
      expect(code).toBe(2);
      expect(stdout).toBe("");
      expect(stderr).toBe(
        `x402-merchants: --background-tps must be a whole number from 0 to ${MAX_BACKGROUND_TPS}, not "${values[i]}"\n`,
      );
    }
  });

  it("rejects a bad --buyers with exit code 2", async () => {
    const { code, stdout, stderr } = await runMain(["devnet", "--port", "0", "--buyers", "many"]);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/--buyers must be a whole number/);
    expect(code).toBe(2);
  });
});
