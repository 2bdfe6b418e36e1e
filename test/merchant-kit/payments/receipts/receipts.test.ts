/**
 * Signed offers and receipts (x402's `offer-receipt` extension, issue 65 item 5), end to end on a devnet: a kit
 * merchant with a receipt key is paid by the SDK's own clients through the SDK's own facilitator, and the
 * extension's own client helpers check what it signed: the offers of a real 402, the receipt after an exact,
 * an upto and a channel call (and a streamed one's, in its last event). The kit's charge beside each receipt
 * states the amount charged beside the ceiling, the scheme and the request's hash; `verifyReceipt` checks it,
 * and refuses a receipt or charge altered after signing. One devnet and one host for the file; and the key's
 * settings, and the one kept in the data directory when none is set.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentRequirements } from "@x402/core/types";
import {
  decodeSignedOffers,
  type EIP712SignedOffer,
  type EIP712SignedReceipt,
  extractOffersFromPaymentRequired,
  extractReceiptFromResponse,
  findAcceptsObjectFromSignedOffer,
  verifyOfferSignatureEIP712,
  verifyReceiptMatchesOffer,
  verifyReceiptSignatureEIP712,
} from "@x402/extensions/offer-receipt";
import { wrapFetchWithPayment } from "@x402/fetch";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { z } from "zod";
import { type Devnet, type DevnetAccount, startDevnet } from "../../../../src/chain/devnet/index.ts";
import { Lifecycle } from "../../../../src/common/lifecycle.ts";
import { type Listening, listenWithUrl } from "../../../../src/common/listen.ts";
import { merchantApp } from "../../../../src/merchant-kit/app.ts";
import { type AnyEndpoint, defineEndpoint } from "../../../../src/merchant-kit/endpoint.ts";
import { callPaidTool, connectMcp } from "../../../../src/merchant-kit/mcp/client.ts";
import { requestHash } from "../../../../src/merchant-kit/payments/receipts/charge.ts";
import { receiptKeyFile, storedReceiptKey } from "../../../../src/merchant-kit/payments/receipts/key.ts";
import { verifyReceipt } from "../../../../src/merchant-kit/payments/receipts/verify.ts";
import { Streamed } from "../../../../src/merchant-kit/payments/streamed.ts";
import { loadConfig } from "../../../../src/services/config.ts";
import { startMerchantHosts } from "../../../../src/services/merchants.ts";
import { permit2WalletHolding, startMiner } from "../../../helpers/chain.ts";
import { isolatedDatabaseOptions, openTestDatabase } from "../../../helpers/db.ts";
import { testMerchant } from "../../../helpers/merchant.ts";
import { channelClient, channelPayer, stockFacilitator } from "../../../helpers/stock-facilitator.ts";
import { newMerchant, usdcReader, x402ClientFor } from "../../../helpers/x402.ts";

const input = z.object({ text: z.string().default("hi") });
const output = z.object({ text: z.string() });
const common = { input, output, example: { input: { text: "hi" }, output: { text: "hi" } } };

const ENDPOINTS: AnyEndpoint[] = [
  defineEndpoint({
    ...common,
    method: "GET",
    path: "/api/tick",
    price: "0.001",
    description: "Echoes.",
    handler: async (v) => v,
  }),
  defineEndpoint({
    ...common,
    method: "POST",
    path: "/api/metered",
    price: "0.01",
    scheme: "upto",
    description: "Charges 1,234 atomic units of its $0.01.",
    handler: async (value, ctx) => {
      ctx.meter?.(1234n);
      return value;
    },
  }),
  defineEndpoint({
    ...common,
    method: "GET",
    path: "/api/channel",
    price: "0.001",
    scheme: ["exact", "batch-settlement"],
    description: "Echoes, through a channel too.",
    handler: async (v) => v,
  }),
  defineEndpoint({
    ...common,
    method: "GET",
    path: "/api/metered-channel",
    price: "0.01",
    scheme: ["upto", "batch-settlement"],
    description: "Charges 1,234 atomic units of its $0.01, through a channel too.",
    handler: async (value, ctx) => {
      ctx.meter?.(1234n);
      return value;
    },
  }),
  defineEndpoint({
    method: "GET",
    path: "/api/stream",
    price: "0.001",
    description: "Streams a line, then its settlement.",
    input,
    output: z.string(),
    outputMedia: ["text/plain"],
    example: { input: {}, output: "start\nline\nPAYMENT-RESPONSE\n" },
    streaming: "Charged its price once delivered.",
    handler: async () => {
      async function* parts() {
        yield "line\n";
      }
      return new Streamed({
        headers: { "content-type": "text/plain" },
        head: "start\n",
        parts: parts(),
        meter: () => 0n,
        end: (ending) => `${ending.paymentResponse ?? ""}\n`,
      });
    },
  }),
];

const signer = privateKeyToAccount(generatePrivateKey());
const payTo = newMerchant();
let devnet: Devnet;
let facilitator: ReturnType<typeof stockFacilitator>;
let miner: ReturnType<typeof startMiner>;
let usdc: ReturnType<typeof usdcReader>;
let state: Awaited<ReturnType<typeof openTestDatabase>>;
let host: Listening;
let url: string;

beforeAll(async () => {
  devnet = await startDevnet({ port: 0, buyers: 2, blockTime: 0 });
  miner = startMiner(devnet);
  usdc = usdcReader(devnet.rpc);
  state = await openTestDatabase("pglite");
  const config = loadConfig({ env: {} });
  facilitator = stockFacilitator(devnet);
  host = await listenWithUrl(
    async (u) =>
      (
        await merchantApp(
          { ...testMerchant(payTo, u, ENDPOINTS), receiptSigner: signer },
          {
            services: { db: state.db, config },
            facilitator,
            payments: { ...config.payments, rpcUrl: devnet.rpc },
          },
        )
      ).fetch,
    "127.0.0.1",
    0,
  );
  url = host.url;
}, 60_000);
afterAll(async () => {
  await host?.close();
  await state?.close();
  await miner?.stop();
  await devnet?.stop();
});

const buyer = (i: number) => devnet.buyers[i] as DevnetAccount;

/** The 402 of `path` on the fixture's host, its signed offers decoded by the SDK's client helper. */
const offersOf = (path: string) => offersAt(`${url}${path}`);

async function offersAt(resource: string) {
  const required = decodePaymentRequiredHeader(
    (await fetch(resource)).headers.get("payment-required") as string,
  );
  return { required, offers: decodeSignedOffers(extractOffersFromPaymentRequired(required)) };
}

/** The SDK's receipt of a paid answer, its signature checked by the SDK, and the kit's check of the whole. */
async function receiptOf(answer: Response, request: Request) {
  expect(answer.status).toBe(200);
  const receipt = extractReceiptFromResponse(answer) as EIP712SignedReceipt;
  expect((await verifyReceiptSignatureEIP712(receipt)).signer).toBe(signer.address);
  const header = answer.headers.get("payment-response") as string;
  const verified = await verifyReceipt(header, { signer: signer.address, request });
  return { receipt, verified, settlement: decodePaymentResponseHeader(header), header };
}

describe("offers", () => {
  it("signs each way to pay in a 402, and the SDK's helpers find each offer's terms among the accepts", async () => {
    const { required, offers } = await offersOf("/api/channel?text=offer");
    const known = (await (await fetch(`${url}/.well-known/x402`)).json()) as { receipts?: unknown };
    expect(offers.map((o) => o.scheme).sort()).toEqual(["batch-settlement", "exact"]);
    for (const offer of offers) {
      const { signer: by, payload } = await verifyOfferSignatureEIP712(
        offer.signedOffer as EIP712SignedOffer,
      );
      expect(by).toBe(signer.address);
      // The signer is the one the host names in its discovery document.
      expect(known.receipts).toEqual({ kid: `did:pkh:eip155:1:${signer.address}`, signer: signer.address });
      // The resource is the endpoint: the query is the call's input, bound by the charge's request hash.
      expect(payload.resourceUrl).toBe(`${url}/api/channel`);
      const accepted = findAcceptsObjectFromSignedOffer(offer, required.accepts) as PaymentRequirements;
      expect(accepted.scheme).toBe(offer.scheme);
      expect(offer.amount).toBe("1000");
      expect(offer.validUntil).toBeGreaterThan(Date.now() / 1000);
    }
  });
});

describe("receipts", () => {
  it("exact: the receipt matches the offer, and its charge states the price, the transaction and the request", async () => {
    const { offers } = await offersOf("/api/tick");
    const request = new Request(`${url}/api/tick?text=exact`);
    const answer = await wrapFetchWithPayment(fetch, x402ClientFor(buyer(0), "exact"))(request.clone());
    const { receipt, verified, settlement } = await receiptOf(answer, request);
    const offer = offers.find((o) => o.scheme === "exact");
    expect(offer && verifyReceiptMatchesOffer(receipt, offer, [buyer(0).address])).toBe(true);
    expect(receipt.payload.transaction).toBe(settlement.transaction);
    expect(verified.charge).toMatchObject({
      scheme: "exact",
      amount: "1000",
      ceiling: "1000",
      payTo,
      transaction: settlement.transaction,
      channel: "",
      requestHash: await requestHash(request),
    });
  });

  it("upto: the charge states the amount metered beside the ceiling the buyer signed, and what moved is that amount", async () => {
    const wallet = await permit2WalletHolding(devnet, 100_000n);
    const before = await usdc.balanceOf(payTo);
    const init = {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"text": "upto"}',
    };
    const answer = await wrapFetchWithPayment(fetch, x402ClientFor(wallet, "upto"))(
      `${url}/api/metered`,
      init,
    );
    const { verified } = await receiptOf(answer, new Request(`${url}/api/metered`, init));
    expect(verified.charge).toMatchObject({ scheme: "upto", amount: "1234", ceiling: "10000" });
    expect((await usdc.balanceOf(payTo)) - before).toBe(1234n);
    // Another body is another request: the charge is not its.
    await expect(
      verifyReceipt(answer.headers.get("payment-response"), {
        request: new Request(`${url}/api/metered`, { ...init, body: '{"text": "other"}' }),
      }),
    ).rejects.toThrow(/another request/);
  });

  it("batch-settlement: the deposit's call and vouchers' each state their charge (a metered one's too) and the channel", async () => {
    const pay = wrapFetchWithPayment(
      fetch,
      channelPayer(channelClient(devnet, buyer(1), { salt: 5n, deposit: 100_000n })),
    );
    const charges = [];
    for (const text of ["deposit", "voucher"]) {
      const request = new Request(`${url}/api/channel?text=${text}`);
      charges.push((await receiptOf(await pay(request.clone()), request)).verified.charge);
    }
    const [deposit, voucher] = charges;
    expect(deposit).toMatchObject({ scheme: "batch-settlement", amount: "1000", ceiling: "1000" });
    expect(deposit?.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    // A voucher moves nothing now: its charge is claimed later, from the channel it names.
    expect(voucher).toMatchObject({ scheme: "batch-settlement", amount: "1000", transaction: "" });
    expect(voucher?.channel).toMatch(/^0x[0-9a-f]{64}$/);
    expect(voucher?.channel).toBe(deposit?.channel);
    // On a metered endpoint a channel's call is charged what it metered, beside the call's price.
    const metered = new Request(`${url}/api/metered-channel?text=metered`);
    const { verified } = await receiptOf(await pay(metered.clone()), metered);
    expect(verified.charge).toMatchObject({ scheme: "batch-settlement", amount: "1234", ceiling: "10000" });
    expect(verified.charge?.channel).toBe(deposit?.channel);
  });

  it("a streamed answer's receipt comes in its last event, with its settlement", async () => {
    const request = new Request(`${url}/api/stream`);
    const answer = await wrapFetchWithPayment(fetch, x402ClientFor(buyer(0), "exact"))(request.clone());
    const [, , last] = (await answer.text()).split("\n");
    const verified = await verifyReceipt(last, { signer: signer.address, request });
    expect(verified.charge).toMatchObject({
      scheme: "exact",
      amount: "1000",
      resourceUrl: `${url}/api/stream`,
    });
  });

  it("over MCP: the tool's 402 carries the offers, its result's settlement the receipt and charge", async () => {
    const mcp = await connectMcp(`${url}/mcp`);
    onTestFinished(() => mcp.close());
    const call = await callPaidTool(mcp, x402ClientFor(buyer(0), "exact"), "api_tick", { text: "mcp" });
    expect(extractOffersFromPaymentRequired(call.required as never)).not.toEqual([]);
    const verified = await verifyReceipt(call.settlement, { signer: signer.address });
    expect(verified.charge).toMatchObject({
      scheme: "exact",
      amount: "1000",
      resourceUrl: `${url}/api/tick`,
    });
  });

  it("refuses a receipt or a charge altered after signing, and one signed by another key", async () => {
    const request = new Request(`${url}/api/tick?text=tamper`);
    const answer = await wrapFetchWithPayment(fetch, x402ClientFor(buyer(0), "exact"))(request.clone());
    const { settlement } = await receiptOf(answer, request);
    const extensions = settlement.extensions as Record<string, { info: Record<string, { payload: object }> }>;
    const info = extensions["offer-receipt"]?.info as Record<string, { payload: object }>;
    const altered = (part: "receipt" | "charge", change: object) => ({
      ...info,
      [part]: { ...info[part], payload: { ...info[part]?.payload, ...change } },
    });
    await expect(verifyReceipt(altered("charge", { amount: "1" }))).rejects.toThrow(
      /the charge is signed by 0x[0-9a-fA-F]{40}, the receipt by/,
    );
    await expect(verifyReceipt(altered("receipt", { payer: payTo }))).rejects.toThrow(/signed by/);
    await expect(verifyReceipt(info, { signer: payTo })).rejects.toThrow(`not by ${payTo}`);
    // As it was signed, it verifies.
    expect((await verifyReceipt(info, { signer: signer.address })).signerTrusted).toBe(true);
  });
});

describe("a merchant as serve runs it", () => {
  it("signs its offers and receipts with the key made in its data directory, and its receipts verify", async () => {
    const data = await isolatedDatabaseOptions("pglite", "merchants");
    onTestFinished(data.cleanup);
    const config = loadConfig({
      env: { X402M_DATA: data.dataDir, X402M_UTILITY_PAY_TO: payTo, X402M_UTILITY_PORT: "0" },
    });
    const lifecycle = new Lifecycle();
    onTestFinished(() => lifecycle.close());
    const hosts = await startMerchantHosts(config, ["utility"], facilitator, lifecycle);
    const key = fs.readFileSync(receiptKeyFile(data.dataDir, "utility"), "utf8").trim() as `0x${string}`;
    const kept = privateKeyToAccount(key).address;
    const resource = `${hosts.urls.utility}/api/calc`;
    const { offers } = await offersAt(`${resource}?expr=1`);
    const [offer] = offers;
    expect((await verifyOfferSignatureEIP712(offer?.signedOffer as EIP712SignedOffer)).signer).toBe(kept);
    const request = new Request(`${resource}?expr=6*7`);
    const answer = await wrapFetchWithPayment(fetch, x402ClientFor(buyer(0), "exact"))(request.clone());
    expect(answer.status).toBe(200);
    const verified = await verifyReceipt(answer.headers.get("payment-response"), { signer: kept, request });
    expect(verified.charge).toMatchObject({ scheme: "exact", amount: "1000", resourceUrl: resource });
  }, 60_000);
});

describe("the receipt key", () => {
  it("is the host's variable or file (an alias host's is its source's), never both, and a bad one names its variable", () => {
    const key = generatePrivateKey();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-receipt-key-"));
    try {
      const file = path.join(dir, "key");
      fs.writeFileSync(file, `${key}\n`);
      const merchants = (env: Record<string, string>) => loadConfig({ env }).merchants;
      expect(merchants({ X402M_UTILITY_RECEIPT_KEY: key })["utility-alias"]?.receiptKey).toBe(key);
      expect(merchants({ X402M_INFERENCE_RECEIPT_KEY_FILE: file }).inference?.receiptKey).toBe(key);
      expect(merchants({}).social?.receiptKey).toBeNull();
      expect(() => merchants({ X402M_SOCIAL_RECEIPT_KEY: key, X402M_SOCIAL_RECEIPT_KEY_FILE: file })).toThrow(
        /both X402M_SOCIAL_RECEIPT_KEY and X402M_SOCIAL_RECEIPT_KEY_FILE/,
      );
      expect(() => merchants({ X402M_SOCIAL_RECEIPT_KEY: "0x12" })).toThrow(/X402M_SOCIAL_RECEIPT_KEY/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("when none is set, is made once in the data directory, for its owner alone, and the same after", () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-receipt-data-"));
    try {
      const made = storedReceiptKey(dataDir, "utility");
      expect(made).toMatch(/^0x[0-9a-f]{64}$/);
      expect(fs.statSync(receiptKeyFile(dataDir, "utility")).mode & 0o777).toBe(0o600);
      expect(storedReceiptKey(dataDir, "utility")).toBe(made);
      expect(storedReceiptKey(dataDir, "inference")).not.toBe(made);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
