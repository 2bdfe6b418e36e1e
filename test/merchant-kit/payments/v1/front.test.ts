/**
 * The v1 front of a paid route (payments/v1/front.ts) on a host paid on the devnet through the project's
 * facilitator: what an `X-PAYMENT` that is not a payment, pays something else, or does not verify is answered,
 * never charged and never run; what a route v1 cannot pay says; and what stays v2's: a v2 client's payment and
 * refusals, a browser's paywall page, CORS for both.
 */
import { encodePaymentSignatureHeader } from "@x402/core/http";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPaymentHeader } from "x402/client";
import type { PaymentRequirements as V1Requirements } from "x402/types";
import { z } from "zod";
import { defineEndpoint } from "../../../../src/merchant-kit/endpoint.ts";
import { walletHolding } from "../../../helpers/chain.ts";
import { echo, runs } from "../../../helpers/merchant.ts";
import { type PaidShop, startPaidShop } from "../../../helpers/paid.ts";

/** A route paid with upto alone: nothing v1 can pay. */
const metered = defineEndpoint({
  method: "GET",
  path: "/api/metered",
  price: "0.01",
  scheme: "upto",
  description: "Costs what it measures, at most its price.",
  input: z.object({}),
  output: z.object({ n: z.number() }),
  example: { input: {}, output: { n: 1 } },
  handler: async (_input, ctx) => {
    ctx.meter?.(1n);
    return { n: 1 };
  },
});

/** A route that requires a payment id, which v1 payments cannot carry. */
const withId = { ...echo, path: "/api/echo-id" as const, paymentId: "required" as const };

let shop: PaidShop;
beforeAll(async () => {
  shop = await startPaidShop([echo, metered, withId], { buyers: 2 });
}, 120_000);
afterAll(async () => {
  await shop?.close();
});

const ECHO = "/api/echo?text=hi";
/** The echo's price, $0.002, in USDC's atomic units. */
const ECHO_PRICE = 2_000n;

/** The unpaid 402's v1 body of `path`. */
async function v1Body(path: string) {
  const answer = await fetch(`${shop.url}${path}`, { headers: { accept: "application/json" } });
  expect(answer.status).toBe(402);
  return (await answer.json()) as { x402Version: number; error: string; accepts: V1Requirements[] };
}

/** A v1 payment of the route's first v1 requirement, signed by buyer `i` as x402's v1 client signs it. */
async function signedV1(path: string, i = 0): Promise<string> {
  const [first] = (await v1Body(path)).accepts;
  return createPaymentHeader(privateKeyToAccount(shop.buyer(i).privateKey), 1, first as V1Requirements);
}

/** `header` decoded, changed by `change`, encoded again. */
function changed(
  header: string,
  change: (payment: { network: string; payload: { authorization: Record<string, string> } }) => void,
) {
  const payment = JSON.parse(Buffer.from(header, "base64").toString("utf8"));
  change(payment);
  return Buffer.from(JSON.stringify(payment)).toString("base64");
}

const send = (path: string, headers: Record<string, string>) => fetch(`${shop.url}${path}`, { headers });

/** What `run` costs buyer `i`, and how often it runs the echo's handler. */
async function cost(run: () => Promise<void>, i = 0) {
  const before = { balance: await shop.balanceOf(shop.buyer(i).address), runs: runs.get("/api/echo") ?? 0 };
  await run();
  expect(await shop.pending()).toBe(0);
  return {
    charged: before.balance - (await shop.balanceOf(shop.buyer(i).address)),
    ran: (runs.get("/api/echo") ?? 0) - before.runs,
  };
}

describe("a paid route's v1 front", () => {
  it("refuses an X-PAYMENT that is not an x402 v1 payment with 400, in the kit's shape", async () => {
    const v2Shaped = encodePaymentSignatureHeader({
      x402Version: 2,
      accepted: {} as never,
      payload: {},
    });
    const spent = await cost(async () => {
      for (const header of ["%%%", Buffer.from("{").toString("base64"), v2Shaped]) {
        const answer = await send(ECHO, { "X-PAYMENT": header });
        expect(answer.status, header).toBe(400);
        const { error } = (await answer.json()) as { error: { code: string; message: string } };
        expect(error.code).toBe("invalid_payment_signature");
        expect(error.message).toMatch(/^the X-PAYMENT header is not an x402 v1 payment/);
      }
    });
    expect(spent).toEqual({ charged: 0n, ran: 0 });
  });

  it("refuses a v1 payment of another amount or network with 402 no_matching_requirements, PAYMENT-REQUIRED beside", async () => {
    const signed = await signedV1(ECHO);
    const spent = await cost(async () => {
      for (const other of [
        changed(signed, (p) => {
          p.payload.authorization.value = "1";
        }),
        changed(signed, (p) => {
          p.network = "polygon";
        }),
      ]) {
        const answer = await send(ECHO, { "X-PAYMENT": other });
        expect(answer.status).toBe(402);
        expect(((await answer.json()) as { error: { code: string } }).error.code).toBe(
          "no_matching_requirements",
        );
        expect(answer.headers.has("payment-required")).toBe(true);
      }
    });
    expect(spent).toEqual({ charged: 0n, ran: 0 });
  });

  it("answers a v1 payment the facilitator refuses in v1's body, its reason as the error, not charged", async () => {
    const signed = await signedV1(ECHO);
    // Another nonce than the one signed: the signature no longer verifies.
    const forged = changed(signed, (p) => {
      p.payload.authorization.nonce = `0x${"0".repeat(64)}`;
    });
    const spent = await cost(async () => {
      const answer = await send(ECHO, { "X-PAYMENT": forged });
      expect(answer.status).toBe(402);
      const body = (await answer.json()) as { x402Version: number; error: string; accepts: unknown[] };
      expect(body.x402Version).toBe(1);
      expect(body.error).toMatch(/signature/i);
      expect(body.accepts).toHaveLength(1);
      expect(answer.headers.has("x-payment-response")).toBe(false);
    });
    expect(spent).toEqual({ charged: 0n, ran: 0 });
  });

  it("charges one v1 payment sent twenty times at once once, and answers it once", async () => {
    const signed = await signedV1(ECHO);
    const spent = await cost(async () => {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => send(ECHO, { "X-PAYMENT": signed }).then((a) => a.status)),
      );
      expect(answers.filter((status) => status === 200)).toHaveLength(1);
      expect(answers.filter((status) => status !== 200 && status !== 402 && status !== 409)).toEqual([]);
    });
    expect(spent.charged).toBe(ECHO_PRICE);
  });

  it("delivers one of two v1 payments at once from a wallet that can afford one, and charges only that one", async () => {
    const wallet = await walletHolding(shop.devnet, ECHO_PRICE, 1);
    const [first] = (await v1Body(ECHO)).accepts;
    const account = privateKeyToAccount(wallet.privateKey);
    // Two payments, each of the whole balance (their own nonces): either alone could pay.
    const headers = await Promise.all(
      [1, 2].map(() => createPaymentHeader(account, 1, first as V1Requirements)),
    );
    const answers = await Promise.all(
      headers.map(async (header) => {
        const answer = await send(ECHO, { "X-PAYMENT": header });
        return { status: answer.status, body: await answer.text() };
      }),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 402]);
    const refused = answers.find((a) => a.status === 402);
    // In v1's body, as a v1 client reads a failed settlement: the reason, and what to pay.
    const body = JSON.parse(refused?.body ?? "{}") as {
      x402Version: number;
      error: string;
      accepts: unknown[];
    };
    expect(body).toMatchObject({ x402Version: 1, error: "insufficient_funds" });
    expect(body.accepts.length).toBeGreaterThan(0);
    expect(refused?.body).not.toContain('"text":"hi"');
    expect(await shop.pending()).toBe(0);
    expect(await shop.balanceOf(wallet.address)).toBe(0n);
  });

  it("says in its v1 body why a route offers v1 nothing: upto alone, or a payment id required", async () => {
    const upto = await v1Body(metered.path);
    expect(upto).toMatchObject({ x402Version: 1, accepts: [] });
    expect(upto.error).toMatch(/^x402 v1 cannot pay this route: it takes upto on eip155:8453/);
    const id = await v1Body("/api/echo-id?text=hi");
    expect(id).toMatchObject({ x402Version: 1, accepts: [] });
    expect(id.error).toContain("requires a payment id");
  });

  it("leaves v2 as it was: a v2 client pays, a v2 refusal's body is {}, a browser gets its page", async () => {
    const paid = await shop.buyerFetch(1)(`${shop.url}${ECHO}`);
    expect(paid.status).toBe(200);
    expect(paid.headers.has("payment-response")).toBe(true);
    expect(paid.headers.has("x-payment-response")).toBe(false);

    const refused = await send(ECHO, {
      "PAYMENT-SIGNATURE": encodePaymentSignatureHeader({
        x402Version: 2,
        accepted: {} as never,
        payload: {},
      }),
    });
    expect(refused.status).toBe(402);
    expect(await refused.text()).toBe("{}");

    const browser = await send(ECHO, { accept: "text/html", "user-agent": "Mozilla/5.0" });
    expect(browser.status).toBe(402);
    expect(browser.headers.get("content-type")).toMatch(/^text\/html/);
  });

  it("lets a browser's v1 client pay: its headers allowed, X-PAYMENT-RESPONSE exposed", async () => {
    const preflight = await fetch(`${shop.url}${ECHO}`, {
      method: "OPTIONS",
      headers: {
        origin: "https://buyer.example",
        "access-control-request-method": "GET",
        "access-control-request-headers": "x-payment,access-control-expose-headers",
      },
    });
    const allowed = (preflight.headers.get("access-control-allow-headers") ?? "").toLowerCase();
    expect(allowed).toContain("x-payment");
    expect(allowed).toContain("access-control-expose-headers");
    const unpaid = await send(ECHO, { origin: "https://buyer.example" });
    expect(unpaid.headers.get("access-control-expose-headers")).toContain("X-PAYMENT-RESPONSE");
  });
});
