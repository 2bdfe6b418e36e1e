/**
 * A merchant paid on Polygon PoS through the project's facilitator (issue 67): a devnet as chain 137 (Polygon's
 * native USDC and x402's contracts at their addresses), `facilitator --rpc` on it (its USDC known from the chain's
 * record), and `serve --only utility` and `--only inference` told only `X402M_NETWORK=eip155:137` (the token
 * follows). The SDK's own clients pay: `exact` by EIP-3009, a payment channel by deposit and vouchers (refunded at
 * the end), and `upto` through x402's upto proxy. The facilitator's Bazaar lists the route on Polygon. `index
 * --chain polygon` then `report --chain polygon` count exactly what was paid, under Polygon and in no Base report.
 */
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import { BatchSettlementEvmScheme as BatchClient } from "@x402/evm/batch-settlement/client";
import { ExactEvmScheme as ExactClient } from "@x402/evm/exact/client";
import { UptoEvmScheme as UptoClient } from "@x402/evm/upto/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { getAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { POLYGON_RECORD } from "../../src/chain/chains.ts";
import type { Devnet, DevnetAccount } from "../../src/chain/devnet/index.ts";
import { startMiner } from "../helpers/chain.ts";
import { isolatedDatabaseOptions } from "../helpers/db.ts";
import { startTestDevnet } from "../helpers/indexer.ts";
import { runCli, startCli } from "../helpers/process.ts";
import { newMerchant, usdcReader } from "../helpers/x402.ts";

const NETWORK = POLYGON_RECORD.caip2 as `${string}:${string}`;
/** `/api/store`'s price ($0.001), the calls paid each way (a whole cent in all: a report's dollars have two decimals), and the channel's deposit. */
const PRICE = 1_000n;
const EXACT_CALLS = 5;
const CHANNEL_CALLS = 5;
const DEPOSIT = 20_000n;

let devnet: Devnet;
let miner: ReturnType<typeof startMiner>;

beforeAll(async () => {
  devnet = await startTestDevnet({ chain: POLYGON_RECORD, buyers: 1, genesisNumber: 0 });
  miner = startMiner(devnet);
}, 60_000);
afterAll(async () => {
  await miner?.stop();
  await devnet?.stop();
});

describe("a merchant on Polygon", () => {
  it("is paid by the SDK's exact, upto and channel clients through the project's facilitator, and reported under Polygon only", async () => {
    const payTo = newMerchant();
    const authorizerKey = generatePrivateKey();
    const facilitatorState = await isolatedDatabaseOptions("pglite");
    onTestFinished(facilitatorState.cleanup);
    const facilitator = startCli(
      ["facilitator", "--rpc", devnet.rpc, "--port", "0", "--data", facilitatorState.dataDir],
      {
        DATABASE_URL: "",
        X402M_FACILITATOR_KEY: devnet.facilitatorAccount.privateKey,
        X402M_FACILITATOR_CHANNEL_AUTHORIZERS: `${payTo}=${privateKeyToAccount(authorizerKey).address}`,
      },
    );
    const settling = JSON.parse(await facilitator.line) as {
      facilitator: string;
      network: string;
      assets: string[];
    };
    expect(settling).toMatchObject({ network: NETWORK, assets: [getAddress(POLYGON_RECORD.usdc.address)] });

    // What a merchant host on Polygon is told: the network (its USDC follows), its RPC, the facilitator.
    const onPolygon = {
      DATABASE_URL: "",
      X402M_NETWORK: NETWORK,
      X402M_FACILITATOR_URL: settling.facilitator,
      X402M_RPC_URL: devnet.rpc,
      PORT: "0",
    };
    const merchantState = await isolatedDatabaseOptions("pglite");
    onTestFinished(merchantState.cleanup);
    const serve = startCli(["serve", "--only", "utility", "--data", merchantState.dataDir], {
      ...onPolygon,
      X402M_UTILITY_PAY_TO: payTo,
      X402M_UTILITY_CHANNEL_AUTHORIZER_KEY: authorizerKey,
      X402M_UTILITY_PORT: "0",
    });
    const url = `${(JSON.parse(await serve.line) as { utility: string }).utility}/api/store`;

    // The 402 names Polygon and its USDC's EIP-712 domain, for exact and for the channel.
    const required = decodePaymentRequiredHeader(
      (await fetch(url)).headers.get("payment-required") as string,
    );
    // Every option it offers is paid below.
    expect(required.accepts.map((a) => [a.scheme, a.network, a.asset.toLowerCase()])).toEqual([
      ["exact", NETWORK, POLYGON_RECORD.usdc.address],
      ["batch-settlement", NETWORK, POLYGON_RECORD.usdc.address],
    ]);
    expect(required.accepts.find((a) => a.scheme === "exact")?.extra).toMatchObject({
      name: "USD Coin",
      version: "2",
    });

    const account = privateKeyToAccount((devnet.buyers[0] as DevnetAccount).privateKey);
    const usdc = usdcReader(devnet.rpc, POLYGON_RECORD.usdc.address);
    const before = await usdc.balanceOf(account.address);
    const exact = wrapFetchWithPayment(fetch, new x402Client().register(NETWORK, new ExactClient(account)));
    for (let i = 0; i < EXACT_CALLS; i++) {
      const answer = await exact(url);
      expect(answer.status, await answer.clone().text()).toBe(200);
    }
    const channel = new BatchClient(account, {
      rpcUrl: devnet.rpc,
      depositStrategy: () => DEPOSIT.toString(),
    });
    const viaChannel = wrapFetchWithPayment(fetch, new x402Client().register(NETWORK, channel));
    for (let i = 0; i < CHANNEL_CALLS; i++) {
      const answer = await viaChannel(url);
      expect(answer.status, await answer.clone().text()).toBe(200);
    }
    expect(await channel.refund(url)).toMatchObject({ success: true });

    // upto, through x402's upto proxy on Polygon: the inference API's metered tier route, on its offline engine,
    // the same wallet paid (a merchant both hosts pay).
    const inferenceState = await isolatedDatabaseOptions("pglite");
    onTestFinished(inferenceState.cleanup);
    const inference = startCli(["serve", "--only", "inference", "--data", inferenceState.dataDir], {
      ...onPolygon,
      X402M_INFERENCE_PAY_TO: payTo,
      X402M_INFERENCE_ENGINE: "offline",
      X402M_INFERENCE_PORT: "0",
    });
    const chat = `${(JSON.parse(await inference.line) as { inference: string }).inference}/v1/chat/completions/_t/t3/upto`;
    const upto = wrapFetchWithPayment(fetch, new x402Client().register(NETWORK, new UptoClient(account)));
    const metered = await upto(chat, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "user", content: "Hello from Polygon." }], max_tokens: 16 }),
    });
    expect(metered.status, await metered.clone().text()).toBe(200);
    const taken = BigInt(
      decodePaymentResponseHeader(metered.headers.get("payment-response") as string).amount ?? 0,
    );
    expect(taken).toBeGreaterThan(0n);
    const paid = PRICE * BigInt(EXACT_CALLS + CHANNEL_CALLS) + taken;
    expect(await usdc.balanceOf(account.address)).toBe(before - paid);

    // The facilitator's Bazaar lists what it settled, on Polygon.
    const listed = (await (await fetch(`${settling.facilitator}/discovery/resources`)).json()) as {
      items: { resource: string; accepts: { network: string }[] }[];
    };
    const store = listed.items.find((item) => item.resource.includes("/api/store"));
    expect(store?.accepts.map((a) => a.network)).toContain(NETWORK);

    // Indexed as Polygon's, and reported there: exactly what was paid, each way.
    const head = Number(await usdc.client.getBlockNumber());
    const analytics = await isolatedDatabaseOptions("pglite");
    onTestFinished(analytics.cleanup);
    const indexed = await runCli([
      "index",
      "--rpc",
      devnet.rpc,
      "--chain",
      "polygon",
      "--facilitator",
      devnet.facilitatorAccount.address,
      "--to-block",
      String(head),
      "--data",
      analytics.dataDir,
    ]);
    expect(indexed.code, indexed.stderr).toBe(0);
    const report = await runCli(["report", payTo, "--chain", "polygon", "--data", analytics.dataDir]);
    expect(report.code, report.stderr).toBe(0);
    expect(JSON.parse(report.stdout)).toMatchObject({
      chain: "polygon",
      address: payTo.toLowerCase(),
      usd: Math.round(Number(paid) / 1e4) / 100,
      // Each exact call a payment; the channel's five charges one, its claim at the refund; the upto one.
      tx: EXACT_CALLS + 2,
      window: { end_block: head },
    });
    // The chain's week is its young life here: a few seconds of blocks.
    expect(JSON.parse(report.stdout).claim).toMatch(/ from 1 of 1 buyer wallets on Polygon in the /);
    // No Base data at all: Base's report has nothing to say.
    const base = await runCli(["report", payTo, "--data", analytics.dataDir]);
    expect(base.code).not.toBe(0);
    expect(base.stderr).toMatch(/no Base data/);
  }, 120_000);
});
