import { x402Client } from "@x402/core/client";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import { HTTPFacilitatorClient } from "@x402/core/server";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { withBazaar } from "@x402/extensions/bazaar";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Devnet } from "../../src/chain/devnet/index.ts";
import type { Database } from "../../src/common/db/index.ts";
import { type Listening, listen } from "../../src/common/listen.ts";
import type { Facilitator } from "../../src/facilitator/index.ts";
import { useDevnet } from "../helpers/chain.ts";
import { openTestDatabase } from "../helpers/db.ts";
import { devnetFacilitator, startShop } from "../helpers/facilitator.ts";
import { NETWORK, newMerchant, usdcReader } from "../helpers/x402.ts";

const chain = useDevnet({ buyers: 1 });
let db: Database;
let closeDb: () => Promise<void>;
let facilitator: Facilitator;
let facilitatorServer: Listening;
let shop: Listening;
const merchant = newMerchant();

beforeAll(async () => {
  ({ db, close: closeDb } = await openTestDatabase("pglite"));
  facilitator = await devnetFacilitator(chain.devnet, db);
  facilitatorServer = await listen(facilitator.app.fetch, "127.0.0.1", 0);
  shop = await startShop(facilitatorServer.url, merchant, {
    "/weather": {
      price: "$0.001",
      description: "Current weather for a city",
      body: ({ city }) => ({ city, temperature: 21 }),
    },
  });
});
afterAll(async () => {
  await shop?.close();
  await facilitatorServer?.close();
  await facilitator?.close();
  await closeDb?.();
});

describe("a paid Hono route settled by our facilitator", () => {
  it("asks for payment, takes it from a buyer's wrapped fetch, and lists the route in the Bazaar", async () => {
    const unpaid = await fetch(`${shop.url}/weather?city=Lisbon`);
    expect(unpaid.status).toBe(402);
    const required = decodePaymentRequiredHeader(unpaid.headers.get("PAYMENT-REQUIRED") ?? "");
    expect(required.accepts).toMatchObject([
      { scheme: "exact", network: NETWORK, amount: "1000", payTo: merchant },
    ]);

    const [buyer] = chain.devnet.buyers as [Devnet["buyers"][0]];
    const usdc = usdcReader(chain.devnet.rpc);
    const before = await usdc.balanceOf(buyer.address);
    const buyerFetch = wrapFetchWithPayment(
      fetch,
      new x402Client().register(NETWORK, new ExactEvmClient(privateKeyToAccount(buyer.privateKey))),
    );
    const paid = await buyerFetch(`${shop.url}/weather?city=Lisbon`);
    expect(paid.status).toBe(200);
    expect(await paid.json()).toEqual({ city: "Lisbon", temperature: 21 });
    const receipt = decodePaymentResponseHeader(paid.headers.get("PAYMENT-RESPONSE") ?? "");
    expect(receipt).toMatchObject({ success: true, network: NETWORK, payer: buyer.address });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const tx = await usdc.client.getTransaction({ hash: receipt.transaction as `0x${string}` });
    expect(tx.from).toBe(chain.devnet.facilitatorAccount.address.toLowerCase());
    expect(await usdc.balanceOf(merchant)).toBe(1000n);
    expect(await usdc.balanceOf(buyer.address)).toBe(before - 1000n);

    // The SDK's own Bazaar client reads our Bazaar.
    const bazaar = withBazaar(new HTTPFacilitatorClient({ url: facilitatorServer.url })).extensions.bazaar;
    const listed = await bazaar.listResources({ type: "http", payTo: merchant });
    expect(listed.pagination).toEqual({ limit: 20, offset: 0, total: 1 });
    expect(listed.items).toMatchObject([
      {
        resource: `${shop.url}/weather`,
        type: "http",
        x402Version: 2,
        description: "Current weather for a city",
        mimeType: "application/json",
        accepts: [{ scheme: "exact", network: NETWORK, amount: "1000", payTo: merchant }],
      },
    ]);
  });

  it("delivers one payment once: the same PAYMENT-SIGNATURE sent 6 times at once gets one 200", async () => {
    const url = `${shop.url}/weather?city=Porto`;
    const unpaid = await fetch(url);
    const required = decodePaymentRequiredHeader(unpaid.headers.get("PAYMENT-REQUIRED") ?? "");
    const [buyer] = chain.devnet.buyers as [Devnet["buyers"][0]];
    const client = new x402Client().register(
      NETWORK,
      new ExactEvmClient(privateKeyToAccount(buyer.privateKey)),
    );
    const header = encodePaymentSignatureHeader(await client.createPaymentPayload(required));
    const usdc = usdcReader(chain.devnet.rpc);
    const before = await usdc.balanceOf(buyer.address);

    const responses = await Promise.all(
      Array.from({ length: 6 }, () => fetch(url, { headers: { "PAYMENT-SIGNATURE": header } })),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 402, 402, 402, 402, 402]);
    const refused = responses.find((r) => r.status === 402);
    // The SDK tells the refused ones why in its settlement receipt (PAYMENT-RESPONSE).
    const receipt = decodePaymentResponseHeader(refused?.headers.get("PAYMENT-RESPONSE") ?? "");
    expect(receipt).toMatchObject({ success: false, errorReason: "invalid_exact_evm_nonce_already_used" });
    await chain.miner.pending();
    expect(await usdc.balanceOf(buyer.address)).toBe(before - 1000n);

    // And again later: still refused.
    expect((await fetch(url, { headers: { "PAYMENT-SIGNATURE": header } })).status).toBe(402);
  });
});
