/**
 * A merchant with an authorizer key of its own (X402M_<HOST>_CHANNEL_AUTHORIZER_KEY), served beside the
 * facilitator in one process (the devnet's and the demo's composition): its channels name that key, and the
 * facilitator relays deposits only into channels someone it knows can claim (docs/facilitator.md, "The
 * receiverAuthorizer (decision)"). The composition root registers the merchant's key for its wallet, so a
 * buyer's deposit into such a channel is relayed and its call served.
 */

import { computeChannelId } from "@x402/evm/batch-settlement/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it, onTestFinished } from "vitest";
import { type DevnetAccount, devnetChain } from "../../src/chain/devnet/index.ts";
import { Lifecycle } from "../../src/common/lifecycle.ts";
import { loadConfig } from "../../src/services/config.ts";
import { startServices } from "../../src/services/start.ts";
import { useDevnet } from "../helpers/chain.ts";
import { escrowOf, requiredBy } from "../helpers/channel-shop.ts";
import { isolatedDatabaseOptions } from "../helpers/db.ts";
import { channelClient, channelPayer } from "../helpers/stock-facilitator.ts";
import { NETWORK, newMerchant } from "../helpers/x402.ts";

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
