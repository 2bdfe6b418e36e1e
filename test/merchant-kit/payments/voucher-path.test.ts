/**
 * The kit decides a channel's voucher itself (payments/voucher-path.ts) with the SDK's verdicts: two hosts of the
 * same merchant on the same store, one deciding vouchers through `@x402/hono`'s middleware as before
 * (`vouchersThroughSdk`), the other itself, each paid through a channel of its own kept at the same state, are
 * sent the same payloads (valid, a metered call, the wrong amount, a stale one, the same one again, the wrong
 * channel, a bad signature, an offer no longer made, the wrong network or asset, an extension's echo changed, a
 * refusal by the handler) and must answer alike: status, body, the payment headers decoded, `Cache-Control`, the
 * channel's charge, with only the channel's id, its salt and the host's address told apart. Each case also says
 * whether the kit's host decided it without the middleware, which a spy on the SDK's `processHTTPRequest` checks.
 * And the kit's `PAYMENT-RESPONSE`, encoded its own way, is the SDK's byte for byte.
 */
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import { x402HTTPResourceServer, x402ResourceServer } from "@x402/core/server";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { computeChannelId, signVoucher } from "@x402/evm/batch-settlement/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { DevnetAccount } from "../../../src/chain/devnet/index.ts";
import type { Database } from "../../../src/common/db/index.ts";
import { type Listening, listenWithUrl } from "../../../src/common/listen.ts";
import { merchantApp } from "../../../src/merchant-kit/app.ts";
import { ChannelStore } from "../../../src/merchant-kit/channels/index.ts";
import { PublicUrlResourceServer } from "../../../src/merchant-kit/payments/resource-server.ts";
import { useDevnet } from "../../helpers/chain.ts";
import { channelEndpoints, PRICE, requiredBy, type Tally } from "../../helpers/channel-shop.ts";
import { DATABASE_KINDS, openTestDatabase } from "../../helpers/db.ts";
import { gates } from "../../helpers/gates.ts";
import { testConfig, testMerchant } from "../../helpers/merchant.ts";
import {
  channelClient,
  channelPayer,
  type StockFacilitator,
  stockFacilitator,
} from "../../helpers/stock-facilitator.ts";
import { NETWORK, newMerchant } from "../../helpers/x402.ts";

const DEPOSIT = 1_000_000n;

const chain = useDevnet({ buyers: 1 });
let facilitator: StockFacilitator;
const gate = gates();
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  facilitator = stockFacilitator(chain.devnet);
}, 60_000);
afterAll(async () => {
  gate.close();
  for (const close of closers.reverse()) await close();
});

const buyer = () => chain.devnet.buyers[0] as DevnetAccount;

/** One host and the channel a buyer pays it through. */
interface Side {
  host: Listening;
  client: ReturnType<typeof channelClient>;
  salt: bigint;
  channelId: `0x${string}`;
  /** The voucher signatures sent to it, in order: each channel's are its own, told apart by their place. */
  signatures: string[];
}

async function host(db: Database, payTo: `0x${string}`, vouchersThroughSdk: boolean): Promise<Listening> {
  const config = testConfig();
  const payments = { ...config.payments, rpcUrl: chain.devnet.rpc };
  const tally: Tally = { runs: 0, running: 0, mostAtOnce: 0 };
  const served = await listenWithUrl(
    async (url) =>
      (
        await merchantApp(testMerchant(payTo, url, channelEndpoints(gate, tally)), {
          services: { db, config },
          facilitator,
          payments,
          vouchersThroughSdk,
        })
      ).fetch,
    "127.0.0.1",
    0,
  );
  closers.push(() => served.close());
  return served;
}

/** A host and its channel, opened by the SDK's client (a deposit and its first call, charged `PRICE`). */
async function side(db: Database, payTo: `0x${string}`, sdk: boolean, salt: bigint): Promise<Side> {
  const served = await host(db, payTo, sdk);
  const client = channelClient(chain.devnet, buyer(), { salt, deposit: DEPOSIT });
  const opened = await wrapFetchWithPayment(fetch, channelPayer(client))(`${served.url}/api/counted`);
  expect(opened.status).toBe(200);
  const required = await requiredBy(`${served.url}/api/counted`);
  const accept = required.accepts.find((a) => a.scheme === "batch-settlement");
  const channelId = computeChannelId(client.buildChannelConfig(accept as never), NETWORK);
  return { host: served, client, salt, channelId, signatures: [] };
}

/** What a case sends: a path, and the payload as the buyer would sign it, maybe changed after. */
interface Case {
  name: string;
  path: string;
  init?: RequestInit;
  /** The cumulative amount the voucher signs, over what the channel has been charged. */
  cap: (charged: bigint) => bigint;
  change?: (payload: PaymentPayload, required: PaymentRequired) => Promise<void> | void;
  /** Sends the previous case's header again instead. */
  again?: boolean;
  /** Whether the kit's host decides it itself (else the SDK's middleware answers, nothing having changed). */
  direct: boolean;
}

const post = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});
const stranger = privateKeyToAccount(`0x${"b2".repeat(32)}`);

const CASES: Case[] = [
  { name: "valid", path: "/api/counted", cap: (c) => c + PRICE, direct: true },
  { name: "the same voucher again", path: "/api/counted", cap: (c) => c, again: true, direct: true },
  { name: "metered", path: "/v1/metered", init: post({ cost: 1234 }), cap: (c) => c + 10_000n, direct: true },
  { name: "wrong amount", path: "/api/counted", cap: (c) => c + PRICE + 1n, direct: true },
  { name: "stale cumulative", path: "/api/counted", cap: (c) => c, direct: true },
  {
    name: "wrong channel",
    path: "/api/counted",
    cap: (c) => c + PRICE,
    change: async (p) => {
      const raw = p.payload as {
        voucher: Awaited<ReturnType<typeof signVoucher>>;
      };
      const other = `0x${"ab".repeat(32)}` as const;
      raw.voucher = await signVoucher(
        privateKeyToAccount(buyer().privateKey),
        other,
        raw.voucher.maxClaimableAmount,
        NETWORK,
      );
    },
    direct: true,
  },
  {
    name: "bad signature",
    path: "/api/counted",
    cap: (c) => c + PRICE,
    change: async (p) => {
      const raw = p.payload as {
        voucher: Awaited<ReturnType<typeof signVoucher>>;
      };
      raw.voucher = await signVoucher(
        stranger,
        raw.voucher.channelId as `0x${string}`,
        raw.voucher.maxClaimableAmount,
        NETWORK,
      );
    },
    direct: true,
  },
  {
    name: "an offer no longer made (another time-out)",
    path: "/api/counted",
    cap: (c) => c + PRICE,
    change: (p) => {
      p.accepted = { ...p.accepted, maxTimeoutSeconds: p.accepted.maxTimeoutSeconds + 1 };
    },
    direct: false,
  },
  {
    name: "wrong network",
    path: "/api/counted",
    cap: (c) => c + PRICE,
    change: (p) => {
      p.accepted = { ...p.accepted, network: "eip155:1" };
    },
    direct: false,
  },
  {
    name: "wrong asset",
    path: "/api/counted",
    cap: (c) => c + PRICE,
    change: (p) => {
      p.accepted = { ...p.accepted, asset: "0x0000000000000000000000000000000000000001" };
    },
    direct: false,
  },
  {
    name: "an extension's echo changed",
    path: "/api/counted",
    cap: (c) => c + PRICE,
    change: (p) => {
      const bazaar = p.extensions?.bazaar as { info?: Record<string, unknown> } | undefined;
      if (!bazaar?.info) throw new Error("the route declares no Bazaar extension to echo");
      bazaar.info = { ...bazaar.info, output: { type: "json", example: { changed: true } } };
    },
    direct: false,
  },
  { name: "refused by its handler", path: "/api/counted?refuse=true", cap: (c) => c + PRICE, direct: true },
  { name: "valid after all that", path: "/api/counted", cap: (c) => c + PRICE, direct: true },
];

/** The voucher header a case sends to `s`, for the channel's charge now. */
async function headerFor(s: Side, store: ChannelStore, c: Case): Promise<string> {
  const url = `${s.host.url}${c.path}`;
  const required = await requiredBy(url, c.init && { ...c.init });
  const accept = required.accepts.find((a) => a.scheme === "batch-settlement");
  if (!accept) throw new Error("no channel offered");
  const charged = BigInt((await store.get(s.channelId))?.chargedCumulativeAmount ?? "0");
  const config = s.client.buildChannelConfig(accept);
  const voucher = await signVoucher(
    privateKeyToAccount(buyer().privateKey),
    s.channelId,
    c.cap(charged).toString(),
    NETWORK,
  );
  const payload: PaymentPayload = {
    x402Version: 2,
    accepted: accept,
    payload: { type: "voucher", channelConfig: config, voucher } as unknown as PaymentPayload["payload"],
    resource: required.resource,
    ...(required.extensions && { extensions: structuredClone(required.extensions) }),
  };
  await c.change?.(payload, required);
  s.signatures.push((payload.payload as { voucher: { signature: string } }).voucher.signature);
  return encodePaymentSignatureHeader(payload);
}

/** An answer as compared: what a buyer reads of it, with what tells the two sides apart replaced. */
async function answerOf(s: Side, response: Response): Promise<unknown> {
  const decoded = (name: string, decode: (value: string) => unknown) => {
    const value = response.headers.get(name);
    return value === null ? null : decode(value);
  };
  const text = JSON.stringify({
    status: response.status,
    body: await response.text(),
    contentType: response.headers.get("content-type"),
    cacheControl: response.headers.get("cache-control"),
    required: decoded("payment-required", decodePaymentRequiredHeader),
    response: decoded("payment-response", decodePaymentResponseHeader),
  });
  const salt = `0x${s.salt.toString(16).padStart(64, "0")}`;
  const unsigned = s.signatures.reduce((t, signature, i) => t.replaceAll(signature, `SIGNATURE ${i}`), text);
  return JSON.parse(
    unsigned
      .replaceAll(s.host.url, "HOST")
      .replaceAll(s.channelId, "CHANNEL")
      .replaceAll(s.channelId.toLowerCase(), "CHANNEL")
      .replaceAll(salt, "SALT"),
  );
}

describe.each(DATABASE_KINDS)("a voucher decided by the kit, against the SDK's middleware, on %s", (kind) => {
  let store: ChannelStore;
  let sdk: Side;
  let kit: Side;

  beforeAll(async () => {
    const state = await openTestDatabase(kind);
    closers.push(state.close);
    const payTo = newMerchant();
    store = new ChannelStore(state.db, payTo);
    sdk = await side(state.db, payTo, true, 9_001n);
    kit = await side(state.db, payTo, false, 9_002n);
  }, 60_000);

  it("answers every payload as the SDK does, and charges the same", async () => {
    const processed = vi.spyOn(x402HTTPResourceServer.prototype, "processHTTPRequest");
    const last = new Map<Side, string>();
    for (const c of CASES) {
      const answers: unknown[] = [];
      for (const s of [sdk, kit]) {
        const header = c.again ? (last.get(s) as string) : await headerFor(s, store, c);
        last.set(s, header);
        processed.mockClear();
        const response = await fetch(`${s.host.url}${c.path}`, {
          ...c.init,
          headers: { ...(c.init?.headers as Record<string, string>), "PAYMENT-SIGNATURE": header },
        });
        answers.push(await answerOf(s, response));
        // The SDK's middleware processes every request of its host, and the kit's only those it does not decide.
        expect(processed.mock.calls.length > 0, `${c.name}: through the middleware`).toBe(
          s === sdk || !c.direct,
        );
      }
      expect(answers[1], c.name).toEqual(answers[0]);
      const charged = await Promise.all(
        [sdk, kit].map(async (s) => (await store.get(s.channelId))?.chargedCumulativeAmount),
      );
      expect(charged[1], `${c.name}: charged`).toBe(charged[0]);
    }
    processed.mockRestore();
    // Opened (PRICE), then valid, metered (1234) and the last valid: nothing else charged.
    const after = await store.get(kit.channelId);
    expect(after?.chargedCumulativeAmount).toBe((3n * PRICE + 1234n).toString());
    expect(after?.pendingRequest).toBeUndefined();
  }, 120_000);
});

describe("the kit's PAYMENT-RESPONSE", () => {
  it("is the SDK's encoding, byte for byte", () => {
    const server = new PublicUrlResourceServer(new x402ResourceServer(), {}, "https://api.example");
    const responses = [
      {
        success: true,
        transaction: "",
        network: NETWORK,
        payer: "0xab",
        amount: "1000",
        extra: { a: [1, "é"] },
      },
      { success: false, errorReason: "naïve — ünïcode ✓ 🚀", transaction: "0x12", network: NETWORK },
      { success: true, transaction: "0x", network: NETWORK, extensionResponses: { receipt: { x: 1 } } },
    ] as Parameters<typeof encodePaymentResponseHeader>[0][];
    for (const response of responses)
      expect(server.createSettlementHeaders(response)).toEqual({
        "PAYMENT-RESPONSE": encodePaymentResponseHeader(response),
      });
  });
});
