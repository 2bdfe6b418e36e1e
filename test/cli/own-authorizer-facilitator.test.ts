/**
 * A merchant with its own channel authorizer key (X402M_UTILITY_CHANNEL_AUTHORIZER_KEY) run by `serve` against a
 * standalone `facilitator`, each a process of its own as docs/cli.md has a new user start them. The facilitator
 * relays deposits only into channels someone it knows can claim (docs/facilitator.md, "The deposit rule"): told
 * nothing of a merchant, it refuses the merchant's channels as `unclaimable_channel` and the merchant, which asks
 * before it offers, leaves them out of its 402s; told the merchant's authorizer (X402M_FACILITATOR_CHANNEL_AUTHORIZERS), it
 * relays them, and the SDK's own batch-settlement client pays calls by a deposit and vouchers and gets the rest
 * back by a refund the merchant signs itself.
 */
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { BatchSettlementEvmScheme as BatchClient } from "@x402/evm/batch-settlement/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import type { DevnetAccount } from "../../src/chain/devnet/index.ts";
import { useDevnet } from "../helpers/chain.ts";
import { isolatedDatabaseOptions, type TestDatabaseOptions } from "../helpers/db.ts";
import { runMain, serveInProcess } from "../helpers/in-process.ts";
import { sharedCli, startCli } from "../helpers/process.ts";
import { NETWORK, newMerchant, usdcReader } from "../helpers/x402.ts";

const PRICE = 1_000n; // `/api/store`'s price ($0.001)
const CALLS = 5;
const DEPOSIT = 20_000n;

const chain = useDevnet({ buyers: 1 });

/**
 * The merchant the facilitator is told of (X402M_FACILITATOR_CHANNEL_AUTHORIZERS): its wallet and its
 * authorizer key. Any other merchant, as the one of the test before it, is one the facilitator was told nothing of.
 */
const knownKey = generatePrivateKey();
const known = { payTo: newMerchant(), key: knownKey, authorizer: privateKeyToAccount(knownKey).address };

/**
 * `facilitator` in a process of its own on loopback (open: nothing else configured), told `known`'s authorizer:
 * one process for the file's two tests that serve (5-6 CPU-s each to start), a merchant each. Its table is by
 * receiver, so a merchant it was not told of meets it as one told nothing. Started by the first test that asks.
 */
let facilitatorState: TestDatabaseOptions | undefined;
const facilitatorRun = sharedCli(
  () => ["facilitator", "--rpc", chain.devnet.rpc, "--port", "0", "--data", facilitatorState?.dataDir ?? ""],
  () => ({
    X402M_FACILITATOR_KEY: chain.devnet.facilitatorAccount.privateKey,
    // Its receipts asked for at the miner's pace (20 ms), not every 500 ms: a channel's deposit and refund.
    X402M_FACILITATOR_POLL_MS: "20",
    X402M_FACILITATOR_CHANNEL_AUTHORIZERS: `${known.payTo}=${known.authorizer}`,
  }),
);
afterAll(async () => {
  if (facilitatorRun.started) expect(await facilitatorRun.stop()).toBe(0);
  await facilitatorState?.cleanup();
});
async function facilitator(): Promise<string> {
  // Made by the first test that asks, within its time as when each test made its own.
  facilitatorState ??= await isolatedDatabaseOptions("pglite");
  return (JSON.parse(await facilitatorRun.get().line) as { facilitator: string }).facilitator;
}

/** `serve --only utility` in a process, against `facilitatorUrl`, with its own authorizer key; its `/api/store` URL. */
async function serve(facilitatorUrl: string, payTo: string, authorizerKey: string): Promise<string> {
  const state = await isolatedDatabaseOptions("pglite");
  onTestFinished(state.cleanup);
  const run = startCli(["serve", "--only", "utility", "--data", state.dataDir], {
    X402M_FACILITATOR_URL: facilitatorUrl,
    X402M_RPC_URL: chain.devnet.rpc,
    X402M_UTILITY_PAY_TO: payTo,
    X402M_UTILITY_CHANNEL_AUTHORIZER_KEY: authorizerKey,
    X402M_UTILITY_PORT: "0",
    PORT: "0",
  });
  return `${(JSON.parse(await run.line) as { utility: string }).utility}/api/store`;
}

async function offered(url: string) {
  const unpaid = await fetch(url);
  expect(unpaid.status).toBe(402);
  const required = decodePaymentRequiredHeader(unpaid.headers.get("payment-required") as string);
  return required.accepts.find((a) => a.scheme === "batch-settlement");
}

describe("a merchant with its own authorizer key against a standalone facilitator", () => {
  it("refuses a setting that is not receiver=authorizer pairs, in one line, before it starts", async () => {
    const state = await isolatedDatabaseOptions("pglite");
    onTestFinished(state.cleanup);
    const run = await runMain(
      ["facilitator", "--rpc", chain.devnet.rpc, "--port", "0", "--data", state.dataDir],
      {
        X402M_FACILITATOR_KEY: chain.devnet.facilitatorAccount.privateKey,
        X402M_FACILITATOR_CHANNEL_AUTHORIZERS: `${newMerchant()}:0x1234`,
      },
    );
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toContain("X402M_FACILITATOR_CHANNEL_AUTHORIZERS");
  });

  it("is offered no channel where the facilitator does not know its authorizer", async () => {
    // The host in this process, started as `serve` starts it from the same variables: what is checked is what
    // it offers, and the facilitator it asks is still a process (the next test's `serve` is one too).
    const state = await isolatedDatabaseOptions("pglite");
    onTestFinished(state.cleanup);
    const served = await serveInProcess("utility", state.dataDir, {
      X402M_FACILITATOR_URL: await facilitator(),
      X402M_RPC_URL: chain.devnet.rpc,
      X402M_UTILITY_PAY_TO: newMerchant(),
      X402M_UTILITY_CHANNEL_AUTHORIZER_KEY: generatePrivateKey(),
      X402M_UTILITY_PORT: "0",
      PORT: "0",
    });
    const url = `${served.urls.utility}/api/store`;
    expect(await offered(url)).toBeUndefined();
  }, 40_000);

  it("is offered and paid through channels once the facilitator is told its authorizer", async () => {
    const url = await serve(await facilitator(), known.payTo, known.key);
    expect((await offered(url))?.extra?.receiverAuthorizer).toBe(known.authorizer);

    const account = privateKeyToAccount((chain.devnet.buyers[0] as DevnetAccount).privateKey);
    const client = new BatchClient(account, {
      rpcUrl: chain.devnet.rpc,
      depositStrategy: () => DEPOSIT.toString(),
    });
    const pay = wrapFetchWithPayment(fetch, new x402Client().register(NETWORK, client));
    const usdc = usdcReader(chain.devnet.rpc);
    const before = await usdc.balanceOf(account.address);
    for (let i = 0; i < CALLS; i++) {
      const answer = await pay(url);
      expect(answer.status, await answer.clone().text()).toBe(200);
    }
    expect(before - (await usdc.balanceOf(account.address))).toBe(DEPOSIT);
    // The refund is signed by the merchant's key and relayed by a facilitator that signs nothing for it.
    const refunded = await client.refund(url);
    expect(refunded, JSON.stringify(refunded)).toMatchObject({ success: true });
    expect(await usdc.balanceOf(account.address)).toBe(before - PRICE * BigInt(CALLS));
  }, 60_000);
});
