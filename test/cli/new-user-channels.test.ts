/**
 * The new user's path of docs/cli.md, as two commands in processes of their own: `devnet`, then
 * `serve --only utility` with X402M_FACILITATOR_URL set to the devnet's facilitator and nothing else about
 * it (no API key). The utility API's 402 for `/api/store` offers a payment channel, and the SDK's own
 * batch-settlement client with `@x402/fetch` pays it: 50 calls by deposits and vouchers, then a cooperative
 * refund that claims exactly what the calls were charged, which `index` then `report` count. The
 * devnet's facilitator signs the refund as the channel's receiverAuthorizer for a keyless request from
 * loopback (docs/facilitator.md); before, every call was answered 503 `authorizer_key_required`.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { BatchSettlementEvmScheme as BatchClient } from "@x402/evm/batch-settlement/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it, onTestFinished } from "vitest";
import { isolatedDatabaseOptions } from "../helpers/db.ts";
import { runCli } from "../helpers/process.ts";
import { NETWORK, newMerchant, usdcReader } from "../helpers/x402.ts";

const BIN = path.resolve("bin/x402-merchants");
/** `/api/store`'s price ($0.001), and the calls the new user makes. */
const PRICE = 1_000n;
const CALLS = 50;
const DEPOSIT = 80_000n;

/** Starts a command in a child process of its own and waits for its first line (its ready line). */
async function command(args: string[], env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, [BIN, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, DATABASE_URL: "", X402M_METRICS_PORT: "0", ...env },
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  });
  return new Promise<string>((resolve, reject) => {
    let out = "";
    let err = "";
    child.stderr.on("data", (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("\n")) resolve(out.split("\n")[0] ?? "");
    });
    child.once("exit", (code) => reject(new Error(`${args[0]} exited with ${code}: ${err}`)));
  });
}

describe("the new user's path: devnet, then serve against its facilitator", () => {
  it("pays the utility API through a payment channel with the SDK's own client, and refunds it", async () => {
    const chainState = await isolatedDatabaseOptions("pglite");
    onTestFinished(chainState.cleanup);
    const devnet = JSON.parse(
      await command(["devnet", "--port", "0", "--buyers", "1", "--data", chainState.dataDir], {
        X402M_FACILITATOR_PORT: "0",
      }),
    ) as { rpc: string; facilitator: string; signer: string; buyers: { privateKey: `0x${string}` }[] };

    const merchantState = await isolatedDatabaseOptions("pglite");
    onTestFinished(merchantState.cleanup);
    const payTo = newMerchant();
    const urls = JSON.parse(
      await command(["serve", "--only", "utility", "--data", merchantState.dataDir], {
        X402M_FACILITATOR_URL: devnet.facilitator,
        X402M_RPC_URL: devnet.rpc,
        X402M_UTILITY_PAY_TO: payTo,
        X402M_UTILITY_PORT: "0",
        PORT: "0",
      }),
    ) as { utility: string };
    const url = `${urls.utility}/api/store`;

    // The channel is offered, naming the devnet facilitator's account as the receiverAuthorizer.
    const unpaid = await fetch(url);
    expect(unpaid.status).toBe(402);
    const required = decodePaymentRequiredHeader(unpaid.headers.get("payment-required") as string);
    const channel = required.accepts.find((a) => a.scheme === "batch-settlement");
    expect(channel?.extra?.receiverAuthorizer).toBe(devnet.signer);

    const account = privateKeyToAccount((devnet.buyers[0] as { privateKey: `0x${string}` }).privateKey);
    // One deposit above the 50 calls, so that the refund has something to return.
    const client = new BatchClient(account, {
      rpcUrl: devnet.rpc,
      depositStrategy: () => DEPOSIT.toString(),
    });
    const pay = wrapFetchWithPayment(fetch, new x402Client().register(NETWORK, client));
    const usdc = usdcReader(devnet.rpc);
    const before = await usdc.balanceOf(account.address);
    // 50 calls: the deposit with the first, vouchers after.
    for (let i = 0; i < CALLS; i++) {
      const answer = await pay(url);
      expect(answer.status, await answer.clone().text()).toBe(200);
    }
    const deposited = before - (await usdc.balanceOf(account.address));
    expect(deposited).toBe(DEPOSIT);

    // The refund, which the facilitator signs as the receiverAuthorizer, claims what the calls were charged and
    // returns the rest: the buyer paid exactly the 50 calls, and the merchant's wallet or the escrow holds them.
    const refunded = await client.refund(url);
    expect(refunded, JSON.stringify(refunded)).toMatchObject({ success: true });
    expect(await usdc.balanceOf(account.address)).toBe(before - PRICE * BigInt(CALLS));

    // The report counts exactly what was claimed: the next command of docs/cli.md, `index` then `report`, on a
    // store of its own, to the block the refund's claim landed in.
    const head = Number(await usdc.client.getBlockNumber());
    const analyticsDir = await isolatedDatabaseOptions("pglite");
    onTestFinished(analyticsDir.cleanup);
    const indexed = await runCli([
      "index",
      "--rpc",
      devnet.rpc,
      "--to-block",
      String(head),
      "--data",
      analyticsDir.dataDir,
    ]);
    expect(indexed.code, indexed.stderr).toBe(0);
    const report = await runCli(["report", payTo, "--data", analyticsDir.dataDir]);
    expect(report.code, report.stderr).toBe(0);
    expect(JSON.parse(report.stdout)).toMatchObject({
      address: payTo.toLowerCase(),
      usd: Number(PRICE * BigInt(CALLS)) / 1e6,
      window: { end_block: head },
    });
  }, 120_000);
});
