/**
 * `/api/store` and `/api/scratchpad` sold through the real x402 flow on a devnet: two buyers, each paying
 * with its own wallet, each seeing only its own data; refusals (bad input, 404, 507) are not charged.
 */
import { x402Client } from "@x402/core/client";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Devnet } from "../../../../src/chain/devnet/index.ts";
import type { Database } from "../../../../src/common/db/index.ts";
import type { Listening } from "../../../../src/common/listen.ts";
import { type Facilitator, inProcessClient } from "../../../../src/facilitator/index.ts";
import { parseCsvRows, stateEndpoints } from "../../../../src/merchants/utility/state/index.ts";
import { useDevnet, walletHolding } from "../../../helpers/chain.ts";
import { DATABASE_KINDS, LEDGER_KIND, openTestDatabase } from "../../../helpers/db.ts";
import { devnetFacilitator } from "../../../helpers/facilitator.ts";
import { startMerchant } from "../../../helpers/merchant.ts";
import { NETWORK, newMerchant, usdcReader } from "../../../helpers/x402.ts";

const chain = useDevnet({ buyers: 2 * DATABASE_KINDS.length });
let facilitatorDb: Database;
let facilitator: Facilitator;
type ErrorBody = { error: { code: string; message: string } };
type Page = { rows: { id: string; data: Record<string, unknown> }[]; next_token: string | null };
type Pads = { scratchpads: { name: string }[] };
const closers: (() => Promise<void>)[] = [];

/** A small quota, so a 507 needs a few kilobytes, not 50 MB. */
const QUOTA = 4000;

beforeAll(async () => {
  const opened = await openTestDatabase(LEDGER_KIND);
  facilitatorDb = opened.db;
  closers.push(opened.close);
  facilitator = await devnetFacilitator(chain.devnet, facilitatorDb);
});
afterAll(async () => {
  await facilitator?.close();
  for (const close of closers.reverse()) await close();
});

describe.each(DATABASE_KINDS)("paid per-wallet state on %s", (kind) => {
  let shop: Listening;
  let db: Database;
  const payTo = newMerchant();
  const first = DATABASE_KINDS.indexOf(kind) * 2;

  beforeAll(async () => {
    const opened = await openTestDatabase(kind);
    db = opened.db;
    closers.push(opened.close);
    shop = await startMerchant(
      (url) => ({
        name: "state",
        title: "State",
        payTo,
        publicUrl: url,
        endpoints: stateEndpoints({ quotaBytes: QUOTA }),
      }),
      db,
      inProcessClient(facilitator),
      { rpcUrl: chain.devnet.rpc },
    );
    closers.push(() => shop.close());
  });

  const buyer = (i: 0 | 1) => chain.devnet.buyers[first + i] as Devnet["buyers"][0];
  const paying = (i: 0 | 1) => {
    const pay = wrapFetchWithPayment(
      fetch,
      new x402Client().register(NETWORK, new ExactEvmClient(privateKeyToAccount(buyer(i).privateKey))),
    );
    return {
      get: (path: string) => pay(`${shop.url}${path}`),
      post: (path: string, body: unknown) =>
        pay(`${shop.url}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        }),
    };
  };

  it("sells store and scratchpad calls to two wallets, each seeing only its own data", async () => {
    const usdc = usdcReader(chain.devnet.rpc);
    const [a, b] = [paying(0), paying(1)];
    const beforeA = await usdc.balanceOf(buyer(0).address);

    const inserted = await a.post("/api/store/insert", {
      collection: "people",
      rows: [
        { name: "Ada", city: "Lisbon" },
        { name: "Alan", city: "Oslo" },
      ],
    });
    expect(inserted.status).toBe(200);
    expect(await inserted.json()).toMatchObject({ inserted: 2, collection: { name: "people", rows: 2 } });
    const receipt = decodePaymentResponseHeader(inserted.headers.get("PAYMENT-RESPONSE") ?? "");
    expect(receipt).toMatchObject({ success: true, payer: buyer(0).address });

    const csv = await b.post("/api/store/insert", {
      collection: "people",
      csv: "name,city\r\nGrace,Arlington\r\n",
    });
    expect(csv.status).toBe(200);

    const aRows = (await (await a.get("/api/store/query?collection=people")).json()) as Page;
    expect(aRows.rows.map((r) => r.data)).toEqual([
      { name: "Ada", city: "Lisbon" },
      { name: "Alan", city: "Oslo" },
    ]);
    const filtered = await a.get(
      `/api/store/query?collection=people&where=${encodeURIComponent('{"city":"Oslo"}')}`,
    );
    expect(((await filtered.json()) as Page).rows.map((r) => r.data.name)).toEqual(["Alan"]);
    const bList = await (await b.get("/api/store")).json();
    expect(bList).toMatchObject({
      total_rows: 1,
      quota_bytes: QUOTA,
      collections: [{ name: "people", rows: 1 }],
    });

    const exported = await b.get("/api/store/export?collection=people&format=csv");
    expect(exported.headers.get("content-type")).toMatch(/^text\/csv/);
    expect(parseCsvRows(await exported.text())).toEqual([{ name: "Grace", city: "Arlington" }]);

    const written = await a.post("/api/scratchpad/write", {
      name: "plan",
      content: '{"step":1}',
      content_type: "json",
    });
    expect(written.status).toBe(200);
    const raw = await a.get("/api/scratchpad/read?name=plan&raw=1");
    expect(raw.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await raw.json()).toEqual({ step: 1 });
    expect(((await (await b.get("/api/scratchpad")).json()) as Pads).scratchpads).toEqual([]);
    const notHers = await b.get("/api/scratchpad/read?name=plan");
    expect(notHers.status).toBe(404);

    await chain.miner.pending();
    // A paid 5 calls, B 4 (the 404 is free): 9 x $0.001.
    expect(await usdc.balanceOf(payTo)).toBe(9_000n);
    expect(await usdc.balanceOf(buyer(0).address)).toBe(beforeA - 5_000n);
  });

  it("charges nothing for bad input, a missing collection or a write past the quota (507)", async () => {
    const usdc = usdcReader(chain.devnet.rpc);
    const a = paying(0);
    await chain.miner.pending();
    const before = await usdc.balanceOf(buyer(0).address);
    const merchantBefore = await usdc.balanceOf(payTo);

    const badName = await a.post("/api/store/insert", { collection: "no spaces!", rows: [] });
    expect(badName.status).toBe(400);
    expect(((await badName.json()) as ErrorBody).error.code).toBe("invalid_input");
    const badCsv = await a.post("/api/store/insert", { collection: "x", csv: "a,a\n1,2" });
    expect([badCsv.status, ((await badCsv.json()) as ErrorBody).error.code]).toEqual([400, "invalid_csv"]);
    const badWhere = await a.get("/api/store/query?collection=people&where=notjson");
    expect(badWhere.status).toBe(400);
    const missing = await a.get("/api/store/query?collection=nothing");
    expect(missing.status).toBe(404);

    const full = await a.post("/api/scratchpad/write", { name: "big", content: "x".repeat(QUOTA) });
    expect(full.status).toBe(507);
    expect(((await full.json()) as ErrorBody).error.code).toBe("quota_exceeded");
    const list = await a.get("/api/scratchpad");
    const pads = ((await list.json()) as Pads).scratchpads.map((p) => p.name);
    expect(pads).toEqual(["plan"]);

    await chain.miner.pending();
    // Only the listing was paid.
    expect(await usdc.balanceOf(buyer(0).address)).toBe(before - 1000n);
    expect(await usdc.balanceOf(payTo)).toBe(merchantBefore + 1000n);
  });

  it("stores one insert for a wallet holding one call's price that sends 20 at once", async () => {
    const wallet = await walletHolding(chain.devnet, 1000n, first);
    const pay = wrapFetchWithPayment(
      fetch,
      new x402Client().register(NETWORK, new ExactEvmClient(privateKeyToAccount(wallet.privateKey))),
    );
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        pay(`${shop.url}/api/store/insert`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ collection: "burst", rows: [{ i }] }),
        }),
      ),
    );
    await chain.miner.pending();
    const ok = responses.filter((r) => r.status === 200).length;
    const { rows } = await db.query<{ row_count: bigint }>(
      "SELECT row_count FROM utility_state_collections WHERE payer = $1 AND name = 'burst'",
      [wallet.address.toLowerCase()],
    );
    expect(ok).toBe(1);
    expect(rows.map((r) => Number(r.row_count))).toEqual([1]);
    expect(await usdcReader(chain.devnet.rpc).balanceOf(wallet.address)).toBe(0n);
    expect(responses.every((r) => r.status === 200 || r.status === 402)).toBe(true);
  });
});
