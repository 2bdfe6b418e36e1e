/**
 * Endpoints that write or cost upstream, bought by a wallet that can pay for one call only, many times at
 * once: the work done never exceeds the work paid. And a write whose payment does not settle is undone.
 */
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { Agent } from "undici";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DevnetAccount } from "../../../src/chain/devnet/index.ts";
import type { Database } from "../../../src/common/db/index.ts";
import type { Listening } from "../../../src/common/listen.ts";
import { type Facilitator, inProcessClient } from "../../../src/facilitator/index.ts";
import {
  UNPAID_LIMIT,
  UNPAID_WINDOW_SECONDS,
} from "../../../src/merchant-kit/payments/ledger/payment-ledger.ts";
import { useDevnet, walletHolding } from "../../helpers/chain.ts";
import { LEDGER_KIND, openTestDatabase, storesByKind } from "../../helpers/db.ts";
import { devnetFacilitator, facilitatorOver, GUARANTEE_CASES } from "../../helpers/facilitator.ts";
import { GUARDED_ENDPOINTS, runs, startMerchant, testMerchant } from "../../helpers/merchant.ts";
import { NETWORK, newMerchant, recordingFetch, usdcReader } from "../../helpers/x402.ts";

const chain = useDevnet({ buyers: 1 });
let facilitator: Facilitator;
const closers: (() => Promise<void>)[] = [];
type ErrorBody = { error: { code: string; message: string } };

/** One call's price on both endpoints, in atomic units. */
const PRICE = 1000n;

beforeAll(async () => {
  const opened = await openTestDatabase(LEDGER_KIND);
  closers.push(opened.close);
  facilitator = await devnetFacilitator(chain.devnet, opened.db);
});
afterAll(async () => {
  await facilitator?.close();
  for (const close of closers.reverse()) await close();
});
const client = facilitatorOver(() => facilitator);

/**
 * One merchant store per kind for the file, opened on first use: each host on it is a merchant of its own, and
 * every test reads its own wallet's rows. A PGlite copy and its migrations cost 0.4-0.5 CPU-s a store.
 */
const storeOf = storesByKind(closers);

const paying = (wallet: DevnetAccount) =>
  wrapFetchWithPayment(
    fetch,
    new x402Client().register(NETWORK, new ExactEvmClient(privateKeyToAccount(wallet.privateKey))),
  );

describe.each(GUARANTEE_CASES)("guarded endpoints, merchant state on $kind, facilitator $wire", (wired) => {
  let db: Database;
  let shop: Listening;
  const payTo = newMerchant();

  beforeAll(async () => {
    db = await storeOf(wired.kind);
    shop = await startMerchant(
      (url) => testMerchant(payTo, url, GUARDED_ENDPOINTS),
      db,
      await client(wired.wire),
      { rpcUrl: chain.devnet.rpc },
    );
    closers.push(() => shop.close());
  });

  it("stores at most the paid number of rows for 20 concurrent writes from a wallet that can pay one", async () => {
    const usdc = usdcReader(chain.devnet.rpc);
    const wallet = await walletHolding(chain.devnet, PRICE);
    const merchantBefore = await usdc.balanceOf(payTo);
    const pay = paying(wallet);
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        pay(`${shop.url}/api/note`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ text: `note ${i}`, delay: 100 }),
        }),
      ),
    );
    const ok = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status !== 200);
    await chain.miner.pending();
    const { rows } = await db.query("SELECT id FROM test_notes WHERE payer = $1", [
      wallet.address.toLowerCase(),
    ]);
    const paid = (await usdc.balanceOf(payTo)) - merchantBefore;
    expect(ok.length).toBe(1);
    expect(rows.length).toBe(ok.length);
    expect(paid).toBe(PRICE * BigInt(ok.length));
    expect(await usdc.balanceOf(wallet.address)).toBe(0n);
    // Every refusal is a 402 (nothing charged) saying `insufficient_funds`: from the ledger before any
    // work, or from the facilitator's verification once the paid call has settled.
    expect(refused.every((r) => r.status === 402)).toBe(true);
    const reasons = refused.map(
      (r) => decodePaymentRequiredHeader(r.headers.get("PAYMENT-REQUIRED") ?? "").error,
    );
    expect(reasons.every((e) => e === "insufficient_funds")).toBe(true);
    const bodies = (await Promise.all(refused.map((r) => r.json()))) as Partial<ErrorBody>[];
    expect(bodies.some((b) => b.error?.code === "insufficient_funds")).toBe(true);
  });

  it("makes at most the paid number of upstream calls for 10 concurrent calls from a wallet that can pay one", async () => {
    const usdc = usdcReader(chain.devnet.rpc);
    const wallet = await walletHolding(chain.devnet, PRICE);
    const merchantBefore = await usdc.balanceOf(payTo);
    const runsBefore = runs.get("/api/model") ?? 0;
    const pay = paying(wallet);
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => pay(`${shop.url}/api/model?delay=100`)),
    );
    await chain.miner.pending();
    const ok = responses.filter((r) => r.status === 200).length;
    const upstreamCalls = (runs.get("/api/model") ?? 0) - runsBefore;
    expect(ok).toBe(1);
    expect(upstreamCalls).toBe(ok);
    expect((await usdc.balanceOf(payTo)) - merchantBefore).toBe(PRICE);
    expect(responses.every((r) => r.status === 200 || r.status === 402)).toBe(true);
  });

  it("charges nothing for calls their caller left, and refuses a wallet that left 5 within the hour", async () => {
    const usdc = usdcReader(chain.devnet.rpc);
    const wallet = await walletHolding(chain.devnet, PRICE * 10n);
    const { fetch: recording, signatures } = recordingFetch();
    const client = new x402Client().register(
      NETWORK,
      new ExactEvmClient(privateKeyToAccount(wallet.privateKey)),
    );
    const pay = wrapFetchWithPayment(recording, client);
    for (let i = 0; i < UNPAID_LIMIT; i++) {
      const before = runs.get("/api/model") ?? 0;
      const leave = new AbortController();
      // Its own connections, closed as the caller leaves: Node 20's fetch can lose the abort once the
      // Request it built is collected (src/common/fetch-within.ts), and the server would never see it go.
      const connections = new Agent();
      const own: typeof fetch = (input, init) =>
        recording(input, { ...init, dispatcher: connections } as RequestInit);
      const call = wrapFetchWithPayment(own, client)(`${shop.url}/api/model?delay=2000`, {
        signal: leave.signal,
      });
      while ((runs.get("/api/model") ?? 0) === before) await new Promise((r) => setTimeout(r, 5));
      const refused = expect(call).rejects.toThrow();
      leave.abort();
      await connections.destroy();
      await refused;
    }
    // The server records a call's end after its caller is gone: wait for the last one.
    const states = async () =>
      (
        await db.query<{ state: string }>("SELECT state FROM merchant_payments WHERE payer = $1", [
          wallet.address.toLowerCase(),
        ])
      ).rows.map((r) => r.state);
    for (let t = 0; (await states()).includes("running") && t < 200; t++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(await states()).toEqual(Array(UNPAID_LIMIT).fill("abandoned"));

    // An abandoned authorization never runs again, and the wallet's next call runs nothing.
    const runsBefore = runs.get("/api/model") ?? 0;
    const replay = await fetch(`${shop.url}/api/model?delay=2000`, {
      headers: { "PAYMENT-SIGNATURE": signatures.at(-1) as string },
    });
    expect(replay.status).toBe(409);
    const refused = await pay(`${shop.url}/api/model`);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as ErrorBody).error.code).toBe("too_many_unpaid_calls");
    const retryAfter = Number(refused.headers.get("Retry-After"));
    expect(retryAfter).toBeGreaterThan(UNPAID_WINDOW_SECONDS - 60);
    expect(retryAfter).toBeLessThanOrEqual(UNPAID_WINDOW_SECONDS);
    expect(runs.get("/api/model") ?? 0).toBe(runsBefore);
    await chain.miner.pending();
    expect(await usdc.balanceOf(wallet.address)).toBe(PRICE * 10n);

    // Once the oldest ages out of the window, the wallet may call again.
    await db.query(
      `UPDATE merchant_payments SET finished_at = finished_at - interval '${UNPAID_WINDOW_SECONDS} seconds'
       WHERE payer = $1 AND finished_at = (SELECT min(finished_at) FROM merchant_payments WHERE payer = $1)`,
      [wallet.address.toLowerCase()],
    );
    const again = await pay(`${shop.url}/api/model`);
    expect(again.status).toBe(200);
  });

  it("spends a failed call's authorization and counts it against the payer alone; a refusal does neither", async () => {
    const wallet = await walletHolding(chain.devnet, PRICE * 2n);
    const other = await walletHolding(chain.devnet, PRICE);
    const { fetch: recording, signatures } = recordingFetch();
    const pay = wrapFetchWithPayment(
      recording,
      new x402Client().register(NETWORK, new ExactEvmClient(privateKeyToAccount(wallet.privateKey))),
    );
    const runsNow = () => runs.get("/api/model") ?? 0;
    const replay = (signature: string, query: string) =>
      fetch(`${shop.url}/api/model?${query}`, { headers: { "PAYMENT-SIGNATURE": signature } });

    // A refusal (the handler's own AppError) gives its authorization back and counts for nothing: it is sent again.
    expect((await pay(`${shop.url}/api/model?fail=422`)).status).toBe(422);
    expect((await replay(signatures.at(-1) as string, "fail=422")).status).toBe(422);

    // An upstream's failure once the handler ran keeps its authorization: sent again, even at once, it runs nothing.
    for (let i = 0; i < UNPAID_LIMIT; i++)
      expect((await pay(`${shop.url}/api/model?fail=502`)).status).toBe(502);
    const before = runsNow();
    const again = await Promise.all([1, 2, 3].map(() => replay(signatures.at(-1) as string, "fail=502")));
    expect(again.map((r) => r.status)).toEqual([409, 409, 409]);
    const refused = await pay(`${shop.url}/api/model`);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as ErrorBody).error.code).toBe("too_many_unpaid_calls");
    expect(runsNow()).toBe(before);
    const states = await db.query<{ state: string; n: number }>(
      "SELECT state, count(*)::int AS n FROM merchant_payments WHERE payer = $1 GROUP BY state ORDER BY state",
      [wallet.address.toLowerCase()],
    );
    expect(states.rows).toEqual([{ state: "failed", n: UNPAID_LIMIT }]);
    // Nothing was charged, and another wallet is served as before.
    await chain.miner.pending();
    expect(await usdcReader(chain.devnet.rpc).balanceOf(wallet.address)).toBe(PRICE * 2n);
    expect((await paying(other)(`${shop.url}/api/model`)).status).toBe(200);
  });

  it("lets a wallet that can pay them all make all its calls at once", async () => {
    const usdc = usdcReader(chain.devnet.rpc);
    const wallet = await walletHolding(chain.devnet, PRICE * 5n);
    const pay = paying(wallet);
    const responses = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        pay(`${shop.url}/api/note`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ text: `paid ${i}` }),
        }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    await chain.miner.pending();
    expect(await usdc.balanceOf(wallet.address)).toBe(0n);
    const { rows } = await db.query("SELECT id FROM test_notes WHERE payer = $1", [
      wallet.address.toLowerCase(),
    ]);
    expect(rows).toHaveLength(5);
  });
});

describe("a write whose payment does not settle", () => {
  it("is rolled back, and the payment counts as in flight until its authorization expires", async () => {
    const db = await storeOf("pglite");
    const real = inProcessClient(facilitator);
    // Verifies for real, then fails to settle: the chain refused, or the facilitator went away.
    const failing: FacilitatorClient = {
      getSupported: () => real.getSupported(),
      verify: (payload, requirements) => real.verify(payload, requirements),
      settle: async (_payload, requirements) => ({
        success: false,
        errorReason: "unexpected_settle_error",
        transaction: "",
        network: requirements.network,
      }),
    };
    const payTo = newMerchant();
    const shop = await startMerchant((url) => testMerchant(payTo, url, GUARDED_ENDPOINTS), db, failing, {
      rpcUrl: chain.devnet.rpc,
    });
    closers.push(() => shop.close());
    const wallet = await walletHolding(chain.devnet, PRICE * 3n);
    const runsBefore = runs.get("/api/note") ?? 0;

    const response = await paying(wallet)(`${shop.url}/api/note`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: "never kept" }),
    });
    expect(response.status).toBe(402);
    expect(runs.get("/api/note")).toBe(runsBefore + 1);
    const { rows } = await db.query("SELECT id FROM test_notes WHERE payer = $1", [
      wallet.address.toLowerCase(),
    ]);
    expect(rows).toEqual([]);
    const ledger = await db.query<{ state: string }>("SELECT state FROM merchant_payments WHERE payer = $1", [
      wallet.address.toLowerCase(),
    ]);
    expect(ledger.rows.map((r) => r.state)).toEqual(["unsettled"]);
    expect(await usdcReader(chain.devnet.rpc).balanceOf(wallet.address)).toBe(PRICE * 3n);
  });
});
