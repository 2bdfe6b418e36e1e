/**
 * Payment channels under concurrency, end to end: the SDK's own batch-settlement client (through
 * `@x402/fetch`, or its signed payloads sent by hand where a test needs one twice) pays a kit host through
 * the SDK's own facilitator on a devnet, the merchant's channel state on PGlite and on the PostgreSQL server.
 * A channel serves one call at a time: 20 calls at once on one channel each run once and are charged once,
 * in turn; one voucher sent twice at once buys one call; a deposit racing a voucher on the same channel moves
 * money only when its own call is served; a process that crashes between a handler and the charge's commit
 * neither loses the charge (the same voucher buys the call afterwards) nor counts it twice. Held handlers
 * (gates), not timing, decide what overlaps.
 */
import { decodePaymentResponseHeader } from "@x402/core/http";
import { wrapFetchWithPayment } from "@x402/fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DevnetAccount } from "../../../src/chain/devnet/index.ts";
import { type Database, openDatabase } from "../../../src/common/db/index.ts";
import { useDevnet } from "../../helpers/chain.ts";
import {
  type ChannelShop,
  channelEndpoints,
  channelOf,
  depositHeader,
  escrowOf,
  PRICE,
  refusalOf,
  requiredBy,
  startChannelShop,
  type Tally,
  voucherHeader,
} from "../../helpers/channel-shop.ts";
import { DATABASE_KINDS, openTestDatabase } from "../../helpers/db.ts";
import { gates } from "../../helpers/gates.ts";
import {
  channelClient,
  channelPayer,
  type StockFacilitator,
  stockFacilitator,
} from "../../helpers/stock-facilitator.ts";
import { usdcReader } from "../../helpers/x402.ts";

const BUSY = "invalid_batch_settlement_evm_channel_busy";
const MISMATCH = "invalid_batch_settlement_evm_cumulative_amount_mismatch";
/** What each test's channel holds: $1, a thousand calls. */
const DEPOSIT = 1_000_000n;

const chain = useDevnet({ buyers: 2 });
let facilitator: StockFacilitator;
let usdc: ReturnType<typeof usdcReader>;
const gate = gates();
const closers: (() => Promise<void>)[] = [];
let salt = 0n;

beforeAll(async () => {
  facilitator = stockFacilitator(chain.devnet);
  usdc = usdcReader(chain.devnet.rpc);
}, 60_000);
afterAll(async () => {
  gate.close();
  for (const close of closers.reverse()) await close();
});

const buyer = () => chain.devnet.buyers[0] as DevnetAccount;
/** A client with a channel of its own (its own salt), and `@x402/fetch` paying through it. */
function payer() {
  const client = channelClient(chain.devnet, buyer(), { salt: ++salt, deposit: DEPOSIT });
  return { client, pay: wrapFetchWithPayment(fetch, channelPayer(client)) };
}

/** Pays `url` until the call is served: a busy channel, or a voucher another call made stale, is tried again. */
async function payUntilServed(pay: typeof fetch, url: string): Promise<Response> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const answer = await pay(url);
    if (answer.status !== 402) return answer;
    expect([BUSY, MISMATCH]).toContain(refusalOf(answer));
  }
  throw new Error(`${url}: not served in 200 attempts`);
}

describe.each(DATABASE_KINDS)("payment channels at once, merchant state on %s", (kind) => {
  let shop: ChannelShop;
  /** The kind's store: the host above, and the grouping test's host, a merchant (a receiver) of its own. */
  let store: Database;
  const tally: Tally = { runs: 0, running: 0, mostAtOnce: 0 };

  beforeAll(async () => {
    const state = await openTestDatabase(kind);
    closers.push(state.close);
    store = state.db;
    shop = await startChannelShop(chain.devnet, state.db, facilitator, channelEndpoints(gate, tally));
    closers.push(shop.close);
  });

  it("serves 20 calls at once on one channel one at a time, each run once and charged once", async () => {
    const { client, pay } = payer();
    const url = `${shop.url}/api/counted`;
    // The deposit first: the channel exists, then 20 vouchers race for it.
    expect((await pay(url)).status).toBe(200);
    tally.mostAtOnce = 0;
    const before = tally.runs;
    const answers = await Promise.all(Array.from({ length: 20 }, () => payUntilServed(pay, url)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(tally.runs - before).toBe(20);
    expect(tally.mostAtOnce).toBe(1);
    // Each answer's receipt: a voucher (no transaction), its price, and a cumulative of its own.
    const receipts = answers.map((a) =>
      decodePaymentResponseHeader(a.headers.get("payment-response") as string),
    );
    expect(receipts.every((r) => r.transaction === "" && r.extra?.chargedAmount === PRICE.toString())).toBe(
      true,
    );
    const cumulative = receipts.map((r) =>
      BigInt(
        (r.extra?.channelState as { chargedCumulativeAmount?: string } | undefined)
          ?.chargedCumulativeAmount ?? -1,
      ),
    );
    expect(cumulative.sort((a, b) => (a < b ? -1 : 1))).toEqual(
      Array.from({ length: 20 }, (_, i) => PRICE * BigInt(i + 2)),
    );
    const { id, row } = await channelOf(shop, client);
    expect(row?.chargedCumulativeAmount).toBe((21n * PRICE).toString());
    expect(row?.pendingRequest).toBeUndefined();
    // One deposit on chain, nothing claimed yet: the vouchers moved no money.
    expect(await escrowOf(chain.devnet, id)).toEqual({ balance: DEPOSIT, totalClaimed: 0n });
  });

  it("runs one voucher sent twice at once once: the second is refused while the first runs, and after it", async () => {
    const { client, pay } = payer();
    expect((await pay(`${shop.url}/api/counted`)).status).toBe(200);
    const url = `${shop.url}/api/counted?hold=twice-${kind}`;
    const header = await voucherHeader(await requiredBy(url), buyer(), client, 2n * PRICE);
    const send = () => fetch(url, { headers: { "PAYMENT-SIGNATURE": header } });
    const before = tally.runs;
    const first = send();
    await gate.entered(`twice-${kind}`);
    const second = await send();
    expect(second.status).toBe(402);
    expect(refusalOf(second)).toBe(BUSY);
    gate.release(`twice-${kind}`);
    expect((await first).status).toBe(200);
    // Charged: the voucher is spent, and sent again it is stale.
    const third = await send();
    expect(third.status).toBe(402);
    expect(refusalOf(third)).toBe(MISMATCH);
    expect(tally.runs - before).toBe(1);
    expect((await channelOf(shop, client)).row?.chargedCumulativeAmount).toBe((2n * PRICE).toString());
  });

  it("moves a deposit racing a voucher on one channel only when its own call is served", async () => {
    const { client, pay } = payer();
    expect((await pay(`${shop.url}/api/counted`)).status).toBe(200);
    const { id } = await channelOf(shop, client);
    const held = (name: string) => `${shop.url}/api/counted?hold=${name}-${kind}`;
    const wallet = () => usdc.balanceOf(buyer().address);

    // The voucher holds the channel: the deposit is refused, and nothing leaves the wallet.
    const voucher = await voucherHeader(await requiredBy(held("v")), buyer(), client, 2n * PRICE);
    const deposit = await depositHeader(await requiredBy(held("d")), buyer(), client, 5_000n, 2n * PRICE);
    const before = { wallet: await wallet(), escrow: await escrowOf(chain.devnet, id) };
    const byVoucher = fetch(held("v"), { headers: { "PAYMENT-SIGNATURE": voucher } });
    await gate.entered(`v-${kind}`);
    const refused = await fetch(held("d"), { headers: { "PAYMENT-SIGNATURE": deposit } });
    expect(refused.status).toBe(402);
    expect(refusalOf(refused)).toBe(BUSY);
    gate.release(`v-${kind}`);
    expect((await byVoucher).status).toBe(200);
    expect(await wallet()).toBe(before.wallet);
    expect(await escrowOf(chain.devnet, id)).toEqual(before.escrow);

    // The deposit holds it: the voucher is refused; the deposit lands once its call is served.
    const topUp = await depositHeader(await requiredBy(held("d2")), buyer(), client, 5_000n, 3n * PRICE);
    const late = await voucherHeader(await requiredBy(held("v2")), buyer(), client, 3n * PRICE);
    const byDeposit = fetch(held("d2"), { headers: { "PAYMENT-SIGNATURE": topUp } });
    await gate.entered(`d2-${kind}`);
    expect(await wallet()).toBe(before.wallet);
    const refusedVoucher = await fetch(held("v2"), { headers: { "PAYMENT-SIGNATURE": late } });
    expect(refusedVoucher.status).toBe(402);
    expect(refusalOf(refusedVoucher)).toBe(BUSY);
    gate.release(`d2-${kind}`);
    const served = await byDeposit;
    expect(served.status).toBe(200);
    expect(decodePaymentResponseHeader(served.headers.get("payment-response") as string)).toMatchObject({
      success: true,
      amount: "5000",
      extra: { chargedAmount: PRICE.toString() },
    });
    expect(await wallet()).toBe(before.wallet - 5_000n);
    expect(await escrowOf(chain.devnet, id)).toEqual({
      balance: before.escrow.balance + 5_000n,
      totalClaimed: 0n,
    });
    const { row } = await channelOf(shop, client);
    expect(row).toMatchObject({
      chargedCumulativeAmount: (3n * PRICE).toString(),
      balance: (DEPOSIT + 5_000n).toString(),
    });
    // The voucher the deposit beat is stale now: never charged.
    const stale = await fetch(held("v3"), { headers: { "PAYMENT-SIGNATURE": late } });
    expect(refusalOf(stale)).toBe(MISMATCH);
  });

  it("charges vouchers of channels served together in one statement, and answers none of a group whose statement fails", async () => {
    // The merchant's database, as this host alone sees it: its statements counted, and the grouped charge's
    // made to fail as a lost connection would. The kind's store, where a store of its own cost a PGlite copy
    // and its migrations (0.4-0.5 CPU-s) for nothing this test reads: its rows are its receiver's.
    const sent: string[] = [];
    let failing = false;
    const db: Database = {
      ...store,
      query: (sql, params) => {
        const head = sql.trim().split(/\s+/).slice(0, 3).join(" ");
        sent.push(head);
        if (failing && head === "WITH t AS")
          return Promise.reject(new Error("Connection terminated unexpectedly"));
        return store.query(sql, params);
      },
    };
    const grouping = await startChannelShop(chain.devnet, db, facilitator, channelEndpoints(gate, tally));
    closers.push(grouping.close);
    const payers = Array.from({ length: 4 }, () => payer());
    for (const { pay } of payers) expect((await pay(`${grouping.url}/api/counted`)).status).toBe(200);
    /**
     * A voucher of each channel for `cap`, held at a gate of its own until all four are in their handlers (each
     * channel reserved), then let go together; the statements after that counted, and failing as `fail` says.
     */
    const together = async (round: string, cap: bigint, fail: boolean) => {
      const urls = payers.map((_, i) => `${grouping.url}/api/counted?hold=${round}-${i}-${kind}`);
      const headers = await Promise.all(
        payers.map(async ({ client }, i) =>
          voucherHeader(await requiredBy(urls[i] as string), buyer(), client, cap),
        ),
      );
      const answers = payers.map((_, i) =>
        fetch(urls[i] as string, { headers: { "PAYMENT-SIGNATURE": headers[i] as string } }),
      );
      for (const [i] of payers.entries()) await gate.entered(`${round}-${i}-${kind}`);
      sent.length = 0;
      failing = fail;
      for (const [i] of payers.entries()) gate.release(`${round}-${i}-${kind}`);
      return Promise.all(answers);
    };

    const served = await together("grouped", 2n * PRICE, false);
    expect(served.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    // Four charges made in one turn: one statement.
    expect(sent).toEqual(["WITH t AS"]);
    for (const { client } of payers) {
      expect((await channelOf(grouping, client)).row?.chargedCumulativeAmount).toBe((2n * PRICE).toString());
    }

    const refused = await together("failed", 3n * PRICE, true);
    // The statement that held the four charges failed: each call refused as unpaid (the SDK's settle hook threw,
    // and it answers that the settlement failed: 402, its receipt saying so), none charged.
    expect(refused.map((a) => a.status)).toEqual([402, 402, 402, 402]);
    expect(
      refused.map((a) => decodePaymentResponseHeader(a.headers.get("payment-response") as string).success),
    ).toEqual([false, false, false, false]);
    // The four charges' one statement came first (on a server the SDK then tries to give the reservations back,
    // which fails the same way).
    expect(sent[0]).toBe("WITH t AS");
    expect(sent).not.toContain("WITH charged AS");
    const { rows } = await store.query<{ charged: string }>(
      "SELECT charged::text AS charged FROM merchant_channels WHERE receiver = $1",
      [grouping.payTo.toLowerCase()],
    );
    expect(rows.map((r) => r.charged)).toEqual(Array(4).fill((2n * PRICE).toString()));
  });

  it("neither loses nor double-counts a charge when a process crashes between a handler and the commit", async () => {
    // A host of its own on a store of its own: the test takes its database away as a crash would.
    const state = await openTestDatabase(kind);
    closers.push(state.close);
    const crashing = await startChannelShop(
      chain.devnet,
      state.db,
      facilitator,
      channelEndpoints(gate, tally),
    );
    closers.push(crashing.close);
    const { client, pay } = payer();
    expect((await pay(`${crashing.url}/api/counted`)).status).toBe(200);
    const url = `${crashing.url}/api/counted?hold=crash-${kind}`;
    const header = await voucherHeader(await requiredBy(url), buyer(), client, 2n * PRICE);
    const lost = fetch(url, { headers: { "PAYMENT-SIGNATURE": header } });
    await gate.entered(`crash-${kind}`);
    // The process dies with its handler done and its charge not committed. PGlite: its database goes with it,
    // and the next process opens the directory. PostgreSQL: the next process is another pool on the server.
    if (kind === "pglite") await state.db.close();
    const restartedDb = await openDatabase(state.options);
    closers.push(() => restartedDb.close());
    const restarted = await startChannelShop(
      chain.devnet,
      restartedDb,
      facilitator,
      channelEndpoints(gate, tally),
      crashing.payTo,
    );
    closers.push(restarted.close);
    const again = () => fetch(`${restarted.url}/api/counted`, { headers: { "PAYMENT-SIGNATURE": header } });
    if (kind === "postgres") {
      // A server may be shared with live processes: the crashed one's reservation stands until it expires
      // (the route's budget and a minute); here the clock is moved past it. PGlite has no other process.
      expect(refusalOf(await again())).toBe(BUSY);
      await restartedDb.query("UPDATE merchant_channels SET pending_expires_ms = 0");
    }
    // The same voucher buys the call: the charge was not lost.
    const served = await again();
    expect(served.status).toBe(200);
    expect(decodePaymentResponseHeader(served.headers.get("payment-response") as string).extra).toMatchObject(
      {
        chargedAmount: PRICE.toString(),
      },
    );
    // The crashed process's call, let go, cannot charge it a second time.
    gate.release(`crash-${kind}`);
    expect((await lost).status).toBeGreaterThanOrEqual(400);
    expect((await channelOf(restarted, client)).row).toMatchObject({
      chargedCumulativeAmount: (2n * PRICE).toString(),
    });
  });
});
