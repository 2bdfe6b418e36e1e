import { x402Client } from "@x402/core/client";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Devnet } from "../../../src/chain/devnet/index.ts";
import type { Database } from "../../../src/common/db/index.ts";
import type { Listening } from "../../../src/common/listen.ts";
import type { Facilitator } from "../../../src/facilitator/index.ts";
import { useDevnet } from "../../helpers/chain.ts";
import { openTestDatabase } from "../../helpers/db.ts";
import { devnetFacilitator, facilitatorOver, GUARANTEE_CASES } from "../../helpers/facilitator.ts";
import { echoGates, runs, startMerchant, testMerchant } from "../../helpers/merchant.ts";
import { NETWORK, newMerchant, pay, usdcReader } from "../../helpers/x402.ts";

const chain = useDevnet({ buyers: GUARANTEE_CASES.length });
let facilitatorDb: Database;
let facilitator: Facilitator;
type ErrorBody = { error: { code: string; message: string } };

const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  const opened = await openTestDatabase("pglite");
  facilitatorDb = opened.db;
  closers.push(opened.close);
  facilitator = await devnetFacilitator(chain.devnet, facilitatorDb);
});
const client = facilitatorOver(() => facilitator);
afterAll(async () => {
  await facilitator?.close();
  for (const close of closers.reverse()) await close();
});

describe.each(GUARANTEE_CASES)("paid endpoints, merchant state on $kind, facilitator $wire", (wired) => {
  let shop: Listening;
  const payTo = newMerchant();
  const buyerIndex = GUARANTEE_CASES.indexOf(wired);

  beforeAll(async () => {
    const { db, close } = await openTestDatabase(wired.kind);
    closers.push(close);
    shop = await startMerchant((url) => testMerchant(payTo, url), db, await client(wired.wire), {
      rpcUrl: chain.devnet.rpc,
    });
    closers.push(() => shop.close());
  });

  const buyer = () => chain.devnet.buyers[buyerIndex] as Devnet["buyers"][0];
  const buyerFetch = () =>
    wrapFetchWithPayment(
      fetch,
      new x402Client().register(NETWORK, new ExactEvmClient(privateKeyToAccount(buyer().privateKey))),
    );

  it("sells /api/calc through the real x402 flow: 200, the exact result, the price moved once", async () => {
    const usdc = usdcReader(chain.devnet.rpc);
    const before = await usdc.balanceOf(buyer().address);
    const response = await buyerFetch()(`${shop.url}/api/calc?expr=${encodeURIComponent("2^200 + 1/7")}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      expression: "2^200 + 1/7",
      result: "1.6069380442589902755419620923411626025222029937828e+60",
      type: "decimal",
    });
    const receipt = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE") ?? "");
    expect(receipt).toMatchObject({ success: true, network: NETWORK, payer: buyer().address });
    expect(await usdc.balanceOf(payTo)).toBe(1000n);
    expect(await usdc.balanceOf(buyer().address)).toBe(before - 1000n);

    // The handler saw the verified payer, lower-case.
    const echoed = await buyerFetch()(`${shop.url}/api/echo?text=hello`);
    expect(await echoed.json()).toEqual({ text: "hello", payer: buyer().address.toLowerCase() });
    expect(await usdc.balanceOf(payTo)).toBe(3000n);
  });

  it("charges nothing for bad input or a failed handler, even through the paying fetch", async () => {
    const usdc = usdcReader(chain.devnet.rpc);
    const before = await usdc.balanceOf(buyer().address);
    const merchantBefore = await usdc.balanceOf(payTo);

    const bad = await buyerFetch()(`${shop.url}/api/calc?expr=${encodeURIComponent("3001!")}`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as ErrorBody).error.code).toBe("too_large");
    const missing = await buyerFetch()(`${shop.url}/api/calc`);
    expect(missing.status).toBe(400);

    const runsBefore = runs.get("/api/fail") ?? 0;
    const failed = await buyerFetch()(`${shop.url}/api/fail`);
    expect(failed.status).toBe(502);
    expect(await failed.json()).toEqual({
      error: { code: "upstream_failed", message: "the upstream is down" },
    });
    expect(runs.get("/api/fail")).toBe(runsBefore + 1);

    await chain.miner.pending();
    expect(await usdc.balanceOf(buyer().address)).toBe(before);
    expect(await usdc.balanceOf(payTo)).toBe(merchantBefore);
  });

  it("runs the handler once for concurrent requests carrying the same payment, and charges once", async () => {
    const usdc = usdcReader(chain.devnet.rpc);
    const before = await usdc.balanceOf(buyer().address);
    // The handler that runs is held until the other nineteen are answered: each of them then meets the ledger's
    // row while it is taken, whatever the machine's load (a fixed delay let a slow copy verify after the
    // settlement, and the facilitator, not the ledger, refused it).
    const gate = `once-${wired.kind}-${wired.wire.replace(" ", "-")}`;
    const url = `${shop.url}/api/echo?text=once&hold=${gate}`;
    const unpaid = await fetch(url);
    expect(unpaid.status).toBe(402);
    const required = decodePaymentRequiredHeader(unpaid.headers.get("PAYMENT-REQUIRED") ?? "");
    // The resource is the URL asked for, query string included.
    expect(required.resource.url).toBe(url);
    const [requirements] = required.accepts;
    if (!requirements) throw new Error("no requirements");
    const payment = await pay(buyer(), requirements, required.resource, required.extensions);
    const header = encodePaymentSignatureHeader(payment);

    const runsBefore = runs.get("/api/echo") ?? 0;
    let answered = 0;
    let othersAnswered: () => void = () => undefined;
    const nineteen = new Promise<void>((resolve) => {
      othersAnswered = resolve;
    });
    const pending = Array.from({ length: 20 }, () =>
      fetch(url, { headers: { "PAYMENT-SIGNATURE": header } }).then((response) => {
        if (++answered === 19) othersAnswered();
        return response;
      }),
    );
    await nineteen;
    echoGates.release(gate);
    const responses = await Promise.all(pending);
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, ...Array.from({ length: 19 }, () => 409)]);
    const conflict = responses.find((r) => r.status === 409);
    expect(await conflict?.json()).toMatchObject({ error: { code: "payment_in_use" } });
    // With what to pay instead, as a 402 would say it: a client can sign a fresh payment.
    const again = decodePaymentRequiredHeader(conflict?.headers.get("PAYMENT-REQUIRED") ?? "");
    expect(again).toMatchObject({ error: "payment_in_use", resource: { url }, accepts: required.accepts });
    expect(runs.get("/api/echo")).toBe(runsBefore + 1);
    expect(await usdc.balanceOf(buyer().address)).toBe(before - 2000n);

    // Replayed after it settled: the lock is kept, so the handler does not run again.
    const replay = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header } });
    expect([402, 409]).toContain(replay.status);
    expect(runs.get("/api/echo")).toBe(runsBefore + 1);
    expect(await usdc.balanceOf(buyer().address)).toBe(before - 2000n);
  });
});
