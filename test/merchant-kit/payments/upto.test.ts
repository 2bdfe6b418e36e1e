/**
 * upto endpoints through the kit, paid by the stock `@x402/fetch` client with its upto scheme, settled by
 * the project's facilitator on the devnet's Permit2 and upto proxy: each call pays what its handler
 * metered, never more than it signed for; refusals are never charged and come in the endpoint's dialect;
 * one payment runs once however often it is sent; a wallet holding one call's maximum gets one call.
 */
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import { wrapFetchWithPayment } from "@x402/fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { DevnetAccount } from "../../../src/chain/devnet/index.ts";
import { UpstreamError } from "../../../src/common/errors.ts";
import type { Listening } from "../../../src/common/listen.ts";
import { type Facilitator, inProcessClient } from "../../../src/facilitator/index.ts";
import { defineEndpoint } from "../../../src/merchant-kit/endpoint.ts";
import { permit2WalletHolding, useDevnet } from "../../helpers/chain.ts";
import { DATABASE_KINDS, LEDGER_KIND, openTestDatabase } from "../../helpers/db.ts";
import { devnetFacilitator } from "../../helpers/facilitator.ts";
import { startMerchant, testMerchant } from "../../helpers/merchant.ts";
import { newMerchant, usdcReader, x402ClientOf } from "../../helpers/x402.ts";

/** The most a call may cost: $0.01, 10,000 atomic units. */
const MAX = 10_000n;
let ran = 0;

/** Meters what the caller asks it to (`cost`), or fails, or forgets to meter. */
const metered = defineEndpoint({
  method: "POST",
  path: "/v1/metered",
  price: "0.01",
  scheme: "upto",
  errorDialect: "openai",
  // No declared effects: a metered endpoint's funds are reserved all the same.
  description: "Charges what the call cost, up to $0.01.",
  input: z.object({
    cost: z.number().int().min(0),
    fail: z.boolean().default(false),
    forget: z.boolean().default(false),
    delay: z.number().int().max(2000).default(0),
  }),
  output: z.object({ cost: z.number() }),
  example: { input: { cost: 10 }, output: { cost: 10 } },
  handler: async ({ cost, fail, forget, delay }, ctx) => {
    ran++;
    await new Promise((resolve) => setTimeout(resolve, delay));
    if (fail) throw new UpstreamError("the model is down");
    if (!forget) ctx.meter?.(BigInt(cost));
    return { cost };
  },
});

const chain = useDevnet({ buyers: 4 });
let facilitator: Facilitator;
let usdc: ReturnType<typeof usdcReader>;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  usdc = usdcReader(chain.devnet.rpc);
  const opened = await openTestDatabase(LEDGER_KIND);
  closers.push(opened.close);
  facilitator = await devnetFacilitator(chain.devnet, opened.db);
});
afterAll(async () => {
  await facilitator?.close();
  for (const close of closers.reverse()) await close();
});

const client = x402ClientOf;
const post = (body: unknown) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

describe.each(DATABASE_KINDS)("upto endpoints, merchant state on %s", (kind) => {
  let shop: Listening;
  const payTo = newMerchant();
  let url: string;

  beforeAll(async () => {
    const opened = await openTestDatabase(kind);
    closers.push(opened.close);
    shop = await startMerchant(
      (u) => ({
        ...testMerchant(payTo, u, [metered]),
        free: [
          {
            method: "GET",
            path: "/v1/prices",
            description: "What a call may cost.",
            example: { max: "0.01" },
            handler: () => Response.json({ max: "0.01" }),
          },
        ],
      }),
      opened.db,
      inProcessClient(facilitator),
      { rpcUrl: chain.devnet.rpc },
    );
    closers.push(() => shop.close());
    url = `${shop.url}/v1/metered`;
  });

  it("offers the maximum under upto, naming the facilitator, and charges only what was metered", async () => {
    const buyer = chain.devnet.buyers[0] as DevnetAccount;
    const unpaid = await fetch(url, post({ cost: 1234 }));
    expect(unpaid.status).toBe(402);
    const required = decodePaymentRequiredHeader(unpaid.headers.get("payment-required") as string);
    expect(required.accepts).toMatchObject([
      { scheme: "upto", amount: MAX.toString(), payTo, extra: { facilitatorAddress: facilitator.address } },
    ]);

    const [buyerBefore, shopBefore] = [await usdc.balanceOf(buyer.address), await usdc.balanceOf(payTo)];
    const paid = await wrapFetchWithPayment(fetch, client(buyer))(url, post({ cost: 1234 }));
    expect(paid.status, await paid.clone().text()).toBe(200);
    expect(await paid.json()).toEqual({ cost: 1234 });
    const receipt = decodePaymentResponseHeader(paid.headers.get("payment-response") as string);
    expect(receipt).toMatchObject({ success: true, amount: "1234" });
    expect(await usdc.balanceOf(buyer.address)).toBe(buyerBefore - 1234n);
    expect(await usdc.balanceOf(payTo)).toBe(shopBefore + 1234n);
  });

  it("documents the maximum and the metering, and serves its free routes without payment", async () => {
    const doc = await (await fetch(`${shop.url}/openapi.json`)).json();
    const op = doc.paths["/v1/metered"].post;
    expect(op["x-payment-info"]).toMatchObject({
      // Metered: the Agentcash discovery profile's dynamic price, from nothing to the maximum.
      price: { mode: "dynamic", currency: "USD", min: "0", max: "0.01" },
      protocols: [{ x402: { scheme: "upto", amount: "10000" } }],
    });
    expect(op.description).toContain("upto scheme");
    expect(op.responses["400"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/OpenAiError",
    });
    expect(doc.components.schemas.OpenAiError).toBeDefined();
    // Metered calls are guarded: a wallet whose calls go unpaid is refused, and the document says so.
    expect(op.responses["429"].description).toContain("too_many_unpaid_calls");
    expect(doc.paths["/v1/prices"].get.responses?.["429"]).toBeUndefined();
    expect(doc.paths["/v1/prices"].get["x-payment-info"]).toBeUndefined();
    const free = await fetch(`${shop.url}/v1/prices`);
    expect(free.status).toBe(200);
    expect(await free.json()).toEqual({ max: "0.01" });
    const page = await (await fetch(`${shop.url}/docs`)).text();
    expect(page).toContain("up to $0.01 per call");
  });

  it("charges nothing for a call metered at 0", async () => {
    const buyer = chain.devnet.buyers[1] as DevnetAccount;
    const before = await usdc.balanceOf(buyer.address);
    const paid = await wrapFetchWithPayment(fetch, client(buyer))(url, post({ cost: 0 }));
    expect(paid.status).toBe(200);
    expect(decodePaymentResponseHeader(paid.headers.get("payment-response") as string)).toMatchObject({
      success: true,
      transaction: "",
    });
    expect(await usdc.balanceOf(buyer.address)).toBe(before);
  });

  it("charges each of several buyers at once what its own call cost", async () => {
    const buyers = chain.devnet.buyers.slice(0, 4) as DevnetAccount[];
    const before = await Promise.all(buyers.map((b) => usdc.balanceOf(b.address)));
    const shopBefore = await usdc.balanceOf(payTo);
    const costs = [11n, 222n, 3333n, 4444n];
    const answers = await Promise.all(
      buyers.map((b, i) =>
        wrapFetchWithPayment(fetch, client(b))(url, post({ cost: Number(costs[i]), delay: 50 })),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    const after = await Promise.all(buyers.map((b) => usdc.balanceOf(b.address)));
    expect(after.map((a, i) => (before[i] as bigint) - a)).toEqual(costs);
    expect(await usdc.balanceOf(payTo)).toBe(shopBefore + costs.reduce((a, b) => a + b, 0n));
  });

  it("runs one payment sent six times at once once, and charges it once", async () => {
    const buyer = chain.devnet.buyers[2] as DevnetAccount;
    const unpaid = await fetch(url, post({ cost: 500 }));
    const required = decodePaymentRequiredHeader(unpaid.headers.get("payment-required") as string);
    const payload = await client(buyer).createPaymentPayload(required);
    const header = encodePaymentSignatureHeader(payload);
    const before = await usdc.balanceOf(buyer.address);
    const ranBefore = ran;
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", "payment-signature": header },
          body: JSON.stringify({ cost: 500, delay: 100 }),
        }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.every((s) => s === 200 || s === 402 || s === 409)).toBe(true);
    expect(ran - ranBefore).toBe(1);
    expect(await usdc.balanceOf(buyer.address)).toBe(before - 500n);
  });

  it("refuses before payment, and after it without charging, in OpenAI's error shape", async () => {
    const buyer = chain.devnet.buyers[3] as DevnetAccount;
    const bad = await fetch(url, post({ cost: -1 }));
    expect(bad.status).toBe(400);
    expect(bad.headers.get("payment-required")).toBeNull();
    expect(await bad.json()).toEqual({
      error: {
        message: expect.stringContaining("cost"),
        type: "invalid_request_error",
        param: "cost",
        code: "invalid_input",
      },
    });

    const before = await usdc.balanceOf(buyer.address);
    const pay = wrapFetchWithPayment(fetch, client(buyer));
    const failed = await pay(url, post({ cost: 10, fail: true }));
    expect(failed.status).toBe(502);
    expect(await failed.json()).toEqual({
      error: { message: "the model is down", type: "server_error", param: null, code: "upstream_failed" },
    });
    // A handler that answers without metering is a bug: refused, not charged.
    const forgot = await pay(url, post({ cost: 10, forget: true }));
    expect(forgot.status).toBe(500);
    expect((await forgot.json()).error).toMatchObject({ type: "server_error", code: "internal" });
    expect(await usdc.balanceOf(buyer.address)).toBe(before);
  });

  it("runs one call of five at once for a wallet holding one call's maximum", async () => {
    const wallet = await permit2WalletHolding(chain.devnet, MAX);
    const ranBefore = ran;
    const pay = wrapFetchWithPayment(fetch, client(wallet));
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => pay(url, post({ cost: 10, delay: 200 }))),
    );
    const statuses = answers.map((a) => a.status);
    expect(
      statuses.filter((s) => s === 200),
      JSON.stringify(statuses),
    ).toHaveLength(1);
    expect(ran - ranBefore).toBe(1);
    expect(await usdc.balanceOf(wallet.address)).toBe(MAX - 10n);
  });
});
