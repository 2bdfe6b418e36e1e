/**
 * Every metered chat tier keeps its work within what the buyer signed (issue 68): a sweep of each /upto
 * tier's prompt size and `max_tokens` up to the route's limits, paid for real with the SDK's own upto client
 * and through a payment channel (its batch-settlement client), on the offline engine, whose replies echo the
 * prompt and so run to `max_tokens` when the prompt is long. Every 200's usage at the route's published rates
 * is exactly its charge, and never more than the maximum; every refusal is a 400 that says what the maximum
 * covers, and costs nothing. Before the fix, tier 3 delivered up to 18 times what it charged.
 */
import { decodePaymentResponseHeader } from "@x402/core/http";
import { wrapFetchWithPayment } from "@x402/fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DevnetAccount } from "../../../src/chain/devnet/index.ts";
import { inProcessClient } from "../../../src/facilitator/index.ts";
import { ChannelStore } from "../../../src/merchant-kit/channels/storage.ts";
import { priceToAtomic } from "../../../src/merchant-kit/price.ts";
import { inferenceMerchant, OFFLINE_SETTINGS } from "../../../src/merchants/inference/catalogue.ts";
import { meteredAmount, meteredCoverage } from "../../../src/merchants/inference/metering.ts";
import { defaultRates, TIERS, type Tier } from "../../../src/merchants/inference/tiers.ts";
import { countPromptTokens } from "../../../src/merchants/inference/tokens.ts";
import { useDevnet } from "../../helpers/chain.ts";
import { type ChannelShop, channelOf } from "../../helpers/channel-shop.ts";
import { LEDGER_KIND, openTestDatabase } from "../../helpers/db.ts";
import { devnetFacilitator } from "../../helpers/facilitator.ts";
import { startMerchant } from "../../helpers/merchant.ts";
import { channelClient, channelPayer } from "../../helpers/stock-facilitator.ts";
import { newMerchant, usdcReader, x402ClientFor } from "../../helpers/x402.ts";

const METERED = TIERS.filter((t): t is Tier & { uptoPrice: `${number}` } => t.uptoPrice !== null);
/** The longest input the routes take: 200,000 characters of words, about 40,000 tokens. */
const LONGEST = "the quick brown fox jumps over the lazy dog and ".repeat(5_000).slice(0, 200_000);
const UNBOUNDED = 10n ** 30n;

const chain = useDevnet({ buyers: 2 });
let usdc: ReturnType<typeof usdcReader>;
let shop: ChannelShop;
const payTo = newMerchant();
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  usdc = usdcReader(chain.devnet.rpc);
  const ledger = await openTestDatabase(LEDGER_KIND);
  closers.push(ledger.close);
  const facilitator = await devnetFacilitator(chain.devnet, ledger.db);
  closers.push(() => facilitator.close());
  facilitator.gate.allow([payTo]);
  const state = await openTestDatabase("pglite");
  closers.push(state.close);
  const host = await startMerchant(
    (url) => inferenceMerchant({ payTo, publicUrl: url }, OFFLINE_SETTINGS),
    state.db,
    inProcessClient(facilitator),
    { rpcUrl: chain.devnet.rpc },
  );
  closers.push(() => host.close());
  shop = { host, url: host.url, payTo, store: new ChannelStore(state.db, payTo), close: () => host.close() };
}, 120_000);
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

/** The fewest prompt tokens a call has: one user message of one token. */
const SHORTEST = countPromptTokens([{ role: "user", content: "a" }]);

/** `content` as one user message of exactly `tokens` prompt tokens (" a" is one token of o200k_base). */
function promptOf(tokens: number): string {
  const content = `a${" a".repeat(tokens - SHORTEST)}`;
  expect(countPromptTokens([{ role: "user", content }])).toBe(tokens);
  return content;
}

interface Case {
  name: string;
  content: string;
  maxTokens?: number;
}

/**
 * The sweep of one tier: a short prompt, the largest the route publishes as covered (at its reference
 * `max_tokens`) and one token past it, and the longest, at no, the least, the reference and the most
 * `max_tokens`.
 */
function casesOf(route: Tier & { uptoPrice: `${number}` }): Case[] {
  const { min, max } = route.limits.maxTokens;
  const covers = meteredCoverage(
    defaultRates(route),
    priceToAtomic(route.uptoPrice, 6),
    route.limits.maxTokens,
  );
  const largest = Math.max(covers.at.promptTokens, SHORTEST);
  const boundary = promptOf(largest);
  const past = promptOf(largest + 1);
  return [
    { name: "a short prompt, default max_tokens", content: "Hello there" },
    { name: "a short prompt, the least max_tokens", content: "Hello there", maxTokens: min },
    { name: "a short prompt, the most max_tokens", content: "Hello there", maxTokens: max },
    { name: "the largest covered prompt, default max_tokens", content: boundary },
    {
      name: "the largest covered prompt, its max_tokens",
      content: boundary,
      maxTokens: covers.at.maxTokens,
    },
    { name: "one token past it, default max_tokens", content: past },
    { name: "one token past it, the same max_tokens", content: past, maxTokens: covers.at.maxTokens },
    { name: "the longest prompt, default max_tokens", content: LONGEST },
    { name: "the longest prompt, the most max_tokens", content: LONGEST, maxTokens: max },
  ];
}

/** Streamed: a prompt one token past the largest covered, with no max_tokens: it runs to what the maximum covers. */
function streamedCase(route: Tier & { uptoPrice: `${number}` }): Case {
  const covers = meteredCoverage(
    defaultRates(route),
    priceToAtomic(route.uptoPrice, 6),
    route.limits.maxTokens,
  );
  return { name: "streamed", content: promptOf(Math.max(covers.at.promptTokens, SHORTEST) + 1) };
}

const body = (c: Case, stream = false) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({
    messages: [{ role: "user", content: c.content }],
    ...(c.maxTokens !== undefined && { max_tokens: c.maxTokens }),
    ...(stream && { stream: true, stream_options: { include_usage: true } }),
  }),
});

/** What the usage is worth at the route's published rates, without any cap. */
const worth = (route: Tier, usage: { prompt_tokens: number; completion_tokens: number }) =>
  meteredAmount(
    { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens },
    defaultRates(route),
    UNBOUNDED,
  );

/** A refusal of a metered call: a 400 in OpenAI's shape that says what the maximum covers. */
async function expectRefused(answer: Response): Promise<void> {
  expect(answer.status, await answer.clone().text()).toBe(400);
  const { error } = (await answer.json()) as { error: { code: string; message: string } };
  expect(["max_tokens_not_covered", "prompt_not_covered"]).toContain(error.code);
  expect(error.message).toMatch(/covers max_tokens up to \d+ with the shortest prompt.*nothing was charged/);
  expect(answer.headers.get("payment-response")).toBeNull();
}

/** The usage and the payment receipt of a streamed reply (the last choice chunk carries the receipt). */
async function streamed(answer: Response) {
  const events = (await answer.text())
    .split("\n\n")
    .filter((e) => e.startsWith("data: {"))
    .map((e) => JSON.parse(e.slice(6)));
  const receipt = events.find((e) => e.payment_response)?.payment_response as string;
  const usage = events.at(-1)?.usage as { prompt_tokens: number; completion_tokens: number };
  return { usage, receipt: decodePaymentResponseHeader(receipt) };
}

describe("a metered chat call's work stays within what its buyer signed", () => {
  it.each(METERED.map((route) => [route.alias, route] as const))(
    "%s/upto, paid with the SDK's upto client: every call is charged its whole usage, or refused for nothing",
    async (_alias, route) => {
      const buyer = chain.devnet.buyers[0] as DevnetAccount;
      const pay = wrapFetchWithPayment(fetch, x402ClientFor(buyer, "upto"));
      const max = priceToAtomic(route.uptoPrice, 6);
      const url = `${shop.url}/v1/chat/completions/_t/${route.alias}/upto`;
      let served = 0;
      for (const c of casesOf(route)) {
        const before = await usdc.balanceOf(buyer.address);
        const answer = await pay(url, body(c));
        if (answer.status === 200) {
          const { usage } = (await answer.json()) as {
            usage: { prompt_tokens: number; completion_tokens: number };
          };
          const cost = worth(route, usage);
          expect(cost, c.name).toBeLessThanOrEqual(max);
          expect(before - (await usdc.balanceOf(buyer.address)), c.name).toBe(cost);
          served++;
        } else {
          await expectRefused(answer);
          expect(await usdc.balanceOf(buyer.address), c.name).toBe(before);
        }
      }
      // The short prompts and the covered ones are served; the longest prompt never is.
      expect(served).toBeGreaterThanOrEqual(4);
      const before = await usdc.balanceOf(buyer.address);
      const answer = await pay(url, body(streamedCase(route), true));
      expect(answer.status).toBe(200);
      const { usage, receipt } = await streamed(answer);
      expect(worth(route, usage)).toBeLessThanOrEqual(max);
      expect(receipt.amount).toBe(worth(route, usage).toString());
      expect(before - (await usdc.balanceOf(buyer.address))).toBe(worth(route, usage));
    },
    120_000,
  );

  it("the same sweep paid through a payment channel: each voucher charges the whole usage, a refusal charges nothing", async () => {
    const buyer = chain.devnet.buyers[1] as DevnetAccount;
    const payer = channelClient(chain.devnet, buyer, { salt: 68n, deposit: 3_000_000n });
    const pay = wrapFetchWithPayment(fetch, channelPayer(payer));
    let charged = 0n;
    for (const route of METERED) {
      const max = priceToAtomic(route.uptoPrice, 6);
      const url = `${shop.url}/v1/chat/completions/_t/${route.alias}/upto`;
      for (const c of casesOf(route)) {
        const answer = await pay(url, body(c));
        if (answer.status !== 200) {
          await expectRefused(answer);
          continue;
        }
        const { usage } = (await answer.json()) as {
          usage: { prompt_tokens: number; completion_tokens: number };
        };
        const cost = worth(route, usage);
        expect(cost, `${route.alias}: ${c.name}`).toBeLessThanOrEqual(max);
        const receipt = decodePaymentResponseHeader(answer.headers.get("payment-response") as string);
        expect(receipt.extra?.chargedAmount, `${route.alias}: ${c.name}`).toBe(cost.toString());
        charged += cost;
      }
      const answer = await pay(url, body(streamedCase(route), true));
      expect(answer.status).toBe(200);
      const { usage, receipt } = await streamed(answer);
      expect(worth(route, usage)).toBeLessThanOrEqual(max);
      expect(receipt.extra?.chargedAmount).toBe(worth(route, usage).toString());
      charged += worth(route, usage);
    }
    // The channel was charged exactly the served calls' usage: no refusal moved it.
    const { row } = await channelOf(shop, payer);
    expect(row?.chargedCumulativeAmount).toBe(charged.toString());
  }, 300_000);
});
