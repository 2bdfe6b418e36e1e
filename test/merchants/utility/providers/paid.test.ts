/**
 * The provider endpoints sold through the real x402 flow on a devnet, with fake upstreams on 127.0.0.1
 * (Anthropic-compatible language model, Brave search, OpenAI-compatible images): one paid happy path each,
 * a failed upstream and a missing provider that charge nothing, a bad input refused before any 402.
 */
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { createParser } from "eventsource-parser";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Devnet } from "../../../../src/chain/devnet/index.ts";
import type { Listening } from "../../../../src/common/listen.ts";
import { type Facilitator, inProcessClient } from "../../../../src/facilitator/index.ts";
import {
  PROVIDER_ENDPOINTS,
  providerEndpoints,
  providersFromSettings,
} from "../../../../src/merchants/utility/providers/index.ts";
import { readPng } from "../../../../src/merchants/utility/providers/png.ts";
import { useDevnet, walletHolding } from "../../../helpers/chain.ts";
import { LEDGER_KIND, openTestDatabase } from "../../../helpers/db.ts";
import { devnetFacilitator } from "../../../helpers/facilitator.ts";
import { startMerchant } from "../../../helpers/merchant.ts";
import { type FakeUpstream, startAnthropicUpstream } from "../../../helpers/upstreams/anthropic.ts";
import { bodyOf } from "../../../helpers/upstreams/json.ts";
import { type FakeOpenAI, startOpenAIUpstream } from "../../../helpers/upstreams/openai.ts";
import { type FakeSearch, startBrave } from "../../../helpers/upstreams/search.ts";
import { NETWORK, newMerchant, usdcReader } from "../../../helpers/x402.ts";

const chain = useDevnet({ buyers: 1 });
let facilitator: Facilitator;
let llm: FakeUpstream;
let images: FakeOpenAI;
let brave: FakeSearch;
let shop: Listening;
let bare: Listening;
const payTo = newMerchant();
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  const facilitatorDb = await openTestDatabase(LEDGER_KIND);
  closers.push(facilitatorDb.close);
  facilitator = await devnetFacilitator(chain.devnet, facilitatorDb.db);
  [llm, images, brave] = await Promise.all([
    startAnthropicUpstream("sk-ant-paid"),
    startOpenAIUpstream("sk-img-paid"),
    startBrave("brave-paid"),
  ]);
  // Wired as production wires it: from settings, as the environment gives them.
  const endpoints = providerEndpoints(
    providersFromSettings({
      language: { dialect: "anthropic", url: llm.base, key: "sk-ant-paid", model: "claude-test-1" },
      search: { backend: "brave", url: brave.base, key: "brave-paid" },
      image: { url: images.base, key: "sk-img-paid", model: "gpt-image-test" },
    }),
  );
  const merchantDb = await openTestDatabase("pglite");
  closers.push(merchantDb.close);
  shop = await startMerchant(
    (url) => ({ name: "providers", title: "Providers test", payTo, publicUrl: url, endpoints }),
    merchantDb.db,
    inProcessClient(facilitator),
    { rpcUrl: chain.devnet.rpc },
  );
  bare = await startMerchant(
    (url) => ({ name: "bare", title: "Unconfigured", payTo, publicUrl: url, endpoints: PROVIDER_ENDPOINTS }),
    merchantDb.db,
    inProcessClient(facilitator),
    { rpcUrl: chain.devnet.rpc },
  );
});
afterAll(async () => {
  await shop?.close();
  await bare?.close();
  await facilitator?.close();
  for (const upstream of [llm, images, brave]) await upstream?.close();
  for (const close of closers.reverse()) await close();
});

const buyer = () => chain.devnet.buyers[0] as Devnet["buyers"][0];
const buyerFetch = () =>
  wrapFetchWithPayment(
    fetch,
    new x402Client().register(NETWORK, new ExactEvmClient(privateKeyToAccount(buyer().privateKey))),
  );
const post = (base: string, path: string, body: unknown) =>
  buyerFetch()(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

/** Runs `work`, then checks the buyer paid exactly `price` (atomic USDC) to the merchant. */
async function expectCharged(price: bigint, work: () => Promise<void>) {
  const usdc = usdcReader(chain.devnet.rpc);
  const before = await usdc.balanceOf(buyer().address);
  const merchantBefore = await usdc.balanceOf(payTo);
  await work();
  await chain.miner.pending();
  expect(await usdc.balanceOf(buyer().address)).toBe(before - price);
  expect(await usdc.balanceOf(payTo)).toBe(merchantBefore + price);
}

const hello = { model: "any", max_tokens: 50, messages: [{ role: "user", content: "Hello" }] };

describe("provider endpoints, paid", () => {
  it("calls the model no more often than paid for: 10 calls at once from a wallet that can pay one", async () => {
    llm.behaviour = { kind: "reply", text: () => "Once." };
    const wallet = await walletHolding(chain.devnet, 10_000n);
    const pay = wrapFetchWithPayment(
      fetch,
      new x402Client().register(NETWORK, new ExactEvmClient(privateKeyToAccount(wallet.privateKey))),
    );
    const usdc = usdcReader(chain.devnet.rpc);
    const merchantBefore = await usdc.balanceOf(payTo);
    const calls = llm.requests.length;
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        pay(`${shop.url}/v1/messages`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(hello),
        }),
      ),
    );
    await chain.miner.pending();
    const paid = ((await usdc.balanceOf(payTo)) - merchantBefore) / 10_000n;
    expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
    expect(paid).toBe(1n);
    expect(llm.requests.length - calls).toBe(1);
    expect(responses.every((r) => r.status === 200 || r.status === 402)).toBe(true);
  });

  it("sells /v1/messages: the payment is the authentication", async () => {
    llm.behaviour = { kind: "reply", text: () => "Hi there." };
    await expectCharged(10_000n, async () => {
      const response = await post(shop.url, "/v1/messages", hello);
      expect(response.status).toBe(200);
      expect(response.headers.get("PAYMENT-RESPONSE")).toBeTruthy();
      expect(await response.json()).toMatchObject({
        type: "message",
        content: [{ type: "text", text: "Hi there." }],
      });
      expect(llm.requests.at(-1)?.headers["x-api-key"]).toBe("sk-ant-paid");
    });
  });

  it("sells /v1/messages as an event stream", async () => {
    llm.behaviour = { kind: "reply", text: () => "Streamed reply." };
    await expectCharged(10_000n, async () => {
      const response = await post(shop.url, "/v1/messages", { ...hello, stream: true });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
      const names: string[] = [];
      let text = "";
      const parser = createParser({
        onEvent: (e) => {
          names.push(e.event ?? "");
          const data = JSON.parse(e.data);
          if (data.type === "content_block_delta") text += data.delta.text;
        },
      });
      parser.feed(await response.text());
      expect(names[0]).toBe("message_start");
      expect(names.at(-1)).toBe("message_stop");
      expect(text).toBe("Streamed reply.");
    });
  });

  it("sells /api/search with an answer from the model", async () => {
    llm.behaviour = { kind: "reply", text: () => "x402 charges per request [1]." };
    await expectCharged(10_000n, async () => {
      const response = await post(shop.url, "/api/search", { query: "x402", max_results: 2 });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({
        answer: "x402 charges per request [1].",
        answer_method: "model",
        backend: "brave",
        results: [{ url: "https://www.x402.org/", score: 1 }, { url: "https://github.com/coinbase/x402" }],
      });
    });
  });

  it("sells /api/translate-text", async () => {
    llm.behaviour = {
      kind: "reply",
      text: () => JSON.stringify({ source_language: "en", translation: "# Hallo\n\n- **Welt**" }),
    };
    await expectCharged(10_000n, async () => {
      const response = await post(shop.url, "/api/translate-text", {
        text: "# Hello\n\n- **world**",
        target: "German",
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        translation: "# Hallo\n\n- **Welt**",
        source_language: "en",
        target_language: "de",
        target_language_name: "German",
      });
    });
  });

  it("sells /api/generate-image as JSON and as raw bytes", async () => {
    await expectCharged(70_000n, async () => {
      const response = await post(shop.url, "/api/generate-image", {
        prompt: "a lighthouse",
        aspect_ratio: "3:2",
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { image: string; width: number };
      expect(readPng(Buffer.from(body.image, "base64"))).toEqual({ width: 24, height: 16 });
    });
    await expectCharged(70_000n, async () => {
      const response = await post(shop.url, "/api/generate-image?raw=1", { prompt: "a lighthouse" });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("image/png");
      expect(readPng(Buffer.from(await response.arrayBuffer()))).toEqual({ width: 16, height: 16 });
      expect(bodyOf(images.requests.at(-1) as never).size).toBe("1024x1024");
    });
  });

  it("charges nothing when the upstream fails", async () => {
    await expectCharged(0n, async () => {
      llm.behaviour = { kind: "status", status: 500 };
      let response = await post(shop.url, "/v1/messages", hello);
      expect(response.status).toBe(502);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("upstream_failed");
      llm.behaviour = { kind: "break-stream" };
      response = await post(shop.url, "/v1/messages", { ...hello, stream: true });
      expect(response.status).toBe(502);
      images.image = {
        kind: "bytes",
        bytes: Buffer.from("not a png, just text pretending to be an image file"),
      };
      response = await post(shop.url, "/api/generate-image", { prompt: "x" });
      expect(response.status).toBe(502);
      images.image = { kind: "png" };
    });
  });

  it("charges nothing when no provider is configured: 503 provider_not_configured", async () => {
    await expectCharged(0n, async () => {
      for (const [path, body] of [
        ["/v1/messages", hello],
        ["/api/search", { query: "x402" }],
        ["/api/translate-text", { text: "Hello", target: "fr" }],
        ["/api/generate-image", { prompt: "x" }],
      ] as const) {
        const response = await post(bare.url, path, body);
        expect(response.status, path).toBe(503);
        expect(((await response.json()) as { error: { code: string } }).error.code, path).toBe(
          "provider_not_configured",
        );
      }
    });
  });

  it("refuses bad inputs with a 400 before asking for payment", async () => {
    await expectCharged(0n, async () => {
      for (const [path, body] of [
        ["/v1/messages", { ...hello, max_tokens: 100_000 }],
        ["/api/search", { query: "x", max_results: 11 }],
        ["/api/translate-text", { text: "a".repeat(8001), target: "fr" }],
        ["/api/generate-image", { prompt: "" }],
      ] as const) {
        const plain = await fetch(`${shop.url}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        expect(plain.status, path).toBe(400);
        expect((await post(shop.url, path, body)).status, path).toBe(400);
      }
    });
  });
});
