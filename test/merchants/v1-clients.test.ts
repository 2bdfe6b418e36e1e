/**
 * x402 v1 clients pay the merchants (issue 85): `x402-fetch` 1.2.0 and `x402-axios` 0.7.2, as their users call
 * them with a viem account, pay an exact route of each merchant (utility, social-data, inference) on the devnet
 * through the project's facilitator, are answered with `X-PAYMENT-RESPONSE`, and are charged the price once; the
 * same `X-PAYMENT` sent again, or twice at once, is delivered and charged once; the v1 body of the 402 says what
 * x402's v1 specification lists, beside the v2 header.
 */
import { decodePaymentRequiredHeader } from "@x402/core/http";
import axios from "axios";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withPaymentInterceptor } from "x402-axios";
import { decodeXPaymentResponse, wrapFetchWithPayment } from "x402-fetch";
import type { DevnetAccount } from "../../src/chain/devnet/index.ts";
import type { Listening } from "../../src/common/listen.ts";
import { type Facilitator, inProcessClient } from "../../src/facilitator/index.ts";
import type { Merchant } from "../../src/merchant-kit/endpoint.ts";
import { priceToAtomic } from "../../src/merchant-kit/price.ts";
import { inferenceMerchant, OFFLINE_SETTINGS } from "../../src/merchants/inference/catalogue.ts";
import { socialMerchant } from "../../src/merchants/social/catalogue.ts";
import { archiveSetup, importArchive } from "../../src/merchants/social/providers/archive/index.ts";
import { utilityMerchant } from "../../src/merchants/utility/catalogue.ts";
import { useDevnet } from "../helpers/chain.ts";
import { LEDGER_KIND, openTestDatabase } from "../helpers/db.ts";
import { devnetFacilitator } from "../helpers/facilitator.ts";
import { startMerchant } from "../helpers/merchant.ts";
import { newMerchant, usdcReader } from "../helpers/x402.ts";
import { complete } from "./social/providers/archive/helpers.ts";
import { HELLO, worldArchiveRecords } from "./social/world.ts";

const chain = useDevnet({ buyers: 4 });
let facilitator: Facilitator;
let usdc: ReturnType<typeof usdcReader>;
const closers: (() => Promise<void>)[] = [];

/** One cheap exact call of a merchant: how a client asks it, and what it costs (atomic USDC). */
interface Call {
  merchant: string;
  host: Listening;
  payTo: `0x${string}`;
  method: "GET" | "POST";
  /** Path and query. */
  path: string;
  body?: unknown;
  price: bigint;
}
const calls: Call[] = [];

beforeAll(async () => {
  usdc = usdcReader(chain.devnet.rpc);
  const ledger = await openTestDatabase(LEDGER_KIND);
  closers.push(ledger.close);
  facilitator = await devnetFacilitator(chain.devnet, ledger.db);
  const state = await openTestDatabase("pglite");
  closers.push(state.close);
  await importArchive(state.db, complete(worldArchiveRecords()));
  const serve = async (
    name: string,
    build: (host: { payTo: `0x${string}`; publicUrl: string }) => Merchant,
  ) => {
    const payTo = newMerchant();
    let merchant: Merchant | undefined;
    const host = await startMerchant(
      (url) => {
        merchant = build({ payTo, publicUrl: url });
        return merchant;
      },
      state.db,
      inProcessClient(facilitator),
      { rpcUrl: chain.devnet.rpc },
    );
    closers.push(() => host.close());
    const priceOf = (path: string) => {
      const endpoint = merchant?.endpoints.find((e) => e.path === path);
      if (!endpoint) throw new Error(`${name} has no ${path}`);
      return priceToAtomic(endpoint.price, 6);
    };
    return { host, payTo, priceOf };
  };
  const utility = await serve("utility", (host) => utilityMerchant(host));
  const social = await serve("social", (host) => socialMerchant(host, archiveSetup()));
  const inference = await serve("inference", (host) => inferenceMerchant(host, OFFLINE_SETTINGS));
  calls.push(
    {
      merchant: "utility",
      ...utility,
      method: "GET",
      path: "/api/calc?expr=6*7",
      price: utility.priceOf("/api/calc"),
    },
    {
      merchant: "social",
      ...social,
      method: "GET",
      path: `/tweets/by/id?id=${HELLO.id}`,
      price: social.priceOf("/tweets/by/id"),
    },
    {
      merchant: "inference",
      ...inference,
      method: "POST",
      path: "/v1/chat/completions/_t/t1",
      body: { messages: [{ role: "user", content: "Say hello." }], max_tokens: 16 },
      price: inference.priceOf("/v1/chat/completions/_t/t1"),
    },
  );
}, 120_000);
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await facilitator?.close();
});

const buyer = (i: number) => chain.devnet.buyers[i] as DevnetAccount;
const account = (i: number) => privateKeyToAccount(buyer(i).privateKey);

/** `fetch`'s arguments for `call`, as a v1 client's user writes them (plain headers: x402-fetch spreads them). */
function init(call: Call): RequestInit {
  return call.body === undefined
    ? { method: call.method }
    : {
        method: call.method,
        headers: { "content-type": "application/json" },
        body: JSON.stringify(call.body),
      };
}

/** What `b` spends on what `run` does, once the chain has every settlement. */
async function spent(b: DevnetAccount, run: () => Promise<void>): Promise<bigint> {
  const before = await usdc.balanceOf(b.address);
  await run();
  await chain.miner.pending();
  return before - (await usdc.balanceOf(b.address));
}

/** What a v1 settlement header says: x402's own decoder, as the clients' users read it. */
function v1Receipt(header: string | null | undefined) {
  expect(header, "X-PAYMENT-RESPONSE").toBeTruthy();
  return decodeXPaymentResponse(header as string) as {
    success: boolean;
    transaction: string;
    network: string;
    payer: string;
  };
}

describe("x402 v1 clients paying the merchants on the devnet", () => {
  it("x402-fetch 1.2.0 pays an exact route of each merchant, its price once, with X-PAYMENT-RESPONSE", async () => {
    const b = buyer(0);
    const pay = wrapFetchWithPayment(fetch, account(0));
    for (const call of calls) {
      const charged = await spent(b, async () => {
        const answer = await pay(`${call.host.url}${call.path}`, init(call));
        expect(answer.status, `${call.merchant}: ${await answer.clone().text()}`).toBe(200);
        expect(v1Receipt(answer.headers.get("x-payment-response"))).toMatchObject({
          success: true,
          network: "base",
          payer: b.address,
          transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        });
        // The v2 receipt stays beside it.
        expect(answer.headers.has("payment-response")).toBe(true);
      });
      expect(charged, call.merchant).toBe(call.price);
    }
  });

  it("x402-axios 0.7.2 pays an exact route of each merchant, its price once, with X-PAYMENT-RESPONSE", async () => {
    const b = buyer(1);
    const client = withPaymentInterceptor(axios.create(), account(1));
    for (const call of calls) {
      const charged = await spent(b, async () => {
        const answer = await client.request({
          url: `${call.host.url}${call.path}`,
          method: call.method,
          data: call.body,
        });
        expect(answer.status, call.merchant).toBe(200);
        expect(v1Receipt(answer.headers["x-payment-response"])).toMatchObject({
          success: true,
          network: "base",
          payer: b.address,
        });
      });
      expect(charged, call.merchant).toBe(call.price);
    }
  });

  it("delivers and charges one X-PAYMENT once: sent again, and twice at once", async () => {
    const b = buyer(2);
    for (const call of calls) {
      // The payment x402-fetch signs, kept and not sent: the test sends it.
      const signed: string[] = [];
      const keep: typeof fetch = async (input, requestInit) => {
        const header = (requestInit?.headers as Record<string, string> | undefined)?.["X-PAYMENT"];
        if (header === undefined) return fetch(input, requestInit);
        signed.push(header);
        return new Response(null, { status: 204 });
      };
      await wrapFetchWithPayment(keep, account(2))(`${call.host.url}${call.path}`, init(call));
      expect(signed, call.merchant).toHaveLength(1);
      const send = () => {
        const base = init(call);
        return fetch(`${call.host.url}${call.path}`, {
          ...base,
          headers: { ...(base.headers as Record<string, string>), "X-PAYMENT": signed[0] as string },
        });
      };
      const charged = await spent(b, async () => {
        const atOnce = await Promise.all([send(), send()]);
        const again = await send();
        const answers = [...atOnce, again];
        const statuses = answers.map((a) => a.status);
        expect(
          statuses.filter((s) => s === 200),
          `${call.merchant}: ${statuses}`,
        ).toHaveLength(1);
        for (const answer of answers) {
          if (answer.status === 200)
            expect(v1Receipt(answer.headers.get("x-payment-response")).success).toBe(true);
          else {
            expect(answer.status, call.merchant).toBeGreaterThanOrEqual(400);
            expect(answer.status, call.merchant).toBeLessThan(500);
            expect(answer.headers.has("x-payment-response"), call.merchant).toBe(false);
          }
        }
      });
      expect(charged, call.merchant).toBe(call.price);
    }
  });

  it("answers an unpaid request with the v1 body of x402's specification beside the v2 header", async () => {
    for (const call of calls) {
      const base = init(call);
      const answer = await fetch(`${call.host.url}${call.path}`, {
        ...base,
        headers: { ...(base.headers as Record<string, string>), accept: "application/json" },
      });
      expect(answer.status, call.merchant).toBe(402);
      const v2 = decodePaymentRequiredHeader(answer.headers.get("payment-required") as string);
      expect(v2.x402Version).toBe(2);
      const body = (await answer.json()) as {
        x402Version: number;
        error: string;
        accepts: Record<string, unknown>[];
      };
      expect(Object.keys(body).sort()).toEqual(["accepts", "error", "x402Version"]);
      expect(body.x402Version).toBe(1);
      expect(body.error).toBe("Payment required");
      const exact = v2.accepts.filter(
        (r) => r.scheme === "exact" && (r.extra?.assetTransferMethod ?? "eip3009") === "eip3009",
      );
      expect(body.accepts, call.merchant).toHaveLength(exact.length);
      expect(body.accepts.length).toBeGreaterThan(0);
      for (const [i, entry] of body.accepts.entries()) {
        expect(Object.keys(entry).sort()).toEqual(
          [
            "asset",
            "description",
            "extra",
            "maxAmountRequired",
            "maxTimeoutSeconds",
            "mimeType",
            "network",
            "outputSchema",
            "payTo",
            "resource",
            "scheme",
          ].sort(),
        );
        expect(entry).toMatchObject({
          scheme: "exact",
          network: "base",
          maxAmountRequired: call.price.toString(),
          resource: `${call.host.url}${call.path}`,
          description: v2.resource.description,
          mimeType: v2.resource.mimeType,
          payTo: exact[i]?.payTo,
          maxTimeoutSeconds: 300,
          asset: exact[i]?.asset,
          extra: { name: "USD Coin", version: "2" },
          outputSchema: { input: { type: "http", method: call.method, discoverable: true } },
        });
        expect((entry.outputSchema as { output: { type: string } }).output.type).toBe("object");
      }
    }
  });
});
