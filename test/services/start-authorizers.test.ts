/**
 * The facilitator as the composition root starts it, on one devnet for the file.
 *
 * A merchant with an authorizer key of its own (X402M_<HOST>_CHANNEL_AUTHORIZER_KEY), served beside the
 * facilitator in one process (the devnet's and the demo's composition): its channels name that key, and the
 * facilitator relays deposits only into channels someone it knows can claim (docs/facilitator.md, "The
 * receiverAuthorizer (decision)"). The composition root registers the merchant's key for its wallet, so a
 * buyer's deposit into such a channel is relayed and its call served.
 *
 * With X402M_FACILITATOR_GROUP_SETTLEMENTS=on, the facilitator `x402-merchants facilitator` starts
 * (`startFacilitatorService`, what `startServices` calls for it) settles in groups (docs/facilitator.md,
 * "Settlements in groups"): two payments that arrive while a lone one is in flight share one transaction.
 */

import { HTTPFacilitatorClient } from "@x402/core/server";
import { computeChannelId } from "@x402/evm/batch-settlement/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it, onTestFinished } from "vitest";
import { MULTICALL3_ADDRESS } from "../../src/chain/base.ts";
import { type DevnetAccount, devnetChain } from "../../src/chain/devnet/index.ts";
import { Lifecycle } from "../../src/common/lifecycle.ts";
import { loadConfig } from "../../src/services/config.ts";
import { startFacilitatorService } from "../../src/services/facilitator.ts";
import { startServices } from "../../src/services/start.ts";
import { useDevnet } from "../helpers/chain.ts";
import { escrowOf, requiredBy } from "../helpers/channel-shop.ts";
import { isolatedDatabaseOptions } from "../helpers/db.ts";
import { eventually } from "../helpers/process.ts";
import { rpc } from "../helpers/settle.ts";
import { channelClient, channelPayer } from "../helpers/stock-facilitator.ts";
import { NETWORK, newMerchant, pay, requirementsFor, usdcReader } from "../helpers/x402.ts";

const DEPOSIT = 50_000n;

const chain = useDevnet({ buyers: 1 });

describe("a merchant with its own channel authorizer, beside the facilitator", () => {
  it("has deposits into its channels relayed, and its calls served", async () => {
    const db = await isolatedDatabaseOptions("pglite");
    onTestFinished(db.cleanup);
    const key = generatePrivateKey();
    const authorizer = privateKeyToAccount(key).address;
    const config = loadConfig({
      env: {
        X402M_DATA: db.dataDir,
        PORT: "0",
        X402M_METRICS_PORT: "0",
        X402M_FACILITATOR_PORT: "0",
        X402M_UTILITY_PAY_TO: newMerchant(),
        X402M_UTILITY_PORT: "0",
        X402M_UTILITY_CHANNEL_AUTHORIZER_KEY: key,
      },
    });
    const lifecycle = new Lifecycle();
    onTestFinished(() => lifecycle.close());
    const services = await startServices({
      config,
      lifecycle,
      merchants: ["utility"],
      facilitator: {
        rpc: chain.devnet.rpc,
        chain: devnetChain(chain.devnet.rpc),
        privateKey: chain.devnet.facilitatorAccount.privateKey,
        onNewChain: "reset",
        pollingIntervalMs: 20,
      },
    });
    const url = `${services.urls.utility}/api/store`;
    const offer = (await requiredBy(url)).accepts.find((a) => a.scheme === "batch-settlement");
    expect(offer?.extra).toMatchObject({ receiverAuthorizer: authorizer });

    const client = channelClient(chain.devnet, chain.devnet.buyers[0] as DevnetAccount, {
      salt: 65n,
      deposit: DEPOSIT,
    });
    const answer = await wrapFetchWithPayment(fetch, channelPayer(client))(url);
    expect(answer.status, answer.headers.get("payment-required") ?? "").toBe(200);
    const channel = client.buildChannelConfig(offer as NonNullable<typeof offer>);
    expect(channel.receiverAuthorizer).toBe(authorizer);
    expect(await escrowOf(chain.devnet, computeChannelId(channel, NETWORK))).toEqual({
      balance: DEPOSIT,
      totalClaimed: 0n,
    });
  }, 60_000);
});

describe("the facilitator with X402M_FACILITATOR_GROUP_SETTLEMENTS=on", () => {
  it("sends two payments that arrive while a lone one is in flight in one transaction, through Multicall3", async () => {
    const db = await isolatedDatabaseOptions("pglite");
    onTestFinished(db.cleanup);
    // A settling key of its own: its nonces meet no other facilitator's on this chain.
    const key = generatePrivateKey();
    await rpc(chain.devnet.rpc, "anvil_setBalance", [privateKeyToAccount(key).address, "0xde0b6b3a7640000"]);
    const config = loadConfig({
      env: {
        X402M_DATA: db.dataDir,
        X402M_FACILITATOR_PORT: "0",
        X402M_FACILITATOR_GROUP_SETTLEMENTS: "on",
      },
    });
    const lifecycle = new Lifecycle();
    onTestFinished(() => lifecycle.close());
    // As `x402-merchants facilitator` has startServices start it.
    const started = await startFacilitatorService(
      config,
      {
        rpc: chain.devnet.rpc,
        chain: devnetChain(chain.devnet.rpc),
        privateKey: key,
        assets: [chain.devnet.usdc],
        onNewChain: "reset",
        pollingIntervalMs: 20,
      },
      lifecycle,
    );
    const client = new HTTPFacilitatorClient({ url: started.url });
    const buyer = chain.devnet.buyers[0] as DevnetAccount;
    const merchant = newMerchant();
    const requirements = requirementsFor(merchant, "1000");
    const [lone, ...two] = [
      await pay(buyer, requirements),
      await pay(buyer, requirements),
      await pay(buyer, requirements),
    ];
    for (const payment of [lone, ...two])
      expect(await client.verify(payment, requirements)).toMatchObject({ isValid: true });

    // The lone one in flight (its transaction unmined), the two then wait for the next group.
    chain.miner.pause();
    let first: ReturnType<HTTPFacilitatorClient["settle"]>;
    let answers: ReturnType<HTTPFacilitatorClient["settle"]>[];
    try {
      first = client.settle(lone, requirements);
      expect(await eventually(async () => (await chain.miner.pending()) === 1, 20_000)).toBe(true);
      answers = two.map((payment) => client.settle(payment, requirements));
      await started.facilitator.untilSettlementsWaiting(2);
    } finally {
      chain.miner.resume();
    }
    const alone = await first;
    const [a, b] = await Promise.all(answers);
    expect(alone).toMatchObject({ success: true });
    expect(a).toMatchObject({ success: true });
    expect(b).toMatchObject({ success: true, transaction: a?.transaction });
    expect(a?.transaction).not.toBe(alone.transaction);

    const usdc = usdcReader(chain.devnet.rpc);
    const lonely = await usdc.client.getTransaction({ hash: alone.transaction as Hex });
    expect(lonely.to).toBe(chain.devnet.usdc.toLowerCase());
    const group = await usdc.client.getTransaction({ hash: a?.transaction as Hex });
    expect(group.to).toBe(MULTICALL3_ADDRESS.toLowerCase());
    expect(await usdc.balanceOf(merchant)).toBe(3000n);
  }, 60_000);
});
