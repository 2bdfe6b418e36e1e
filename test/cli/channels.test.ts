/**
 * `x402-merchants channels list|claim|refund` for an operator: `serve --only utility` (its own authorizer key)
 * in a process of its own on PGlite, paid by the SDK's own batch-settlement client. While it runs it holds the
 * PGlite directory, so the command asks it through its loopback admin path and token record, as `facilitator
 * keys` asks a running facilitator; once it stops, the command opens the database itself, as it does beside
 * a PostgreSQL server. What each prints is read against the chain: the escrow's claimed total, the payer's
 * USDC after the refund.
 */
import fs from "node:fs";
import { x402Client } from "@x402/core/client";
import { BatchSettlementEvmScheme as BatchClient } from "@x402/evm/batch-settlement/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it, onTestFinished } from "vitest";
import type { DevnetAccount } from "../../src/chain/devnet/index.ts";
import { register } from "../../src/common/metrics.ts";
import { adminRecordFile } from "../../src/services/admin.ts";
import { useDevnet } from "../helpers/chain.ts";
import { isolatedDatabaseOptions } from "../helpers/db.ts";
import { useFacilitatorOnDevnet } from "../helpers/facilitator.ts";
import { runMain } from "../helpers/in-process.ts";
import { startCli } from "../helpers/process.ts";
import { NETWORK, newMerchant, usdcReader } from "../helpers/x402.ts";

const PRICE = 1_000n; // `/api/store`'s price ($0.001)
const DEPOSIT = 20_000n;

const chain = useDevnet({ buyers: 1 });
const payTo = newMerchant();
const authorizerKey = generatePrivateKey();
const facilitator = useFacilitatorOnDevnet(chain, {
  channelAuthorizers: { [payTo]: [privateKeyToAccount(authorizerKey).address] },
});

interface Line {
  merchant: string;
  channel: string;
  payer: string;
  balance: string;
  charged: string;
  claimed: string;
  unclaimed: string;
  withdrawalEndsInSeconds: number | null;
}

const lines = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));

describe("channels list, claim and refund", () => {
  it("lists, claims and refunds a merchant's channel, through the running serve and then alone", async () => {
    const state = await isolatedDatabaseOptions("pglite");
    onTestFinished(state.cleanup);
    const env = {
      X402M_FACILITATOR_URL: facilitator.url,
      X402M_RPC_URL: chain.devnet.rpc,
      X402M_UTILITY_PAY_TO: payTo,
      X402M_UTILITY_CHANNEL_AUTHORIZER_KEY: authorizerKey,
    };
    const serve = startCli(["serve", "--only", "utility", "--data", state.dataDir], {
      ...env,
      X402M_UTILITY_PORT: "0",
      PORT: "0",
    });
    const ready = JSON.parse(await serve.line) as { utility: string; metrics: string };
    const url = `${ready.utility}/api/store`;
    const scrape = async () => (await fetch(ready.metrics)).text();
    const channels = (...args: string[]) => runMain(["channels", ...args, "--data", state.dataDir], env);

    const buyer = privateKeyToAccount((chain.devnet.buyers[0] as DevnetAccount).privateKey);
    const client = new BatchClient(buyer, {
      rpcUrl: chain.devnet.rpc,
      depositStrategy: () => DEPOSIT.toString(),
    });
    const pay = wrapFetchWithPayment(fetch, new x402Client().register(NETWORK, client));
    const usdc = usdcReader(chain.devnet.rpc);
    const before = await usdc.balanceOf(buyer.address);
    const calls = async (n: number) => {
      for (let i = 0; i < n; i++) expect((await pay(url)).status).toBe(200);
    };
    await calls(5);

    // Its metrics and readiness: the money is at stake, not late.
    expect(await scrape()).toContain('x402m_channels_unclaimed_usd{merchant="utility"} 0.005');
    expect(await scrape()).toContain('x402m_channels_open{merchant="utility"} 1');
    const readyz = (await (await fetch(`${ready.utility}/readyz`)).json()) as {
      checks: { channels: unknown };
    };
    expect(readyz.checks.channels).toEqual({ ok: true });

    // Through the running serve: its record is its user's only.
    expect(fs.statSync(adminRecordFile(state.dataDir, "merchants")).mode & 0o777).toBe(0o600);
    const listed = await channels("list");
    expect(listed.code, listed.stderr).toBe(0);
    const [open] = lines(listed.stdout) as [Line];
    expect(open).toMatchObject({
      merchant: "utility",
      payer: buyer.address.toLowerCase(),
      balance: "0.02",
      charged: "0.005",
      claimed: "0",
      unclaimed: "0.005",
    });
    // A day's withdrawal delay, counted from the oldest unclaimed charge (a few seconds ago).
    expect(open.withdrawalEndsInSeconds).toBeGreaterThan(86_400 - 60);
    expect(open.withdrawalEndsInSeconds).toBeLessThanOrEqual(86_400);

    const claimed = await channels("claim", "--merchant", "utility");
    expect(claimed.code, claimed.stderr).toBe(0);
    expect(lines(claimed.stdout)).toEqual([
      expect.objectContaining({
        merchant: "utility",
        channels: [open.channel],
        transactions: [expect.any(String)],
      }),
    ]);
    expect(await scrape()).toMatch(/^x402m_channels_unclaimed_usd\{merchant="utility"\} 0$/m);
    // The claim's gas, on the facilitator that sent it (this process's).
    const gas = (await register.metrics()).match(
      /x402m_facilitator_channel_gas_spent_wei_total\{action="claim"\} (\d+)/,
    );
    expect(Number(gas?.[1])).toBeGreaterThan(0);
    expect(lines((await channels("list")).stdout)[0]).toMatchObject({
      claimed: "0.005",
      unclaimed: "0",
      withdrawalEndsInSeconds: null,
    });
    // Refused in one line, exit 2, by the running serve as by the command.
    for (const bad of [
      ["refund", "--payer", "0xnope"],
      ["refund", "--payer", newMerchant()],
      ["list", "--merchant", "nope"],
    ]) {
      const refused = await channels(...bad);
      expect(refused.code, `${bad.join(" ")}: ${refused.stderr}`).toBe(2);
      expect(refused.stderr.trim().split("\n")).toHaveLength(1);
    }

    await calls(2);
    serve.child.kill("SIGTERM");
    expect(await serve.exited).toBe(0);
    expect(fs.existsSync(adminRecordFile(state.dataDir, "merchants"))).toBe(false);

    // Alone on the database: the two new charges unclaimed, then refunded with their claim. Every configured
    // host with a wallet is known here, the alias that shares the utility's wallet too.
    expect(lines((await channels("list")).stdout)[0]).toMatchObject({ charged: "0.007", unclaimed: "0.002" });
    const refunded = await channels("refund", "--payer", buyer.address);
    expect(refunded.code, refunded.stderr).toBe(0);
    expect(lines(refunded.stdout)).toEqual([
      expect.objectContaining({
        merchant: "utility,utility-alias",
        refunded: [expect.objectContaining({ channel: open.channel })],
      }),
    ]);
    expect(await usdc.balanceOf(buyer.address)).toBe(before - 7n * PRICE);
    expect((await channels("list")).stdout).toBe("");
  }, 60_000);
});
