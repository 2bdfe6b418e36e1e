/**
 * Paid tools over MCP, for real: the MCP SDK's own client against the utility and inference hosts on
 * 127.0.0.1, buyers' payments signed by `@x402/core`'s client (exact: EIP-3009; upto: Permit2) and settled
 * by the project's facilitator on a devnet. A call without a payment is asked for one; with it, it is
 * settled on chain and the settlement comes back in `_meta`; the ledger holds one delivery per payment;
 * refused input costs nothing and leaves the payment unspent; one payment sent twice at once is delivered
 * once; two buyers at once each pay their own; an upto tool settles what it metered; a settlement that
 * fails answers the PaymentRequired, never the tool's content; a payment is never refused for its
 * client's unpaid traffic.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DevnetAccount } from "../../../src/chain/devnet/index.ts";
import type { Database } from "../../../src/common/db/index.ts";
import { type Listening, listenWithUrl } from "../../../src/common/listen.ts";
import { UnpaidLimit } from "../../../src/common/rate-limit.ts";
import { type Facilitator, inProcessClient } from "../../../src/facilitator/index.ts";
import { merchantApp } from "../../../src/merchant-kit/app.ts";
import { callPaidTool, callTool, connectMcp } from "../../../src/merchant-kit/mcp/client.ts";
import { paymentRequiredOf, settlementOf } from "../../../src/merchant-kit/mcp/index.ts";
import { MERCHANTS } from "../../../src/merchants/index.ts";
import { speechAmount } from "../../../src/merchants/inference/audio/metering.ts";
import { probeAudio } from "../../../src/merchants/inference/audio/probe.ts";
import { inferenceMerchant, OFFLINE_SETTINGS } from "../../../src/merchants/inference/catalogue.ts";
import { meteredAmount } from "../../../src/merchants/inference/metering.ts";
import { defaultRates, TIERS } from "../../../src/merchants/inference/tiers.ts";
import { missingPrograms } from "../../helpers/audio.ts";
import { useDevnet, walletHolding } from "../../helpers/chain.ts";
import { DATABASE_KINDS, LEDGER_KIND, openTestDatabase } from "../../helpers/db.ts";
import { devnetFacilitator } from "../../helpers/facilitator.ts";
import { startMerchant, testConfig, testMerchant } from "../../helpers/merchant.ts";
import { rpc, sendTransfer } from "../../helpers/settle.ts";
import { newMerchant, usdcReader, x402ClientFor } from "../../helpers/x402.ts";

/** Buyers per database kind: three for the exact tools, one for upto, one for the unpaid limit. */
const BUYERS_PER_KIND = 5;
/** api_calc's price, 0.001 USDC; t2/upto's maximum, 0.015187. */
const CALC_PRICE = 1000n;
const T2_UPTO_MAX = 15_187n;

/** What the speech case's voice needs: espeak-ng speaks `espeak-ng:en-us`, as WAV (no encoder). */
const missingSpeech = await missingPrograms("espeak-ng");

const chain = useDevnet({ buyers: BUYERS_PER_KIND * DATABASE_KINDS.length });
let facilitator: Facilitator;
let usdc: ReturnType<typeof usdcReader>;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  usdc = usdcReader(chain.devnet.rpc);
  const ledger = await openTestDatabase(LEDGER_KIND);
  closers.push(ledger.close);
  facilitator = await devnetFacilitator(chain.devnet, ledger.db);
}, 120_000);
afterAll(async () => {
  await facilitator?.close();
  for (const close of closers.reverse()) await close();
});

/** The rows the merchant's ledger holds for `payer`: one per delivered (or running) payment. */
async function ledgerRows(db: Database, payer: string) {
  const { rows } = await db.query<{ state: string; resource: string }>(
    "SELECT state, resource FROM merchant_payments WHERE payer = $1 ORDER BY resource",
    [payer.toLowerCase()],
  );
  return rows;
}

/** The JSON a successful result carries as text. */
const textOf = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;

describe.each(DATABASE_KINDS)("paid tools over MCP, merchant state on %s", (kind) => {
  const offset = DATABASE_KINDS.indexOf(kind) * BUYERS_PER_KIND;
  const buyer = (i: number) => chain.devnet.buyers[offset + i] as DevnetAccount;
  const utilityPayTo = newMerchant();
  const inferencePayTo = newMerchant();
  let db: Database;
  let utility: Listening;
  let inference: Listening;
  let utilityMcp: Client;
  let inferenceMcp: Client;
  /** The platform's test endpoints: `api_echo` waits as long as it is asked to. */
  const testPayTo = newMerchant();
  let testMcp: Client;

  beforeAll(async () => {
    const state = await openTestDatabase(kind);
    closers.push(state.close);
    db = state.db;
    const config = testConfig();
    const onChain = { rpcUrl: chain.devnet.rpc };
    utility = await startMerchant(
      (url) => MERCHANTS.utility({ payTo: utilityPayTo, publicUrl: url }, config),
      db,
      inProcessClient(facilitator),
      onChain,
    );
    closers.push(() => utility.close());
    inference = await startMerchant(
      (url) => inferenceMerchant({ payTo: inferencePayTo, publicUrl: url }, OFFLINE_SETTINGS),
      db,
      inProcessClient(facilitator),
      onChain,
    );
    closers.push(() => inference.close());
    utilityMcp = await connectMcp(`${utility.url}/mcp`);
    closers.push(() => utilityMcp.close());
    inferenceMcp = await connectMcp(`${inference.url}/mcp`);
    closers.push(() => inferenceMcp.close());
    const test = await startMerchant(
      (url) => testMerchant(testPayTo, url),
      db,
      inProcessClient(facilitator),
      onChain,
    );
    closers.push(() => test.close());
    testMcp = await connectMcp(`${test.url}/mcp`);
    closers.push(() => testMcp.close());
  }, 60_000);

  it("asks for a payment, then delivers once paid: settled on the devnet, the settlement in _meta, one ledger row", async () => {
    const payer = buyer(0);
    const [before, shopBefore] = await Promise.all([
      usdc.balanceOf(payer.address),
      usdc.balanceOf(utilityPayTo),
    ]);
    const call = await callPaidTool(utilityMcp, x402ClientFor(payer, "exact"), "api_calc", {
      expr: "2^10 + 1/4",
    });
    // exact first; a payment channel after it, where the facilitator serves channels (the project's does).
    expect(call.required).toMatchObject({ x402Version: 2 });
    expect(call.required?.accepts[0]).toMatchObject({ scheme: "exact", amount: "1000" });
    expect(call.result.isError).toBeFalsy();
    expect(JSON.parse(textOf(call.result))).toEqual({
      expression: "2^10 + 1/4",
      result: "1024.25",
      type: "decimal",
    });
    expect(call.result.structuredContent).toEqual(JSON.parse(textOf(call.result)));
    expect(call.settlement).toMatchObject({ success: true, payer: payer.address, network: "eip155:8453" });
    const receipt = await usdc.receipt(call.settlement?.transaction as `0x${string}`);
    expect(receipt.status).toBe("success");
    expect(before - (await usdc.balanceOf(payer.address))).toBe(CALC_PRICE);
    expect((await usdc.balanceOf(utilityPayTo)) - shopBefore).toBe(CALC_PRICE);
    expect(await ledgerRows(db, payer.address)).toEqual([
      { state: "settled", resource: `${utility.url}/api/calc` },
    ]);
  });

  it("refuses bad input sent with a payment and charges nothing; the payment stays good for a valid call", async () => {
    const payer = buyer(1);
    const before = await usdc.balanceOf(payer.address);
    const asked = paymentRequiredOf(await callTool(utilityMcp, "api_calc", { expr: "1+1" }));
    const payment = await x402ClientFor(payer, "exact").createPaymentPayload(
      asked as NonNullable<typeof asked>,
    );
    const refused = await callTool(utilityMcp, "api_calc", { expr: "x".repeat(1001) }, payment);
    expect(refused).toMatchObject({ isError: true, structuredContent: { error: { code: "invalid_input" } } });
    expect(paymentRequiredOf(refused)).toBeUndefined();
    expect(settlementOf(refused)).toBeUndefined();
    expect(await chain.miner.pending()).toBe(0);
    expect(await usdc.balanceOf(payer.address)).toBe(before);
    expect(await ledgerRows(db, payer.address)).toEqual([]);
    // Nothing spent it: the same authorization pays for the call it was signed for.
    const paid = await callTool(utilityMcp, "api_calc", { expr: "1+1" }, payment);
    expect(settlementOf(paid)?.success).toBe(true);
    expect(before - (await usdc.balanceOf(payer.address))).toBe(CALC_PRICE);
  });

  it("delivers one payment sent twice at once once: the other call is refused with a PaymentRequired", async () => {
    const payer = buyer(2);
    const before = await usdc.balanceOf(payer.address);
    const asked = paymentRequiredOf(await callTool(utilityMcp, "api_calc", { expr: "6*7" }));
    const payment = await x402ClientFor(payer, "exact").createPaymentPayload(
      asked as NonNullable<typeof asked>,
    );
    const results = await Promise.all(
      [1, 2].map(() => callTool(utilityMcp, "api_calc", { expr: "6*7" }, payment)),
    );
    const delivered = results.filter((r) => !r.isError);
    const refused = results.filter((r) => r.isError);
    expect(delivered).toHaveLength(1);
    expect(JSON.parse(textOf(delivered[0] as (typeof results)[number])).result).toBe("42");
    expect(settlementOf(delivered[0] as (typeof results)[number])?.success).toBe(true);
    // Refused as the spec has a payment refused: the PaymentRequired, its error the reason, no content.
    const again = paymentRequiredOf(refused[0] as (typeof results)[number]);
    expect(again?.error).toMatch(/payment_in_use|invalid|nonce|used/i);
    const texts = (refused[0] as (typeof results)[number]).content.map((c) => (c as { text: string }).text);
    expect(texts.join("\n")).not.toContain('"result":"42"');
    expect(before - (await usdc.balanceOf(payer.address))).toBe(CALC_PRICE);
    expect(await ledgerRows(db, payer.address)).toHaveLength(1);
  });

  it("charges two buyers calling at once each their own payment", async () => {
    const payers = [buyer(0), buyer(1)];
    const before = await Promise.all(payers.map((p) => usdc.balanceOf(p.address)));
    const shopBefore = await usdc.balanceOf(utilityPayTo);
    const calls = await Promise.all(
      payers.map((p, i) =>
        callPaidTool(utilityMcp, x402ClientFor(p, "exact"), "api_calc", { expr: `${i + 2}^2` }),
      ),
    );
    expect(calls.map((c) => JSON.parse(textOf(c.result)).result)).toEqual(["4", "9"]);
    expect(calls.map((c) => c.settlement?.payer)).toEqual(payers.map((p) => p.address));
    const charged = await Promise.all(
      payers.map(async (p, i) => (before[i] as bigint) - (await usdc.balanceOf(p.address))),
    );
    expect(charged).toEqual([CALC_PRICE, CALC_PRICE]);
    expect((await usdc.balanceOf(utilityPayTo)) - shopBefore).toBe(2n * CALC_PRICE);
  });

  it("delivers one of two payments at once from a wallet that can afford only one, and charges only that one", async () => {
    const wallet = await walletHolding(chain.devnet, CALC_PRICE, offset);
    const asked = paymentRequiredOf(await callTool(utilityMcp, "api_calc", { expr: "1+1" }));
    const payer = x402ClientFor(wallet, "exact");
    // Two payments, each signed for the whole balance: either alone could pay.
    const payments = await Promise.all(
      [1, 2].map(() => payer.createPaymentPayload(asked as NonNullable<typeof asked>)),
    );
    const results = await Promise.all(
      payments.map((payment) => callTool(utilityMcp, "api_calc", { expr: "1+1" }, payment)),
    );
    const delivered = results.filter((r) => !r.isError);
    expect(delivered).toHaveLength(1);
    expect(JSON.parse(textOf(delivered[0] as (typeof results)[number])).result).toBe("2");
    const refused = results.find((r) => r.isError);
    expect(paymentRequiredOf(refused as (typeof results)[number])?.error).toBeTruthy();
    const texts = (refused as (typeof results)[number]).content.map((c) => (c as { text: string }).text);
    expect(texts.join("\n")).not.toContain('"result":"2"');
    expect(await usdc.balanceOf(wallet.address)).toBe(0n);
    // The other call's settlement failed for want of funds: recorded unsettled, its answer never sent (a
    // guarded route would have refused it before running: docs/platform.md).
    expect((await ledgerRows(db, wallet.address)).map((r) => r.state).sort()).toEqual([
      "settled",
      "unsettled",
    ]);
  });

  it("settles an upto tool for what it metered, less than its maximum", async () => {
    const payer = buyer(3);
    const before = await usdc.balanceOf(payer.address);
    const call = await callPaidTool(
      inferenceMcp,
      x402ClientFor(payer, "upto"),
      "v1_chat_completions_t_t2_upto",
      {
        messages: [{ role: "user", content: "Hello there" }],
        max_tokens: 16,
      },
    );
    expect(call.required?.accepts[0]).toMatchObject({ scheme: "upto", amount: T2_UPTO_MAX.toString() });
    expect(call.result.isError).toBeFalsy();
    const reply = call.result.structuredContent as {
      object: string;
      usage: { prompt_tokens: number; completion_tokens: number };
    };
    // Answered whole, not streamed: a chat.completion, not chunks.
    expect(reply.object).toBe("chat.completion");
    const cost = meteredAmount(
      { promptTokens: reply.usage.prompt_tokens, completionTokens: reply.usage.completion_tokens },
      defaultRates(TIERS[1] as (typeof TIERS)[number]),
      T2_UPTO_MAX,
    );
    expect(cost).toBeGreaterThan(0n);
    expect(cost).toBeLessThan(T2_UPTO_MAX);
    expect(call.settlement).toMatchObject({ success: true, amount: cost.toString(), payer: payer.address });
    expect(before - (await usdc.balanceOf(payer.address))).toBe(cost);
    expect(await ledgerRows(db, payer.address)).toEqual([
      { state: "settled", resource: `${inference.url}/v1/chat/completions/_t/t2/upto` },
    ]);
  });

  it.skipIf(missingSpeech.length > 0)(
    "answers speech as MCP audio content, metered by its characters under upto (needs espeak-ng)",
    async () => {
      const payer = buyer(3);
      const before = await usdc.balanceOf(payer.address);
      const text = "Paid through MCP, spoken offline.";
      const call = await callPaidTool(inferenceMcp, x402ClientFor(payer, "upto"), "v1_audio_speech", {
        model: "tts-1",
        input: text,
        voice: "espeak-ng:en-us",
        response_format: "wav",
      });
      expect(call.result.isError, JSON.stringify(call.result.content)).toBeFalsy();
      const [audio] = call.result.content as { type: string; mimeType: string; data: string }[];
      expect(audio).toMatchObject({ type: "audio", mimeType: "audio/wav" });
      expect(probeAudio(Buffer.from(audio?.data ?? "", "base64")).durationSeconds).toBeGreaterThan(1);
      const cost = speechAmount(text, 6, 18_000n);
      expect(call.settlement).toMatchObject({ success: true, amount: cost.toString() });
      expect(before - (await usdc.balanceOf(payer.address))).toBe(cost);
    },
  );

  it("answers a settlement that fails with the PaymentRequired and its reason, never the tool's content", async () => {
    const wallet = await walletHolding(chain.devnet, 2000n, offset);
    await rpc(chain.devnet.rpc, "anvil_setBalance", [wallet.address, "0xde0b6b3a7640000"]); // 1 ETH, for its transfer
    const args = { text: "the answer", delay: 2000 };
    const asked = paymentRequiredOf(await callTool(testMcp, "api_echo", args));
    const payment = await x402ClientFor(wallet, "exact").createPaymentPayload(
      asked as NonNullable<typeof asked>,
    );
    const call = callTool(testMcp, "api_echo", args, payment);
    // Once the payment is verified and its handler runs (its ledger row taken), the wallet spends its funds.
    while ((await ledgerRows(db, wallet.address)).length === 0) await new Promise((r) => setTimeout(r, 10));
    await usdc.receipt(await sendTransfer(chain.devnet, wallet, newMerchant(), 2000n));
    const result = await call;
    const required = paymentRequiredOf(result);
    expect(required?.error).toMatch(/^Payment settlement failed: /);
    expect(required?.accepts).toEqual(asked?.accepts);
    expect(result.content).toEqual([{ type: "text", text: JSON.stringify(result.structuredContent) }]);
    expect(settlementOf(result)).toBeUndefined();
    expect(await usdc.balanceOf(testPayTo)).toBe(0n);
    expect(await ledgerRows(db, wallet.address)).toEqual([
      { state: "unsettled", resource: expect.stringMatching(/\/api\/echo$/) },
    ]);
  });

  it("takes a payment from a client whose unpaid requests are over the limit", async () => {
    const payer = buyer(4);
    const limit = new UnpaidLimit(
      {
        perSecond: 0.001,
        burst: 6,
        clients: 10,
        loopback: "limited",
        trustedProxies: [],
        forwardedHeader: "x-forwarded-for",
      },
      () => 0,
    );
    const config = testConfig();
    // A host of the platform's test endpoints (the utility's api_calc among them) to a payee of its own: its
    // MCP front lists four tools, where the utility's whole catalogue cost 1.4-1.9 CPU-s more to list, and
    // what is tested is the host's limit, not its catalogue.
    const limited = await listenWithUrl(
      async (url) =>
        (
          await merchantApp(testMerchant(newMerchant(), url), {
            services: { db, config },
            facilitator: inProcessClient(facilitator),
            payments: { ...config.payments, rpcUrl: chain.devnet.rpc },
            limit,
          })
        ).fetch,
      "127.0.0.1",
      0,
    );
    closers.push(() => limited.close());
    const client = await connectMcp(`${limited.url}/mcp`);
    closers.push(() => client.close());
    const asked = paymentRequiredOf(await callTool(client, "api_calc", { expr: "3*3" }));
    const payment = await x402ClientFor(payer, "exact").createPaymentPayload(
      asked as NonNullable<typeof asked>,
    );
    let refused = await callTool(client, "api_calc", { expr: "3*3" });
    while (paymentRequiredOf(refused)) refused = await callTool(client, "api_calc", { expr: "3*3" });
    expect(refused.structuredContent).toMatchObject({ error: { code: "too_many_requests" } });
    const before = await usdc.balanceOf(payer.address);
    const paid = await callTool(client, "api_calc", { expr: "3*3" }, payment);
    expect(JSON.parse(textOf(paid)).result).toBe("9");
    expect(settlementOf(paid)?.success).toBe(true);
    expect(before - (await usdc.balanceOf(payer.address))).toBe(CALC_PRICE);
  });
});
