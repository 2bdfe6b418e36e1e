/**
 * exact through the Permit2 proxy beside EIP-3009 (`exactTransfers: ["eip3009", "permit2"]`): the 402 lists
 * both, EIP-3009 first; the SDK's own exact client, choosing the Permit2 option, pays the price once through
 * x402's exact proxy and the project's facilitator, which is asked about the Permit2 option, not the
 * EIP-3009 one; the ledger keys the payment by its Permit2 nonce, so the same payment sent again, or at once,
 * runs once and is charged once; a wallet that never approved Permit2 is refused 412 and pays nothing; a
 * buyer that does not choose still pays with EIP-3009; the MCP face takes the Permit2 option as the route
 * does; a guarded endpoint sees a settled Permit2 payment in the balance (Permit2's nonce bitmap), not still
 * in flight.
 */
import { x402Client } from "@x402/core/client";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import type { PaymentRequirements } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { getAddress, parseEventLogs } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { X402_EXACT_PROXY_ADDRESS } from "../../../src/chain/base.ts";
import type { DevnetAccount } from "../../../src/chain/devnet/index.ts";
import { usdcAbi } from "../../../src/chain/usdc.ts";
import type { Database } from "../../../src/common/db/index.ts";
import type { Listening } from "../../../src/common/listen.ts";
import { type Facilitator, inProcessClient } from "../../../src/facilitator/index.ts";
import { defineEndpoint } from "../../../src/merchant-kit/endpoint.ts";
import { callPaidTool, connectMcp } from "../../../src/merchant-kit/mcp/client.ts";
import { merchantTools } from "../../../src/merchant-kit/mcp/tools.ts";
import { permit2WalletHolding, useDevnet, walletHolding } from "../../helpers/chain.ts";
import { DATABASE_KINDS, LEDGER_KIND, openTestDatabase } from "../../helpers/db.ts";
import { devnetFacilitator } from "../../helpers/facilitator.ts";
import { startMerchant, testMerchant } from "../../helpers/merchant.ts";
import { NETWORK, newMerchant, recordingFetch, usdcReader } from "../../helpers/x402.ts";

/** $0.002: 2,000 atomic units. */
const PRICE = 2_000n;
const ran = new Map<string, number>();
const count = (path: string) => ran.set(path, (ran.get(path) ?? 0) + 1);

const echo = defineEndpoint({
  method: "GET",
  path: "/api/echo",
  price: "0.002",
  exactTransfers: ["eip3009", "permit2"],
  description: "Echoes a text, slowly enough for copies of one payment to overlap.",
  input: z.object({ text: z.string().min(1), delay: z.coerce.number().int().max(2000).default(0) }),
  output: z.object({ text: z.string(), payer: z.string() }),
  example: {
    input: { text: "hi" },
    output: { text: "hi", payer: "0x0000000000000000000000000000000000000001" },
  },
  handler: async ({ text, delay }, ctx) => {
    count("/api/echo");
    await new Promise((resolve) => setTimeout(resolve, delay));
    return { text, payer: ctx.payer };
  },
});

/** Guarded (it costs upstream): its payer's funds are reserved, payments in flight counted. */
const model = defineEndpoint({
  method: "GET",
  path: "/api/model",
  price: "0.002",
  exactTransfers: ["eip3009", "permit2"],
  effects: ["upstream"],
  description: "Stands for a call that costs the merchant money upstream.",
  input: z.object({}),
  output: z.object({ answer: z.string() }),
  example: { input: {}, output: { answer: "42" } },
  handler: async () => {
    count("/api/model");
    return { answer: "42" };
  },
});

/** Picks the 402's exact option through Permit2, as a wallet that signs Permit2 rather than EIP-3009 does. */
const permit2Option = (_version: number, accepts: PaymentRequirements[]) =>
  accepts.find((a) => a.extra?.assetTransferMethod === "permit2") ?? (accepts[0] as PaymentRequirements);

/** The SDK's own exact client for `buyer`: choosing the Permit2 option, or (no selector) the first. */
const exactClient = (buyer: DevnetAccount, choose?: typeof permit2Option) =>
  new x402Client(choose).register(NETWORK, new ExactEvmScheme(privateKeyToAccount(buyer.privateKey)));

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

describe.each(DATABASE_KINDS)("exact through Permit2 beside EIP-3009, merchant state on %s", (kind) => {
  let shop: Listening;
  let db: Database;
  const payTo = newMerchant();
  // Each kind its own buyers: balances no other case moves.
  const offset = kind === "pglite" ? 0 : 2;
  const permit2Buyer = () => chain.devnet.buyers[offset] as DevnetAccount;
  const defaultBuyer = () => chain.devnet.buyers[offset + 1] as DevnetAccount;
  /** What the facilitator was asked to verify and settle against. */
  const asked: { call: "verify" | "settle"; requirements: PaymentRequirements }[] = [];

  beforeAll(async () => {
    const opened = await openTestDatabase(kind);
    closers.push(opened.close);
    db = opened.db;
    const client = inProcessClient(facilitator);
    const recording: FacilitatorClient = {
      verify: (payload, requirements) => {
        asked.push({ call: "verify", requirements });
        return client.verify(payload, requirements);
      },
      settle: (payload, requirements) => {
        asked.push({ call: "settle", requirements });
        return client.settle(payload, requirements);
      },
      getSupported: () => client.getSupported(),
    };
    shop = await startMerchant((url) => testMerchant(payTo, url, [echo, model]), db, recording, {
      rpcUrl: chain.devnet.rpc,
    });
    closers.push(() => shop.close());
  });

  const echoUrl = (text: string, delay = 0) => `${shop.url}/api/echo?text=${text}&delay=${delay}`;
  const ledgerRows = async (payer: string) =>
    (
      await db.query<{ nonce: string; state: string }>(
        "SELECT nonce, state FROM merchant_payments WHERE payer = $1 ORDER BY taken_at",
        [payer.toLowerCase()],
      )
    ).rows;

  it("offers exact through EIP-3009 first, then through Permit2, and says so in its documents", async () => {
    const unpaid = await fetch(echoUrl("hi"));
    expect(unpaid.status).toBe(402);
    const { accepts } = decodePaymentRequiredHeader(unpaid.headers.get("payment-required") as string);
    const domain = { name: "USD Coin", version: "2" };
    expect(accepts).toEqual([
      expect.objectContaining({ scheme: "exact", amount: PRICE.toString(), payTo, extra: domain }),
      expect.objectContaining({
        scheme: "exact",
        amount: PRICE.toString(),
        payTo,
        extra: { ...domain, assetTransferMethod: "permit2" },
      }),
    ]);

    const doc = await (await fetch(`${shop.url}/openapi.json`)).json();
    const op = doc.paths["/api/echo"].get;
    expect(op["x-payment-info"].price).toEqual({ mode: "fixed", currency: "USD", amount: "0.002" });
    expect(op["x-payment-info"].protocols.map((p: { x402: object }) => p.x402)).toEqual([
      expect.not.objectContaining({ extra: expect.anything() }),
      expect.objectContaining({ scheme: "exact", extra: { assetTransferMethod: "permit2" } }),
    ]);
    expect(op.description).toContain("EIP-3009 authorization or, for wallets that sign Permit2");
    expect(op.responses["412"].description).toContain("exact payment through Permit2");
    expect(op.responses["412"].description).toContain("permit2_allowance_required");
    expect(doc.info["x-guidance"]).toContain('extra.assetTransferMethod "permit2"');
    const llms = await (await fetch(`${shop.url}/llms.txt`)).text();
    expect(llms).toContain(
      "$0.002 per call (x402 scheme exact, as an EIP-3009 authorization or through Permit2)",
    );
    expect(await (await fetch(`${shop.url}/docs`)).text()).toContain(
      "The listed price may also be paid through Permit2",
    );
    const [tool] = merchantTools(testMerchant(payTo, shop.url, [echo]));
    expect(tool?.definition.description).toContain("for wallets that sign Permit2, as a Permit2 transfer");
  });

  it("charges a buyer choosing Permit2 exactly the price once, through the exact proxy", async () => {
    const buyer = permit2Buyer();
    const [buyerBefore, shopBefore] = [await usdc.balanceOf(buyer.address), await usdc.balanceOf(payTo)];
    const recorded = recordingFetch();
    asked.length = 0;
    const paid = await wrapFetchWithPayment(
      recorded.fetch,
      exactClient(buyer, permit2Option),
    )(echoUrl("one"));
    expect(paid.status, await paid.clone().text()).toBe(200);
    expect(await paid.json()).toEqual({ text: "one", payer: buyer.address.toLowerCase() });
    const [signature] = recorded.signatures;
    const payment = JSON.parse(Buffer.from(signature as string, "base64").toString());
    expect(payment.payload).toHaveProperty("permit2Authorization");
    // Asked about the Permit2 option, though the EIP-3009 one, listed first, is a subset of it.
    expect(asked.map((a) => [a.call, a.requirements.extra?.assetTransferMethod])).toEqual([
      ["verify", "permit2"],
      ["settle", "permit2"],
    ]);

    const receipt = decodePaymentResponseHeader(paid.headers.get("payment-response") as string);
    expect(receipt).toMatchObject({ success: true, network: NETWORK, payer: buyer.address });
    const mined = await usdc.receipt(receipt.transaction as `0x${string}`);
    expect(mined.to?.toLowerCase()).toBe(X402_EXACT_PROXY_ADDRESS.toLowerCase());
    const transfers = parseEventLogs({ abi: usdcAbi, logs: mined.logs, eventName: "Transfer" });
    expect(transfers.map((t) => t.args)).toEqual([
      { from: getAddress(buyer.address), to: getAddress(payTo), value: PRICE },
    ]);
    expect(await usdc.balanceOf(buyer.address)).toBe(buyerBefore - PRICE);
    expect(await usdc.balanceOf(payTo)).toBe(shopBefore + PRICE);

    // Keyed by its Permit2 nonce, which the buyer signed.
    const nonce = BigInt(payment.payload.permit2Authorization.nonce).toString(16).padStart(64, "0");
    expect(await ledgerRows(buyer.address)).toEqual([{ nonce: `permit2:0x${nonce}`, state: "settled" }]);

    // The same payment again: refused, the handler not run, nothing more charged.
    const ranBefore = ran.get("/api/echo");
    const again = await fetch(echoUrl("one"), { headers: { "payment-signature": signature as string } });
    expect([402, 409]).toContain(again.status);
    expect(ran.get("/api/echo")).toBe(ranBefore);
    expect(await usdc.balanceOf(buyer.address)).toBe(buyerBefore - PRICE);
    expect(await usdc.balanceOf(payTo)).toBe(shopBefore + PRICE);
  });

  it("runs one Permit2 payment sent four times at once once, and charges it once", async () => {
    const buyer = permit2Buyer();
    const unpaid = await fetch(echoUrl("many", 200));
    const required = decodePaymentRequiredHeader(unpaid.headers.get("payment-required") as string);
    const header = encodePaymentSignatureHeader(
      await exactClient(buyer, permit2Option).createPaymentPayload(required),
    );
    const [before, ranBefore] = [await usdc.balanceOf(buyer.address), ran.get("/api/echo") ?? 0];
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        fetch(echoUrl("many", 200), { headers: { "payment-signature": header } }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(
      statuses.filter((s) => s === 200),
      JSON.stringify(statuses),
    ).toHaveLength(1);
    expect(statuses.every((s) => s === 200 || s === 402 || s === 409)).toBe(true);
    expect((ran.get("/api/echo") ?? 0) - ranBefore).toBe(1);
    expect(await usdc.balanceOf(buyer.address)).toBe(before - PRICE);
  });

  it("refuses a wallet that never approved Permit2 with 412 permit2_allowance_required, charging nothing", async () => {
    const wallet = await walletHolding(chain.devnet, PRICE * 2n, offset + 1);
    const ranBefore = ran.get("/api/echo");
    const refused = await wrapFetchWithPayment(fetch, exactClient(wallet, permit2Option))(echoUrl("no"));
    expect(refused.status).toBe(412);
    const required = decodePaymentRequiredHeader(refused.headers.get("payment-required") as string);
    expect(required.error).toBe("permit2_allowance_required");
    expect(ran.get("/api/echo")).toBe(ranBefore);
    expect(await usdc.balanceOf(wallet.address)).toBe(PRICE * 2n);
    expect(await ledgerRows(wallet.address)).toEqual([]);
  });

  it("still charges a buyer that does not choose through EIP-3009", async () => {
    const buyer = defaultBuyer();
    const before = await usdc.balanceOf(buyer.address);
    const recorded = recordingFetch();
    asked.length = 0;
    const paid = await wrapFetchWithPayment(recorded.fetch, exactClient(buyer))(echoUrl("plain"));
    expect(paid.status, await paid.clone().text()).toBe(200);
    const payment = JSON.parse(Buffer.from(recorded.signatures[0] as string, "base64").toString());
    expect(payment.payload).toHaveProperty("authorization");
    expect(payment.accepted.extra).toEqual({ name: "USD Coin", version: "2" });
    expect(asked.map((a) => [a.call, a.requirements.extra?.assetTransferMethod])).toEqual([
      ["verify", undefined],
      ["settle", undefined],
    ]);
    expect(await usdc.balanceOf(buyer.address)).toBe(before - PRICE);
    expect(await ledgerRows(buyer.address)).toEqual([
      { nonce: payment.payload.authorization.nonce.toLowerCase(), state: "settled" },
    ]);
  });

  it("takes the Permit2 option over MCP too: the tool's payment settled through the proxy", async () => {
    const buyer = permit2Buyer();
    const before = await usdc.balanceOf(buyer.address);
    const mcp = await connectMcp(`${shop.url}/mcp`);
    try {
      const call = await callPaidTool(mcp, exactClient(buyer, permit2Option), "api_echo", { text: "mcp" });
      expect(call.result.isError, JSON.stringify(call.result)).toBeFalsy();
      expect(call.payment?.accepted.extra?.assetTransferMethod).toBe("permit2");
      expect(call.settlement).toMatchObject({ success: true, payer: buyer.address });
      const mined = await usdc.receipt(call.settlement?.transaction as `0x${string}`);
      expect(mined.to?.toLowerCase()).toBe(X402_EXACT_PROXY_ADDRESS.toLowerCase());
    } finally {
      await mcp.close();
    }
    expect(await usdc.balanceOf(buyer.address)).toBe(before - PRICE);
  });

  it("counts a settled Permit2 payment in the balance, not in flight: a wallet holding two calls pays two", async () => {
    const wallet = await permit2WalletHolding(chain.devnet, PRICE * 2n, offset + 1);
    const pay = wrapFetchWithPayment(fetch, exactClient(wallet, permit2Option));
    const first = await pay(`${shop.url}/api/model`);
    expect(first.status, await first.clone().text()).toBe(200);
    // At once: the first is settled, its nonce used in Permit2's bitmap, its transfer in the balance.
    const second = await pay(`${shop.url}/api/model`);
    expect(second.status, await second.clone().text()).toBe(200);
    expect(await usdc.balanceOf(wallet.address)).toBe(0n);
  });
});
