/**
 * The inference host paid for real: the stock `@x402/fetch` client with its exact and upto schemes, the
 * project's facilitator on a devnet (Permit2 and the upto proxy in place), the offline engine and a fake
 * OpenAI upstream on 127.0.0.1. A tier costs its listed price; its /upto variant costs the tokens it used at
 * the tier's rates, never the maximum; a refusal costs nothing; buyers at once each pay their own; a call
 * the upstream fails is never charged, and its payment never buys the upstream's work again.
 */
import { decodePaymentResponseHeader } from "@x402/core/http";
import { wrapFetchWithPayment } from "@x402/fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Devnet, type DevnetAccount, startDevnet } from "../../../src/chain/devnet/index.ts";
import type { Listening } from "../../../src/common/listen.ts";
import { loadConfig } from "../../../src/config/config.ts";
import { type Facilitator, inProcessClient } from "../../../src/facilitator/index.ts";
import { UNPAID_LIMIT } from "../../../src/merchant-kit/payments/ledger.ts";
import { inferenceMerchant, OFFLINE_SETTINGS } from "../../../src/merchants/inference/catalogue.ts";
import { meteredAmount } from "../../../src/merchants/inference/metering.ts";
import { defaultRates, TIERS } from "../../../src/merchants/inference/tiers.ts";
import { startMiner, walletHolding } from "../../helpers/chain.ts";
import { openTestDatabase } from "../../helpers/db.ts";
import { devnetFacilitator } from "../../helpers/facilitator.ts";
import { startMerchant } from "../../helpers/merchant.ts";
import { type FakeOpenAI, startOpenAIUpstream } from "../../helpers/upstreams/openai.ts";
import { newMerchant, usdcReader, x402ClientOf } from "../../helpers/x402.ts";

let devnet: Devnet;
let miner: ReturnType<typeof startMiner>;
let facilitator: Facilitator;
let host: Listening;
/** The same merchant with tier 4 served by the fake upstream, and no engine for the other routes. */
let upstreamHost: Listening;
let upstream: FakeOpenAI;
let usdc: ReturnType<typeof usdcReader>;
const payTo = newMerchant();
const KEY = "sk-test-paid";
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  devnet = await startDevnet({ port: 0, buyers: 3, blockTime: 0 });
  miner = startMiner(devnet);
  usdc = usdcReader(devnet.rpc);
  const ledger = await openTestDatabase("pglite");
  closers.push(ledger.close);
  facilitator = await devnetFacilitator(devnet, ledger.db);
  const state = await openTestDatabase("pglite");
  closers.push(state.close);
  host = await startMerchant(
    (url) => inferenceMerchant({ payTo, publicUrl: url }, OFFLINE_SETTINGS),
    state.db,
    inProcessClient(facilitator),
    { rpcUrl: devnet.rpc },
  );
  closers.push(() => host.close());
  upstream = await startOpenAIUpstream(KEY, "t4-model");
  closers.push(() => upstream.close());
  const served = loadConfig({
    env: {
      X402M_INFERENCE_LLM_URL: upstream.base,
      X402M_INFERENCE_LLM_KEY: KEY,
      X402M_INFERENCE_TIER_4_MODEL: "t4-model",
      X402M_INFERENCE_TIER_4_RATES: "5,20",
    },
  }).inference;
  upstreamHost = await startMerchant(
    (url) => inferenceMerchant({ payTo, publicUrl: url }, served),
    state.db,
    inProcessClient(facilitator),
    { rpcUrl: devnet.rpc },
  );
  closers.push(() => upstreamHost.close());
}, 120_000);
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await facilitator?.close();
  await miner?.stop();
  await devnet?.stop();
});

const paying = (buyer: DevnetAccount) => wrapFetchWithPayment(fetch, x402ClientOf(buyer));
const chat = (content: string, extra: Record<string, unknown> = {}) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ messages: [{ role: "user", content }], max_tokens: 16, ...extra }),
});
const tier = (n: number) => TIERS[n - 1] as (typeof TIERS)[number];

describe("the inference host, paid through x402 on the devnet", () => {
  it("charges a tier its listed price, and its /upto variant the tokens used at the tier's rates", async () => {
    const buyer = devnet.buyers[0] as DevnetAccount;
    const pay = paying(buyer);
    let before = await usdc.balanceOf(buyer.address);
    const exact = await pay(`${host.url}/v1/chat/completions/_t/t2`, chat("Hello there"));
    expect(exact.status, await exact.clone().text()).toBe(200);
    expect((await exact.json()).object).toBe("chat.completion");
    expect(before - (await usdc.balanceOf(buyer.address))).toBe(2237n); // 0.002237

    before = await usdc.balanceOf(buyer.address);
    const metered = await pay(`${host.url}/v1/chat/completions/_t/t2/upto`, chat("Hello there"));
    expect(metered.status, await metered.clone().text()).toBe(200);
    const reply = (await metered.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    const cost = meteredAmount(
      { promptTokens: reply.usage.prompt_tokens, completionTokens: reply.usage.completion_tokens },
      defaultRates(tier(2)),
      15_187n,
    );
    expect(cost).toBeGreaterThan(0n);
    expect(cost).toBeLessThan(15_187n);
    expect(decodePaymentResponseHeader(metered.headers.get("payment-response") as string)).toMatchObject({
      success: true,
      amount: cost.toString(),
    });
    expect(before - (await usdc.balanceOf(buyer.address))).toBe(cost);
  });

  it("streams a paid /upto reply as server-sent events, metered the same way", async () => {
    const buyer = devnet.buyers[1] as DevnetAccount;
    const before = await usdc.balanceOf(buyer.address);
    const answer = await paying(buyer)(
      `${host.url}/v1/chat/completions/_t/t5/upto`,
      chat("Stream it", { max_tokens: 512, stream: true, stream_options: { include_usage: true } }),
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const text = await answer.text();
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    const charged = before - (await usdc.balanceOf(buyer.address));
    expect(charged).toBeGreaterThan(0n);
    expect(charged).toBeLessThan(43_205n);
  });

  it("refuses a tier's constraint before payment, and charges buyers at once each their own call", async () => {
    const buyers = devnet.buyers.slice(0, 3) as DevnetAccount[];
    const refused = await paying(buyers[0] as DevnetAccount)(
      `${host.url}/v1/chat/completions/_t/t5/upto`,
      chat("Too short a budget", { max_tokens: 16 }),
    );
    expect(refused.status).toBe(400);
    expect((await refused.json()).error).toMatchObject({
      type: "invalid_request_error",
      param: "max_tokens",
    });

    const before = await Promise.all(buyers.map((b) => usdc.balanceOf(b.address)));
    const shopBefore = await usdc.balanceOf(payTo);
    const answers = await Promise.all(
      buyers.map((b, i) =>
        paying(b)(`${host.url}/v1/chat/completions/_t/t3/upto`, chat("x".repeat(20 * (i + 1)))),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const charged = await Promise.all(
      buyers.map(async (b, i) => (before[i] as bigint) - (await usdc.balanceOf(b.address))),
    );
    // Longer prompts cost more; the host received exactly what the buyers paid.
    expect(charged[0]).toBeLessThan(charged[2] as bigint);
    expect((await usdc.balanceOf(payTo)) - shopBefore).toBe(charged.reduce((a, b) => a + b, 0n));
  });
});

describe("a call the upstream fails", () => {
  it("is never charged, spends its payment, and counts against its wallet alone until it is refused before any work", async () => {
    const t4 = `${upstreamHost.url}/v1/chat/completions/_t/t4`;
    const wallet = await walletHolding(devnet, 2n * 5_214n);
    const signatures: string[] = [];
    const recording: typeof fetch = (input, init) => {
      const signature = (input as Request).headers?.get("PAYMENT-SIGNATURE");
      if (signature) signatures.push(signature);
      return fetch(input, init);
    };
    const pay = wrapFetchWithPayment(recording, x402ClientOf(wallet));
    const upstreamCalls = () => upstream.requests.length;
    upstream.behaviour = { kind: "status", status: 500 };

    const failed = await pay(t4, chat("Fail me"));
    expect(failed.status).toBe(502);
    expect((await failed.json()).error.code).toBe("upstream_failed");
    // The same signed payment, sent again several times at once: the upstream is not asked again.
    let before = upstreamCalls();
    const replays = await Promise.all(
      [1, 2, 3, 4].map(() =>
        fetch(t4, {
          ...chat("Fail me"),
          headers: { ...chat("").headers, "PAYMENT-SIGNATURE": signatures.at(-1) as string },
        }),
      ),
    );
    expect(replays.map((r) => r.status)).toEqual([409, 409, 409, 409]);
    expect(upstreamCalls()).toBe(before);

    for (let i = 1; i < UNPAID_LIMIT; i++) expect((await pay(t4, chat("Fail me"))).status).toBe(502);
    // Its next call is refused before the upstream is asked, even once the upstream works again.
    upstream.behaviour = { kind: "reply", text: () => "Hello from upstream." };
    before = upstreamCalls();
    const refused = await pay(t4, chat("Let me in"));
    expect(refused.status).toBe(429);
    expect((await refused.json()).error).toMatchObject({
      code: "too_many_unpaid_calls",
      type: "rate_limit_error",
    });
    expect(upstreamCalls()).toBe(before);
    await miner.pending();
    expect(await usdc.balanceOf(wallet.address)).toBe(2n * 5_214n);

    // Another wallet is served and charged as before.
    const other = devnet.buyers[2] as DevnetAccount;
    const otherBefore = await usdc.balanceOf(other.address);
    const served = await paying(other)(t4, chat("Hello"));
    expect(served.status).toBe(200);
    expect(upstreamCalls()).toBe(before + 1);
    expect(otherBefore - (await usdc.balanceOf(other.address))).toBe(5_214n);
  });
});

describe("a route no engine serves", () => {
  it("answers 503 before the 402, so a paying client signs nothing and pays nothing; /v1/models says so", async () => {
    const buyer = devnet.buyers[2] as DevnetAccount;
    const before = await usdc.balanceOf(buyer.address);
    const answer = await paying(buyer)(`${upstreamHost.url}/v1/chat/completions/_t/t2/upto`, chat("Anyone?"));
    expect(answer.status).toBe(503);
    expect(answer.headers.get("payment-required")).toBeNull();
    expect(await answer.json()).toEqual({
      error: {
        message: expect.stringMatching(/X402M_INFERENCE_ENGINE=offline/),
        type: "server_error",
        param: null,
        code: "engine_not_configured",
      },
    });
    expect(await miner.pending()).toBe(0);
    expect(await usdc.balanceOf(buyer.address)).toBe(before);
    const models = (await (await fetch(`${upstreamHost.url}/v1/models`)).json()) as {
      data: { alias: string; engine: string | null; available: boolean }[];
    };
    const byAlias = Object.fromEntries(models.data.map((m) => [m.alias, [m.engine, m.available]]));
    expect(byAlias).toMatchObject({ t2: [null, false], t4: ["upstream", true] });
  });
});
