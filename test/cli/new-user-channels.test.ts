/**
 * The new user's paths of docs/cli.md, as two commands in processes of their own: `devnet`, then
 * `serve --only utility,inference` with X402M_FACILITATOR_URL set to the devnet's facilitator and nothing else
 * about it (no API key).
 * - A payment channel: the utility API's 402 for `/api/store` offers one, and the SDK's own batch-settlement
 *   client with `@x402/fetch` pays it: 50 calls by deposits and vouchers, then a cooperative refund that claims
 *   exactly what the calls were charged, which `index` then `report` count. The devnet's facilitator signs the
 *   refund as the channel's receiverAuthorizer for a keyless request from loopback (docs/facilitator.md);
 *   before, every call was answered 503 `authorizer_key_required`.
 * - "Paying with the client you already run", its snippets as written: `x402-fetch` 1.2.0 pays an exact tier of
 *   the inference API, then an `x402-hono` 1.1.0 server on the devnet's facilitator; a fresh wallet given only
 *   USDC pays an /upto tier with the SDK's upto client, its allowance a sponsored permit.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import { BatchSettlementEvmScheme as BatchClient } from "@x402/evm/batch-settlement/client";
import { UptoEvmScheme } from "@x402/evm/upto/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { Hono } from "hono";
import { createPublicClient, createWalletClient, http, parseAbi } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { base } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { decodeXPaymentResponse, wrapFetchWithPayment as wrapFetchV1 } from "x402-fetch";
import { paymentMiddleware } from "x402-hono";
import { listen } from "../../src/common/listen.ts";
import { isolatedDatabaseOptions } from "../helpers/db.ts";
import { runMain } from "../helpers/in-process.ts";
import { spawnCli } from "../helpers/process.ts";
import { NETWORK, newMerchant, usdcReader } from "../helpers/x402.ts";

/** `/api/store`'s price ($0.001), and the calls the new user makes. */
const PRICE = 1_000n;
const CALLS = 50;
const DEPOSIT = 80_000n;

/** What the file's tests share, stopped after them in the reverse order: the two commands and their state. */
const closers: (() => Promise<void>)[] = [];

/** Starts a command in a child process of its own and waits for its first line (its ready line). */
async function command(args: string[], env: Record<string, string>): Promise<string> {
  const run = spawnCli(args, env);
  closers.push(async () => {
    if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill("SIGTERM");
    await run.exited;
  });
  return run.line.catch((error: Error) => {
    throw new Error(`${args[0]} ${error.message}`);
  });
}

interface DevnetLine {
  rpc: string;
  facilitator: string;
  signer: string;
  buyers: { privateKey: `0x${string}` }[];
}
let devnet: DevnetLine;
let urls: { utility: string; inference: string };
/** The utility API's wallet, which only the channel's payments pay; the inference API's, which the others pay. */
const payTo = newMerchant();
const inferencePayTo = newMerchant();
/** The inference API's tier 1, paid by the v1 client ($0.002). */
const T1_PRICE = 2_000n;

// docs/cli.md's two commands, shared by its two paths: each its own buyer and merchant wallet.
beforeAll(async () => {
  // Each command's data directory holds only the PGlite cluster it opens: devnet runs a facilitator, serve
  // only merchants (a copy of the other costs a quarter CPU-second, for nothing).
  const chainState = await isolatedDatabaseOptions("pglite", "facilitator");
  closers.push(chainState.cleanup);
  devnet = JSON.parse(
    await command(["devnet", "--port", "0", "--buyers", "2", "--data", chainState.dataDir], {
      X402M_FACILITATOR_PORT: "0",
    }),
  ) as DevnetLine;

  const merchantState = await isolatedDatabaseOptions("pglite", "merchants");
  closers.push(merchantState.cleanup);
  urls = JSON.parse(
    await command(["serve", "--only", "utility,inference", "--data", merchantState.dataDir], {
      X402M_FACILITATOR_URL: devnet.facilitator,
      X402M_RPC_URL: devnet.rpc,
      X402M_UTILITY_PAY_TO: payTo,
      X402M_UTILITY_PORT: "0",
      X402M_INFERENCE_PAY_TO: inferencePayTo,
      X402M_INFERENCE_PORT: "0",
      X402M_INFERENCE_ENGINE: "offline",
      PORT: "0",
    }),
  ) as typeof urls;
}, 120_000);
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

describe("the new user's path: devnet, then serve against its facilitator", () => {
  it("pays the utility API through a payment channel with the SDK's own client, and refunds it", async () => {
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
    // store of its own, to the block the refund's claim landed in. Both end on their own and print what they
    // found, so they run in this process (runMain, the same `main` with a child's environment): a child each
    // cost about 3 CPU-s more, loading the bundle and DuckDB anew. The two that serve stay processes.
    const head = Number(await usdc.client.getBlockNumber());
    const analyticsDir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-new-user-"));
    onTestFinished(() => fs.rmSync(analyticsDir, { recursive: true, force: true }));
    const indexed = await runMain([
      "index",
      "--rpc",
      devnet.rpc,
      "--to-block",
      String(head),
      "--data",
      analyticsDir,
    ]);
    expect(indexed.code, indexed.stderr).toBe(0);
    const report = await runMain(["report", payTo, "--data", analyticsDir]);
    expect(report.code, report.stderr).toBe(0);
    expect(JSON.parse(report.stdout)).toMatchObject({
      address: payTo.toLowerCase(),
      usd: Number(PRICE * BigInt(CALLS)) / 1e6,
      window: { end_block: head },
    });
  }, 120_000);

  it("pays with the client already run: a v1 client, a v1 server, and a wallet holding only USDC", async () => {
    const BUYER_KEY = (devnet.buyers[1] as { privateKey: `0x${string}` }).privateKey;
    const usdc = usdcReader(devnet.rpc);
    const chat = (tier: string) =>
      [
        `${urls.inference}/v1/chat/completions/_t/${tier}`,
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ messages: [{ role: "user", content: "Say hello." }], max_tokens: 16 }),
        },
      ] as const;

    // A v1 client: x402-fetch 1.2.0 pays an exact tier with X-PAYMENT, answered with X-PAYMENT-RESPONSE.
    const pay = wrapFetchV1(fetch, privateKeyToAccount(BUYER_KEY));
    const v1 = await pay(...chat("t1"));
    expect(v1.status, await v1.clone().text()).toBe(200);
    const v1Receipt = decodeXPaymentResponse(v1.headers.get("x-payment-response") as string);
    expect(v1Receipt).toMatchObject({ success: true, network: "base" });
    expect(await usdc.balanceOf(inferencePayTo)).toBe(T1_PRICE);

    // A v1 server: x402-hono 1.1.0 on the devnet's facilitator, bought from by the same client.
    const shopWallet = newMerchant();
    const app = new Hono();
    app.use(
      paymentMiddleware(
        shopWallet,
        { "/weather": { price: "$0.001", network: "base" } },
        { url: devnet.facilitator as `${string}://${string}` },
      ),
    );
    app.get("/weather", (c) => c.json({ city: "Lisbon", temperature: 21 }));
    const shop = await listen(app.fetch, "127.0.0.1", 0);
    onTestFinished(() => shop.close());
    const weather = await pay(`${shop.url}/weather`);
    expect(weather.status, await weather.clone().text()).toBe(200);
    expect(await weather.json()).toEqual({ city: "Lisbon", temperature: 21 });
    expect(decodeXPaymentResponse(weather.headers.get("x-payment-response") as string)).toMatchObject({
      success: true,
    });
    expect(await usdc.balanceOf(shopWallet)).toBe(1_000n);

    // A wallet holding only USDC, given 1 USDC by a buyer, pays an /upto tier with the SDK's upto client.
    const rpcUrl = devnet.rpc;
    const USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
    const wallet = privateKeyToAccount(generatePrivateKey());
    const funder = createWalletClient({
      account: privateKeyToAccount(BUYER_KEY),
      chain: base,
      transport: http(rpcUrl),
    });
    const hash = await funder.writeContract({
      address: USDC,
      abi: parseAbi(["function transfer(address to, uint256 value) returns (bool)"]),
      functionName: "transfer",
      args: [wallet.address, 1_000_000n],
    });
    await createPublicClient({ chain: base, transport: http(rpcUrl) }).waitForTransactionReceipt({ hash });

    const client = new x402Client().register("eip155:8453", new UptoEvmScheme(wallet, { rpcUrl }));
    const before = await usdc.balanceOf(inferencePayTo);
    const upto = await wrapFetchWithPayment(fetch, client)(...chat("t3/upto"));
    expect(upto.status, await upto.clone().text()).toBe(200);
    const settled = decodePaymentResponseHeader(upto.headers.get("payment-response") as string);
    expect(settled).toMatchObject({ success: true, payer: wallet.address });
    const charged = BigInt(settled.amount as string);
    expect(charged).toBeGreaterThan(0n);
    expect(await usdc.balanceOf(wallet.address)).toBe(1_000_000n - charged);
    expect(await usdc.balanceOf(inferencePayTo)).toBe(before + charged);
    // The permit rode in the settlement: the wallet never held ETH nor sent a transaction.
    expect(await usdc.client.getBalance({ address: wallet.address })).toBe(0n);
    expect(await usdc.nonceOf(wallet.address)).toBe(0);
  }, 60_000);
});
