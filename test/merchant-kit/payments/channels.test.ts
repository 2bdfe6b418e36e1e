/**
 * Payment channels (`batch-settlement`) through the kit, end to end on a devnet: the SDK's own batch-settlement
 * client pays test endpoints of each kind through the SDK's own facilitator, the merchant's channel state on
 * PGlite and on the PostgreSQL server. The scheme is offered in the 402, the OpenAPI document, the Bazaar
 * extension and the MCP tools where the facilitator serves it, and nowhere where it does not; a call is charged
 * its price, or what it metered, once; a refusal charges nothing and the same voucher is taken again; work is
 * never done beyond what the voucher covers or the channel holds; a writing call's charge commits with its
 * writes, or neither does; a streamed answer is charged what it delivered, and one its caller left before
 * anything charges nothing and leaves the channel free; a refund returns the rest. (Concurrency:
 * channels-concurrency.test.ts.)
 */
import { decodePaymentResponseHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import { wrapFetchWithPayment } from "@x402/fetch";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { DevnetAccount } from "../../../src/chain/devnet/index.ts";
import type { Database } from "../../../src/common/db/index.ts";
import { listenWithUrl } from "../../../src/common/listen.ts";
import { merchantApp } from "../../../src/merchant-kit/app.ts";
import { callPaidTool, connectMcp } from "../../../src/merchant-kit/mcp/client.ts";
import { UNPAID_LIMIT } from "../../../src/merchant-kit/payments/ledger/payment-ledger.ts";
import { REFUND_PATH } from "../../../src/merchant-kit/routes.ts";
import { useDevnet } from "../../helpers/chain.ts";
import {
  type ChannelShop,
  channelEndpoints,
  channelOf,
  channelTerms,
  escrowOf,
  MAX,
  PART,
  PRICE,
  refusalOf,
  requiredBy,
  startChannelShop,
  type Tally,
  voucherHeader,
} from "../../helpers/channel-shop.ts";
import { DATABASE_KINDS, openTestDatabase } from "../../helpers/db.ts";
import { gates } from "../../helpers/gates.ts";
import { testConfig, testMerchant } from "../../helpers/merchant.ts";
import {
  channelClient,
  channelPayer,
  type StockFacilitator,
  stockFacilitator,
} from "../../helpers/stock-facilitator.ts";
import { newMerchant, usdcReader } from "../../helpers/x402.ts";

const MISMATCH = "invalid_batch_settlement_evm_cumulative_amount_mismatch";
const DEPOSIT = 100_000n;

const chain = useDevnet({ buyers: 2 });
let facilitator: StockFacilitator;
let usdc: ReturnType<typeof usdcReader>;
const gate = gates();
const closers: (() => Promise<void>)[] = [];
let salt = 1_000n;

beforeAll(async () => {
  facilitator = stockFacilitator(chain.devnet);
  usdc = usdcReader(chain.devnet.rpc);
}, 60_000);
afterAll(async () => {
  gate.close();
  for (const close of closers.reverse()) await close();
});

const buyer = () => chain.devnet.buyers[1] as DevnetAccount;
/** A client with a channel of its own: it deposits `deposit`, or with `null` the least the merchant takes. */
function payer(deposit: bigint | null = DEPOSIT) {
  const client = channelClient(chain.devnet, buyer(), { salt: ++salt, ...(deposit !== null && { deposit }) });
  return { client, pay: wrapFetchWithPayment(fetch, channelPayer(client)) };
}
const post = (body: unknown, signal?: AbortSignal) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
  ...(signal && { signal }),
});
const receiptOf = (answer: Response) =>
  decodePaymentResponseHeader(answer.headers.get("payment-response") as string);

/** The facilitator as one that does not serve channels: its `/supported` without them. */
function withoutChannels(inner: FacilitatorClient): FacilitatorClient {
  return {
    verify: (p, r) => inner.verify(p, r),
    settle: (p, r) => inner.settle(p, r),
    getSupported: async () => {
      const supported = await inner.getSupported();
      return { ...supported, kinds: supported.kinds.filter((k) => k.scheme !== "batch-settlement") };
    },
  };
}

describe("where payment channels are offered", () => {
  let db: Database;
  beforeAll(async () => {
    const state = await openTestDatabase("pglite");
    closers.push(state.close);
    db = state.db;
  });

  it("lists them in the 402, the Bazaar extension, the OpenAPI document and the MCP tools, with a refund route", async () => {
    const shop = await startChannelShop(
      chain.devnet,
      db,
      facilitator,
      channelEndpoints(gate, { runs: 0, running: 0, mostAtOnce: 0 }),
    );
    closers.push(shop.close);
    const required = await requiredBy(`${shop.url}/api/counted`);
    expect(required.accepts.map((a) => a.scheme)).toEqual(["exact", "batch-settlement"]);
    expect(required.accepts[1]).toMatchObject({
      amount: PRICE.toString(),
      payTo: shop.payTo,
      extra: {
        receiverAuthorizer: facilitator.address,
        withdrawDelay: 86_400,
        minDeposit: (10n * PRICE).toString(),
      },
    });
    expect(required.extensions?.bazaar).toBeDefined();
    const openapi = await (await fetch(`${shop.url}/openapi.json`)).json();
    const op = openapi.paths["/v1/metered"].post;
    expect(op["x-payment-info"].protocols.map((p: { x402: { scheme: string } }) => p.x402.scheme)).toEqual([
      "upto",
      "batch-settlement",
    ]);
    expect(op.description).toMatch(/payment channel .*batch-settlement/);
    const mcp = await connectMcp(`${shop.url}/mcp`);
    closers.push(() => mcp.close());
    const { tools } = await mcp.listTools();
    expect(tools.find((t) => t.name === "api_counted")?.description).toMatch(/batch-settlement/);
    expect(await (await fetch(`${shop.url}/llms.txt`)).text()).toMatch(/batch-settlement/);
    const { required: refund } = await channelTerms(shop.url);
    expect(refund.accepts.map((a) => a.scheme)).toEqual(["batch-settlement"]);
    // Paid through MCP too: a tool call's payment opens the channel.
    const { client } = payer();
    const called = await callPaidTool(mcp, channelPayer(client), "api_counted");
    expect(called.result.isError ?? false).toBe(false);
    expect(called.settlement).toMatchObject({ success: true, extra: { chargedAmount: PRICE.toString() } });
  });

  it("offers none of it where the operator turned channels off", async () => {
    const payTo = newMerchant();
    const config = testConfig();
    const endpoints = channelEndpoints(gate, { runs: 0, running: 0, mostAtOnce: 0 });
    const host = await listenWithUrl(
      async (url) =>
        (
          await merchantApp(testMerchant(payTo, url, endpoints), {
            services: { db, config: { ...config, channels: { ...config.channels, mode: "off" } } },
            facilitator,
            payments: { ...config.payments, rpcUrl: chain.devnet.rpc },
          })
        ).fetch,
      "127.0.0.1",
      0,
    );
    closers.push(() => host.close());
    expect((await requiredBy(`${host.url}/api/counted`)).accepts.map((a) => a.scheme)).toEqual(["exact"]);
    expect((await fetch(`${host.url}${REFUND_PATH}`)).status).toBe(404);
  });

  it("offers none of it where the facilitator does not serve channels: exact as before, no refund route", async () => {
    const shop = await startChannelShop(
      chain.devnet,
      db,
      withoutChannels(facilitator),
      channelEndpoints(gate, { runs: 0, running: 0, mostAtOnce: 0 }),
    );
    closers.push(shop.close);
    const required = await requiredBy(`${shop.url}/api/counted`);
    expect(required.accepts.map((a) => a.scheme)).toEqual(["exact"]);
    const openapi = await (await fetch(`${shop.url}/openapi.json`)).json();
    expect(JSON.stringify(openapi)).not.toMatch(/batch-settlement|payment channel/);
    expect((await fetch(`${shop.url}${REFUND_PATH}`)).status).toBe(404);
  });
});

describe.each(DATABASE_KINDS)("payment channels, merchant state on %s", (kind) => {
  let shop: ChannelShop;
  let db: Database;
  const tally: Tally = { runs: 0, running: 0, mostAtOnce: 0 };

  beforeAll(async () => {
    const state = await openTestDatabase(kind);
    closers.push(state.close);
    db = state.db;
    shop = await startChannelShop(chain.devnet, db, facilitator, channelEndpoints(gate, tally));
    closers.push(shop.close);
  });

  it("charges a call its price and a metered one what it metered, once each, with no transaction but the deposit", async () => {
    const { client, pay } = payer();
    const first = await pay(`${shop.url}/api/counted`);
    expect(first.status).toBe(200);
    expect(receiptOf(first)).toMatchObject({
      amount: DEPOSIT.toString(),
      extra: { chargedAmount: PRICE.toString() },
    });
    const metered = await pay(`${shop.url}/v1/metered`, post({ cost: 1234 }));
    expect(receiptOf(metered)).toMatchObject({ transaction: "", extra: { chargedAmount: "1234" } });
    const free = await pay(`${shop.url}/v1/metered`, post({ cost: 0 }));
    expect(receiptOf(free)).toMatchObject({ transaction: "", extra: { chargedAmount: "0" } });
    const { id, row } = await channelOf(shop, client);
    expect(row?.chargedCumulativeAmount).toBe((PRICE + 1234n).toString());
    expect(await escrowOf(chain.devnet, id)).toEqual({ balance: DEPOSIT, totalClaimed: 0n });
  });

  it("charges nothing for a refusal, and takes the same voucher again", async () => {
    const { client, pay } = payer();
    expect((await pay(`${shop.url}/api/counted`)).status).toBe(200);
    const required = await requiredBy(`${shop.url}/api/counted?refuse=true`);
    const voucher = await voucherHeader(required, buyer(), client, 2n * PRICE);
    const refused = await fetch(`${shop.url}/api/counted?refuse=true`, {
      headers: { "PAYMENT-SIGNATURE": voucher },
    });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("payment-response")).toBeNull();
    expect((await channelOf(shop, client)).row).toMatchObject({ chargedCumulativeAmount: PRICE.toString() });
    const served = await fetch(`${shop.url}/api/counted`, { headers: { "PAYMENT-SIGNATURE": voucher } });
    expect(served.status).toBe(200);
    expect((await channelOf(shop, client)).row?.chargedCumulativeAmount).toBe((2n * PRICE).toString());
  });

  it("records each voucher's call in the ledger: settled with its charge, failed ones counted against the payer until it is refused", async () => {
    // Its own wallet: the unpaid calls counted are the payer's, whichever channel they came through.
    const own = chain.devnet.buyers[0] as DevnetAccount;
    const client = channelClient(chain.devnet, own, { salt: ++salt, deposit: DEPOSIT });
    const pay = wrapFetchWithPayment(fetch, channelPayer(client));
    const rows = async () =>
      (
        await db.query<{ state: string; n: bigint }>(
          `SELECT state, count(*) AS n FROM merchant_payments
           WHERE payer = $1 AND nonce LIKE 'channel:%' GROUP BY state ORDER BY state`,
          [own.address.toLowerCase()],
        )
      ).rows.map((r) => [r.state, Number(r.n)]);
    expect((await pay(`${shop.url}/api/counted`)).status).toBe(200);
    expect((await pay(`${shop.url}/v1/metered`, post({ cost: 7 }))).status).toBe(200);
    // The deposit's call is keyed by its authorization (not counted here), the voucher's by its request.
    expect(await rows()).toEqual([["settled", 1]]);
    // A refusal before the work is given back: no row.
    expect((await pay(`${shop.url}/api/counted?refuse=true`)).status).toBe(400);
    expect(await rows()).toEqual([["settled", 1]]);
    for (let i = 0; i < UNPAID_LIMIT; i++) {
      expect((await pay(`${shop.url}/v1/metered`, post({ cost: 5, fail: true }))).status).toBe(502);
    }
    expect(await rows()).toEqual([
      ["failed", UNPAID_LIMIT],
      ["settled", 1],
    ]);
    const refused = await pay(`${shop.url}/v1/metered`, post({ cost: 5 }));
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("too_many_unpaid_calls");
    // Nothing was charged for the failed calls nor the refused one.
    expect((await channelOf(shop, client)).row?.chargedCumulativeAmount).toBe((PRICE + 7n).toString());
  });

  it("does no work beyond what the voucher covers or the channel holds", async () => {
    // The smallest deposit the merchant takes: ten calls.
    const { client, pay } = payer(null);
    expect((await pay(`${shop.url}/api/counted`)).status).toBe(200);
    const { id } = await channelOf(shop, client);
    const balance = (await escrowOf(chain.devnet, id)).balance;
    expect(balance).toBe(10n * PRICE);
    const before = tally.runs;
    const url = `${shop.url}/api/counted`;
    const required = await requiredBy(url);
    // A voucher for less than the call's price on top of what was charged.
    const short = await fetch(url, {
      headers: { "PAYMENT-SIGNATURE": await voucherHeader(required, buyer(), client, 2n * PRICE - 1n) },
    });
    expect(refusalOf(short)).toBe(MISMATCH);
    // A voucher right by the charges, but past what the channel holds (the merchant's state says 9 calls' worth,
    // written through the store, as every write of a channel is).
    await shop.store.updateChannel(
      id,
      (c) => c && { ...c, chargedCumulativeAmount: (balance - PRICE + 1n).toString() },
    );
    const beyond = await fetch(url, {
      headers: { "PAYMENT-SIGNATURE": await voucherHeader(required, buyer(), client, balance + 1n) },
    });
    expect(beyond.status).toBe(402);
    expect(refusalOf(beyond)).toBe("invalid_batch_settlement_evm_cumulative_exceeds_balance");
    expect(tally.runs).toBe(before);
  });

  it("commits a writing call's charge with its writes, or neither", async () => {
    const { client, pay } = payer();
    const notes = async () =>
      (await db.query<{ text: string }>("SELECT text FROM test_channel_notes ORDER BY id")).rows.map(
        (r) => r.text,
      );
    const stored = await pay(`${shop.url}/api/note`, post({ text: `kept-${kind}` }));
    expect(stored.status).toBe(200);
    expect(await notes()).toContain(`kept-${kind}`);
    expect((await channelOf(shop, client)).row?.chargedCumulativeAmount).toBe(PRICE.toString());
    // Refused after writing: the write and the charge roll back.
    const refused = await pay(`${shop.url}/api/note`, post({ text: `refused-${kind}`, refuse: true }));
    expect(refused.status).toBe(400);
    // The commit itself fails (its table refuses the text written twice), after the charge was written in it.
    const failed = await pay(`${shop.url}/api/note`, post({ text: `clash-${kind}`, clash: true }));
    expect(failed.status, `${refusalOf(failed)} ${await failed.clone().text()}`).toBe(500);
    expect((await failed.json()).error.code).toBe("write_failed");
    expect(failed.headers.get("payment-response")).toBeNull();
    expect(await notes()).not.toContain(`refused-${kind}`);
    expect(await notes()).not.toContain(`clash-${kind}`);
    expect((await channelOf(shop, client)).row?.chargedCumulativeAmount).toBe(PRICE.toString());
    // Nothing was charged, so the buyer's next voucher is the one that failed: it buys the next call.
    const again = await pay(`${shop.url}/api/note`, post({ text: `again-${kind}` }));
    expect(again.status).toBe(200);
    expect((await channelOf(shop, client)).row?.chargedCumulativeAmount).toBe((2n * PRICE).toString());
  });

  it("charges a streamed answer what it delivered, and one its caller left before anything nothing", async () => {
    const { client, pay } = payer();
    expect((await pay(`${shop.url}/api/counted`)).status).toBe(200);
    const url = `${shop.url}/v1/stream`;
    const streamed = await fetch(url, {
      ...post({ parts: 3 }),
      headers: {
        "content-type": "application/json",
        "PAYMENT-SIGNATURE": await voucherHeader(
          await requiredBy(url, post({ parts: 3 })),
          buyer(),
          client,
          PRICE + MAX,
        ),
      },
    });
    expect(await streamed.text()).toBe(`start\npart 0\npart 1\npart 2\nend ${3n * PART}\n`);
    const charged = PRICE + 3n * PART;
    expect((await channelOf(shop, client)).row?.chargedCumulativeAmount).toBe(charged.toString());
    // Its caller leaves before the first part: nothing charged, and the channel is free again.
    const left = new AbortController();
    const body = post({ parts: 3, hold: `left-${kind}` });
    const voucher = await voucherHeader(await requiredBy(url, body), buyer(), client, charged + MAX);
    const leaving = fetch(url, {
      ...body,
      signal: left.signal,
      headers: { "content-type": "application/json", "PAYMENT-SIGNATURE": voucher },
    });
    const answer = await leaving;
    const reader = answer.body?.getReader();
    await reader?.read(); // the head
    await gate.entered(`left-${kind}`);
    left.abort();
    await reader?.cancel().catch(() => undefined);
    // The merchant sees the caller leave and gives the channel back; only then may the engine go on.
    await vi.waitFor(async () => expect((await channelOf(shop, client)).row?.pendingRequest).toBeUndefined());
    gate.release(`left-${kind}`);
    expect((await channelOf(shop, client)).row?.chargedCumulativeAmount).toBe(charged.toString());
    // The same voucher buys the next call.
    const next = await fetch(`${shop.url}/api/counted`, {
      headers: {
        "PAYMENT-SIGNATURE": await voucherHeader(
          await requiredBy(`${shop.url}/api/counted`),
          buyer(),
          client,
          charged + PRICE,
        ),
      },
    });
    expect(next.status).toBe(200);
  });

  it("returns what is left on a full refund, and forgets the channel", async () => {
    const { client, pay } = payer();
    expect((await pay(`${shop.url}/api/counted`)).status).toBe(200);
    const { id } = await channelOf(shop, client);
    const before = await usdc.balanceOf(buyer().address);
    const refund = await client.refund(`${shop.url}${REFUND_PATH}`);
    expect(refund).toMatchObject({ success: true, amount: (DEPOSIT - PRICE).toString() });
    expect((await usdc.balanceOf(buyer().address)) - before).toBe(DEPOSIT - PRICE);
    // What was charged is claimed in the same transaction: the merchant's, in the escrow.
    expect(await escrowOf(chain.devnet, id)).toEqual({ balance: PRICE, totalClaimed: PRICE });
    expect((await channelOf(shop, client)).row).toBeUndefined();
    // The refund route takes refunds only.
    const required = (await channelTerms(shop.url)).required;
    const notRefund = await fetch(`${shop.url}${REFUND_PATH}`, {
      headers: { "PAYMENT-SIGNATURE": await voucherHeader(required, buyer(), client, PRICE) },
    });
    expect(notRefund.status).toBe(400);
    expect((await notRefund.json()).error.code).toBe("refund_only");
  });
});
