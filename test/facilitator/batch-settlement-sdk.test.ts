/**
 * The stock SDK's batch-settlement on both sides of the project's facilitator: a buyer with `@x402/fetch` and the
 * SDK's client scheme pays a `@x402/hono` route served with the SDK's server scheme, whose resource server reaches
 * the facilitator over HTTP with an API key for its receiver; the SDK's channel manager then claims, sweeps and
 * the buyer asks a cooperative refund. Nothing here is the project's but the facilitator: what it proves is that
 * the facilitator speaks batch-settlement as the SDK does (its /supported, answers and refusals).
 */
import { x402Client } from "@x402/core/client";
import { HTTPFacilitatorClient, x402ResourceServer } from "@x402/core/server";
import { BatchSettlementEvmScheme as BatchClient } from "@x402/evm/batch-settlement/client";
import { BatchSettlementEvmScheme as BatchServer } from "@x402/evm/batch-settlement/server";
import { wrapFetchWithPayment } from "@x402/fetch";
import { paymentMiddleware } from "@x402/hono";
import { Hono } from "hono";
import { parseEther } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { X402_BATCH_SETTLEMENT_ADDRESS as ESCROW } from "../../src/chain/base.ts";
import type { DevnetAccount } from "../../src/chain/devnet/index.ts";
import type { Database } from "../../src/common/db/index.ts";
import { type Listening, listen } from "../../src/common/listen.ts";
import { addKey } from "../../src/facilitator/access/index.ts";
import type { Facilitator } from "../../src/facilitator/index.ts";
import { useDevnet } from "../helpers/chain.ts";
import { openTestDatabase } from "../helpers/db.ts";
import { devnetFacilitator } from "../helpers/facilitator.ts";
import { NETWORK, newMerchant, usdcReader } from "../helpers/x402.ts";

const chain = useDevnet({ buyers: 1 });
let usdc: ReturnType<typeof usdcReader>;
let db: Database;
let closeDb: () => Promise<void>;
let facilitator: Facilitator;
const servers: Listening[] = [];
const receiver = newMerchant();
let key: string;
let facilitatorUrl: string;

beforeAll(async () => {
  usdc = usdcReader(chain.devnet.rpc);
  ({ db, close: closeDb } = await openTestDatabase("pglite"));
  // Closed: the merchant's resource server needs its key.
  facilitator = await devnetFacilitator(chain.devnet, db, { access: { open: false } });
  ({ key } = await addKey(db, {
    name: "shop",
    payees: [receiver.toLowerCase()],
    gasBudgetWei: parseEther("1"),
    ratePerMinute: 1000,
  }));
  const served = await listen(facilitator.app.fetch, "127.0.0.1", 0);
  servers.push(served);
  facilitatorUrl = served.url;
}, 60_000);
afterAll(async () => {
  for (const server of servers) await server.close();
  await facilitator?.close();
  await closeDb?.();
});

describe("the stock SDK's batch-settlement through the project's facilitator", () => {
  it("opens a channel, pays by vouchers, is claimed, swept and refunded", async () => {
    const auth = { Authorization: `Bearer ${key}` };
    const facilitatorClient = new HTTPFacilitatorClient({
      url: facilitatorUrl,
      createAuthHeaders: async () => ({ verify: auth, settle: auth, supported: {} }),
    });
    const scheme = new BatchServer(receiver);
    const resourceServer = new x402ResourceServer(facilitatorClient).register(NETWORK, scheme);
    const app = new Hono();
    app.use(
      paymentMiddleware(
        {
          "GET /metered": {
            accepts: { scheme: "batch-settlement", price: "$0.001", network: NETWORK, payTo: receiver },
          },
        },
        resourceServer,
      ),
    );
    app.get("/metered", (c) => c.json({ ok: true }));
    const shop = await listen(app.fetch, "127.0.0.1", 0);
    servers.push(shop);

    const buyer = chain.devnet.buyers[0] as DevnetAccount;
    const client = new BatchClient(privateKeyToAccount(buyer.privateKey), { rpcUrl: chain.devnet.rpc });
    const pay = wrapFetchWithPayment(fetch, new x402Client().register(NETWORK, client));
    const before = await usdc.balanceOf(buyer.address);
    for (let i = 0; i < 3; i++) {
      const response = await pay(`${shop.url}/metered`);
      expect(response.status, await response.clone().text()).toBe(200);
      expect(await response.json()).toEqual({ ok: true });
    }
    const deposited = before - (await usdc.balanceOf(buyer.address));
    expect(deposited).toBeGreaterThanOrEqual(3000n);
    expect(await usdc.balanceOf(ESCROW)).toBe(deposited);

    const manager = scheme.createChannelManager(facilitatorClient, NETWORK);
    const { claims, settle } = await manager.claimAndSettle();
    expect(claims).toMatchObject([{ vouchers: 1 }]);
    expect(settle?.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await usdc.balanceOf(receiver)).toBe(3000n);

    const refunded = await client.refund(`${shop.url}/metered`);
    expect(refunded, JSON.stringify(refunded)).toMatchObject({ success: true });
    expect(await usdc.balanceOf(buyer.address)).toBe(before - 3000n);

    // One deposit relayed; the receiver's actions signed by the facilitator as its receiverAuthorizer.
    const { rows: deposits } = await db.query("SELECT state FROM facilitator_authorizations");
    expect(deposits).toEqual([{ state: "settled" }]);
    const { rows: actions } = await db.query(
      "SELECT kind, state, authorized FROM facilitator_channel_actions ORDER BY created_at",
    );
    expect(actions).toEqual([
      { kind: "claim", state: "settled", authorized: true },
      { kind: "settle", state: "settled", authorized: false },
      { kind: "refund", state: "settled", authorized: true },
    ]);
  });
});
