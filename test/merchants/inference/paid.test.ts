/**
 * The inference host paid for real: the stock `@x402/fetch` client with its exact and upto schemes, the
 * project's facilitator on a devnet (Permit2 and the upto proxy in place), the offline engine. A tier costs
 * its listed price; its /upto variant costs the tokens it used at the tier's rates, never the maximum; a
 * refusal costs nothing; buyers at once each pay their own.
 */
import { decodePaymentResponseHeader } from "@x402/core/http";
import { wrapFetchWithPayment } from "@x402/fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Devnet, type DevnetAccount, startDevnet } from "../../../src/chain/devnet/index.ts";
import type { Listening } from "../../../src/common/listen.ts";
import { type Facilitator, inProcessClient } from "../../../src/facilitator/index.ts";
import { inferenceMerchant, OFFLINE_SETTINGS } from "../../../src/merchants/inference/catalogue.ts";
import { meteredAmount } from "../../../src/merchants/inference/metering.ts";
import { defaultRates, TIERS } from "../../../src/merchants/inference/tiers.ts";
import { startMiner } from "../../helpers/chain.ts";
import { openTestDatabase } from "../../helpers/db.ts";
import { devnetFacilitator } from "../../helpers/facilitator.ts";
import { startMerchant } from "../../helpers/merchant.ts";
import { newMerchant, usdcReader, x402ClientOf } from "../../helpers/x402.ts";

let devnet: Devnet;
let miner: ReturnType<typeof startMiner>;
let facilitator: Facilitator;
let host: Listening;
let usdc: ReturnType<typeof usdcReader>;
const payTo = newMerchant();
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
