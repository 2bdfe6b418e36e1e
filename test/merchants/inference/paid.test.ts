/**
 * The inference host paid for real: the stock `@x402/fetch` client with its exact and upto schemes, the
 * project's facilitator on a devnet (Permit2 and the upto proxy in place), the offline engine and a fake
 * OpenAI upstream on 127.0.0.1. A tier costs its listed price; its /upto variant costs the tokens it used at
 * the tier's rates, never the maximum; a refusal costs nothing; buyers at once each pay their own; a call
 * the upstream fails is never charged, and its payment never buys the upstream's work again.
 */

import { x402Client } from "@x402/core/client";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  decodePaymentSignatureHeader,
} from "@x402/core/http";
import { UptoEvmScheme } from "@x402/evm/upto/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DevnetAccount } from "../../../src/chain/devnet/index.ts";
import type { Listening } from "../../../src/common/listen.ts";
import { type Facilitator, inProcessClient } from "../../../src/facilitator/index.ts";
import { UNPAID_LIMIT } from "../../../src/merchant-kit/payments/ledger/payment-ledger.ts";
import { inferenceMerchant, OFFLINE_SETTINGS } from "../../../src/merchants/inference/catalogue.ts";
import { meteredAmount } from "../../../src/merchants/inference/metering.ts";
import { defaultRates, TIERS } from "../../../src/merchants/inference/tiers.ts";
import { countPromptTokens, countTokens } from "../../../src/merchants/inference/tokens.ts";
import { loadConfig } from "../../../src/services/config.ts";
import { useDevnet, walletHolding } from "../../helpers/chain.ts";
import { LEDGER_KIND, openTestDatabase } from "../../helpers/db.ts";
import { devnetFacilitator } from "../../helpers/facilitator.ts";
import { startMerchant } from "../../helpers/merchant.ts";
import { type FakeOpenAI, startOpenAIUpstream } from "../../helpers/upstreams/openai.ts";
import { NETWORK, newMerchant, recordingFetch, usdcReader, x402ClientOf } from "../../helpers/x402.ts";

const chain = useDevnet({ buyers: 3 });
let facilitator: Facilitator;
let host: Listening;
/** The same merchant with tier 4 served by the fake upstream, and no engine for the other routes. */
let upstreamHost: Listening;
/** The same again with a long upstream time limit: a test of the caller leaving must not race the limit. */
let patientHost: Listening;
let upstream: FakeOpenAI;
let usdc: ReturnType<typeof usdcReader>;
const payTo = newMerchant();
const KEY = "sk-test-paid";
const UPSTREAM_TIMEOUT_MS = 3_000;
/** Tier 4 on the fake upstream: its rates (5 and 20 dollars per million tokens) and /upto maximum. */
const T4_RATES = { inputPerMillion: "5", outputPerMillion: "20" };
const T4_PRICE = 5_214n;
const T4_MAX = 41_977n;
let state: Awaited<ReturnType<typeof openTestDatabase>>;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  usdc = usdcReader(chain.devnet.rpc);
  const ledger = await openTestDatabase(LEDGER_KIND);
  closers.push(ledger.close);
  facilitator = await devnetFacilitator(chain.devnet, ledger.db);
  state = await openTestDatabase("pglite");
  closers.push(state.close);
  /** A host of the inference merchant with `settings`, on the shared state and facilitator. */
  const hostWith = async (settings: typeof OFFLINE_SETTINGS) => {
    const started = await startMerchant(
      (url) => inferenceMerchant({ payTo, publicUrl: url }, settings),
      state.db,
      inProcessClient(facilitator),
      { rpcUrl: chain.devnet.rpc },
    );
    closers.push(() => started.close());
    return started;
  };
  /** The tier-4 upstream's settings, with the engine's time limit `timeoutMs`. */
  const upstreamSettings = (timeoutMs: number) =>
    loadConfig({
      env: {
        X402M_INFERENCE_LLM_URL: upstream.base,
        X402M_INFERENCE_LLM_KEY: KEY,
        X402M_INFERENCE_TIER_4_MODEL: "t4-model",
        X402M_INFERENCE_TIER_4_RATES: "5,20",
        X402M_INFERENCE_LLM_TIMEOUT_MS: String(timeoutMs),
      },
    }).inference;
  host = await hostWith(OFFLINE_SETTINGS);
  upstream = await startOpenAIUpstream(KEY, "t4-model");
  closers.push(() => upstream.close());
  // Short, so that a stalled stream meets it within the test.
  upstreamHost = await hostWith(upstreamSettings(UPSTREAM_TIMEOUT_MS));
  // Long: a client's leaving, however late a loaded machine sees it, comes before the limit.
  patientHost = await hostWith(upstreamSettings(25_000));
}, 120_000);
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await facilitator?.close();
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
    const buyer = chain.devnet.buyers[0] as DevnetAccount;
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
    const buyer = chain.devnet.buyers[1] as DevnetAccount;
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
    const buyers = chain.devnet.buyers.slice(0, 3) as DevnetAccount[];
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

describe("a buyer that never approved Permit2", () => {
  it("is refused a metered call as the official facilitator refuses it, permit2_allowance_required, and pays nothing", async () => {
    const wallet = await walletHolding(chain.devnet, 100_000n);
    const { fetch: recording, signatures } = recordingFetch();
    const answer = await wrapFetchWithPayment(recording, x402ClientOf(wallet))(
      `${host.url}/v1/chat/completions/_t/t3/upto`,
      chat("Hello"),
    );
    // What the official resource server answers to it: 412, the PAYMENT-REQUIRED header naming the reason;
    // and the body, in OpenAI's dialect, says so and what to do (this client, given no RPC, signed no permit).
    expect(answer.status).toBe(412);
    expect(decodePaymentRequiredHeader(answer.headers.get("payment-required") as string).error).toBe(
      "permit2_allowance_required",
    );
    const { error } = (await answer.json()) as { error: { code: string; message: string; type: string } };
    expect(error).toMatchObject({ code: "permit2_allowance_required", type: "invalid_request_error" });
    expect(error.message).toContain("eip2612GasSponsoring");
    // The facilitator's own answer, over HTTP: a 200 with the official verify response's shape.
    const payload = decodePaymentSignatureHeader(signatures.at(-1) as string);
    const verified = await facilitator.app.fetch(
      new Request("http://facilitator/verify", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          x402Version: 2,
          paymentPayload: payload,
          paymentRequirements: payload.accepted,
        }),
      }),
    );
    expect(verified.status).toBe(200);
    expect(await verified.json()).toEqual({
      isValid: false,
      invalidReason: "permit2_allowance_required",
      payer: wallet.address,
    });
    const rows = await state.db.query("SELECT 1 FROM merchant_payments WHERE payer = $1", [
      wallet.address.toLowerCase(),
    ]);
    expect(rows.rowCount).toBe(0);
    expect(await chain.miner.pending()).toBe(0);
    expect(await usdc.balanceOf(wallet.address)).toBe(100_000n);
  });
});

describe("a wallet holding only USDC", () => {
  it("pays a metered tier with the SDK's own upto client, which signs a permit the facilitator carries out", async () => {
    const wallet = await walletHolding(chain.devnet, 5_000_000n);
    const client = new x402Client().register(
      NETWORK,
      new UptoEvmScheme(privateKeyToAccount(wallet.privateKey), { rpcUrl: chain.devnet.rpc }),
    );
    const { fetch: recording, signatures } = recordingFetch();
    const answer = await wrapFetchWithPayment(recording, client)(
      `${host.url}/v1/chat/completions/_t/t3/upto`,
      chat("Hello"),
    );
    expect(answer.status, await answer.clone().text()).toBe(200);
    const reply = (await answer.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    expect(decodePaymentSignatureHeader(signatures.at(-1) as string).extensions).toHaveProperty(
      "eip2612GasSponsoring.info.from",
      wallet.address,
    );
    const { amount } = decodePaymentResponseHeader(answer.headers.get("payment-response") as string);
    const cost = meteredAmount(
      { promptTokens: reply.usage.prompt_tokens, completionTokens: reply.usage.completion_tokens },
      defaultRates(tier(3)),
      BigInt(decodePaymentSignatureHeader(signatures.at(-1) as string).accepted.amount),
    );
    expect(amount).toBe(cost.toString());
    // Charged the tokens it used, nothing more; no ETH was ever needed or given.
    expect(await usdc.balanceOf(wallet.address)).toBe(5_000_000n - cost);
    expect(await usdc.client.getBalance({ address: wallet.address })).toBe(0n);
  });
});

describe("a call the upstream fails", () => {
  it("is never charged, spends its payment, and counts against its wallet alone until it is refused before any work", async () => {
    const t4 = `${upstreamHost.url}/v1/chat/completions/_t/t4`;
    const wallet = await walletHolding(chain.devnet, 2n * 5_214n);
    const { fetch: recording, signatures } = recordingFetch();
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
    await chain.miner.pending();
    expect(await usdc.balanceOf(wallet.address)).toBe(2n * 5_214n);

    // Another wallet is served and charged as before.
    const other = chain.devnet.buyers[2] as DevnetAccount;
    const otherBefore = await usdc.balanceOf(other.address);
    const served = await paying(other)(t4, chat("Hello"));
    expect(served.status).toBe(200);
    expect(upstreamCalls()).toBe(before + 1);
    expect(otherBefore - (await usdc.balanceOf(other.address))).toBe(5_214n);
  });
});

describe("a route no engine serves", () => {
  it("answers 503 before the 402, so a paying client signs nothing and pays nothing; /v1/models says so", async () => {
    const buyer = chain.devnet.buyers[2] as DevnetAccount;
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
    expect(await chain.miner.pending()).toBe(0);
    expect(await usdc.balanceOf(buyer.address)).toBe(before);
    const models = (await (await fetch(`${upstreamHost.url}/v1/models`)).json()) as {
      data: { alias: string; engine: string | null; available: boolean }[];
    };
    const byAlias = Object.fromEntries(models.data.map((m) => [m.alias, [m.engine, m.available]]));
    expect(byAlias).toMatchObject({ t2: [null, false], t4: ["upstream", true] });
  });
});

interface Received {
  /** Each event's data, and when it arrived (ms after the answer's headers). */
  events: { data: string; at: number }[];
  /** The text of the content chunks. */
  pieces: string[];
}

/** A streamed answer's events as they arrive; with `leave`, the client goes away after that many pieces. */
async function receive(
  response: Response,
  leave?: { after: number; controller: AbortController },
): Promise<Received> {
  const start = performance.now();
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const received: Received = { events: [], pieces: [] };
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return received;
    buffer += decoder.decode(value, { stream: true });
    const blocks = buffer.split("\n\n");
    buffer = blocks.pop() ?? "";
    for (const block of blocks) {
      const data = block.replace(/^data: /, "");
      received.events.push({ data, at: performance.now() - start });
      const content = data.startsWith("{") ? JSON.parse(data).choices?.[0]?.delta?.content : undefined;
      if (!content) continue;
      received.pieces.push(content);
      if (leave && received.pieces.length === leave.after) {
        leave.controller.abort();
        // Node 20's fetch can lose track of its signal once its Request is collected (src/common/fetch-within.ts):
        // the reader's cancel closes the connection whatever fetch does with the abort.
        await reader.cancel().catch(() => {});
        return received;
      }
    }
  }
}

/** The receipt a stream carried: its last choice chunk's, or its error event's, `payment_response`. */
function receiptOf(received: Received) {
  const carrying = received.events
    .filter((e) => e.data.startsWith("{"))
    .map((e) => JSON.parse(e.data) as { payment_response?: string })
    .find((e) => e.payment_response !== undefined);
  return carrying?.payment_response === undefined
    ? undefined
    : decodePaymentResponseHeader(carrying.payment_response);
}

/** What a metered tier-4 call costs for `text` delivered in answer to `content`, counted by the tokenizer. */
function t4Cost(content: string, text: string): bigint {
  return meteredAmount(
    { promptTokens: countPromptTokens([{ role: "user", content }]), completionTokens: countTokens(text) },
    T4_RATES,
    T4_MAX,
  );
}

/** The ledger's states of a payer's calls, once none is running (the outcome of a stream is recorded at its end). */
async function settledStates(payer: string): Promise<string[]> {
  const states = async () =>
    (
      await state.db.query<{ state: string }>(
        "SELECT state FROM merchant_payments WHERE payer = $1 ORDER BY state",
        [payer.toLowerCase()],
      )
    ).rows.map((r) => r.state);
  for (let t = 0; (await states()).includes("running") && t < 500; t++)
    await new Promise((r) => setTimeout(r, 20));
  return states();
}

describe("a streamed reply from an upstream", () => {
  const t4 = () => `${upstreamHost.url}/v1/chat/completions/_t/t4`;
  const stream = (content: string) => chat(content, { stream: true });

  it("reaches the client as the upstream produces it, and is charged once it has ended: exact its price, upto its usage", async () => {
    upstream.behaviour = {
      kind: "drip",
      pieces: ["One, ", "two, ", "three, ", "four, ", "five."],
      everyMs: 200,
    };
    const [exactBuyer, uptoBuyer] = chain.devnet.buyers as [DevnetAccount, DevnetAccount];
    const [exactBefore, uptoBefore] = await Promise.all(
      [exactBuyer, uptoBuyer].map((b) => usdc.balanceOf(b.address)),
    );
    const [exact, upto] = await Promise.all(
      [
        [exactBuyer, t4()],
        [uptoBuyer, `${t4()}/upto`],
      ].map(async ([buyer, url]) => {
        const answer = await paying(buyer as DevnetAccount)(url as string, stream("Count to five"));
        expect(answer.status).toBe(200);
        expect(answer.headers.get("payment-response")).toBeNull();
        return receive(answer);
      }),
    );
    for (const received of [exact, upto] as Received[]) {
      expect(received.pieces.join("")).toBe("One, two, three, four, five.");
      // Five pieces 200 ms apart: the first reached the client long before the last.
      const content = received.events.filter((e) => e.data.includes('"content":"'));
      expect((content.at(-1)?.at ?? 0) - (content[1]?.at ?? 0)).toBeGreaterThan(500);
      expect(received.events.at(-1)?.data).toBe("[DONE]");
    }
    // The upto call pays the upstream's own usage: 21 tokens in, 9 out.
    expect(receiptOf(exact as Received)).toMatchObject({
      success: true,
      transaction: expect.stringMatching(/^0x/),
    });
    expect(receiptOf(upto as Received)).toMatchObject({ success: true, amount: String(21 * 5 + 9 * 20) });
    expect((exactBefore as bigint) - (await usdc.balanceOf(exactBuyer.address))).toBe(T4_PRICE);
    expect((uptoBefore as bigint) - (await usdc.balanceOf(uptoBuyer.address))).toBe(285n);
  });

  it("ends a stalled stream at the engine's time limit with an error: exact charges nothing, upto what was delivered", async () => {
    upstream.behaviour = { kind: "drip", pieces: ["Half ", "an "], everyMs: 100, stall: true };
    const exactWallet = await walletHolding(chain.devnet, T4_PRICE);
    const uptoBuyer = chain.devnet.buyers[1] as DevnetAccount;
    const uptoBefore = await usdc.balanceOf(uptoBuyer.address);
    const [exact, upto] = await Promise.all(
      [
        [exactWallet, t4()],
        [uptoBuyer, `${t4()}/upto`],
      ].map(async ([buyer, url]) =>
        receive(await paying(buyer as DevnetAccount)(url as string, stream("Stall"))),
      ),
    );
    for (const received of [exact, upto] as Received[]) {
      expect(received.pieces).toEqual(["Half ", "an "]);
      const last = JSON.parse(received.events.at(-1)?.data ?? "{}") as { error?: Record<string, unknown> };
      expect(last.error).toMatchObject({ type: "server_error", code: "upstream_timeout" });
      expect(String(last.error?.message)).toMatch(new RegExp(`within ${UPSTREAM_TIMEOUT_MS} ms`));
    }
    const exactError = JSON.parse((exact as Received).events.at(-1)?.data ?? "{}").error;
    expect(exactError.message).toMatch(/nothing was charged$/);
    expect(receiptOf(exact as Received)).toBeUndefined();
    const cost = t4Cost("Stall", "Half an ");
    expect(receiptOf(upto as Received)).toMatchObject({ success: true, amount: cost.toString() });
    expect(await settledStates(exactWallet.address)).toEqual(["failed"]);
    await chain.miner.pending();
    expect(await usdc.balanceOf(exactWallet.address)).toBe(T4_PRICE);
    expect(uptoBefore - (await usdc.balanceOf(uptoBuyer.address))).toBe(cost);
  });

  it("charges a client that leaves mid-stream as stated: exact its price once text reached it, upto the text delivered", async () => {
    // The upstream then waits for ever: however late a loaded machine sees the client go, the reply is
    // still under way (on the host with a long upstream limit, so the limit does not end it first).
    upstream.behaviour = { kind: "drip", pieces: ["Never ", "gonna "], everyMs: 200, stall: true };
    const t4 = () => `${patientHost.url}/v1/chat/completions/_t/t4`;
    const exactWallet = await walletHolding(chain.devnet, T4_PRICE);
    const uptoBuyer = chain.devnet.buyers[0] as DevnetAccount;
    const uptoBefore = await usdc.balanceOf(uptoBuyer.address);
    const leaving = await Promise.all(
      [
        [exactWallet, t4()],
        [uptoBuyer, `${t4()}/upto`],
      ].map(async ([buyer, url]) => {
        const controller = new AbortController();
        const answer = await paying(buyer as DevnetAccount)(url as string, {
          ...stream("Sing"),
          signal: controller.signal,
        });
        return receive(answer, { after: 2, controller });
      }),
    );
    for (const received of leaving) expect(received.pieces).toEqual(["Never ", "gonna "]);
    expect(await settledStates(exactWallet.address)).toEqual(["settled"]);
    expect(await settledStates(uptoBuyer.address)).not.toContain("running");
    await chain.miner.pending();
    expect(await usdc.balanceOf(exactWallet.address)).toBe(0n);
    expect(uptoBefore - (await usdc.balanceOf(uptoBuyer.address))).toBe(t4Cost("Sing", "Never gonna "));
  });
});
