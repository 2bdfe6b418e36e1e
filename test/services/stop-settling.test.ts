/**
 * A stop never exits between a paid call's settlement and the commit of the write it paid for: the
 * lifecycle waits for it past its close time-out, the drain does not cut its client, and the database closes
 * after it. A settlement held past both stands for a loaded machine's slow facilitator, deterministically.
 */
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it, onTestFinished } from "vitest";
import { openDatabase } from "../../src/common/db/index.ts";
import { Lifecycle } from "../../src/common/lifecycle.ts";
import { DEFAULT_DRAIN_MS } from "../../src/common/listen.ts";
import { merchantApp } from "../../src/merchant-kit/app.ts";
import { loadConfig } from "../../src/services/config.ts";
import { startMerchantHosts } from "../../src/services/merchants.ts";
import { DATABASE_KINDS, isolatedDatabaseOptions } from "../helpers/db.ts";
import { note, runs, testMerchant } from "../helpers/merchant.ts";
import { NETWORK, newMerchant } from "../helpers/x402.ts";

/** The close time-out the stop is given: far shorter than the settlement below. */
const CLOSE_TIMEOUT_MS = 200;

describe.each(DATABASE_KINDS)("serve's merchants on %s, stopped while a paid write settles", (kind) => {
  it("waits past its close time-out and drain for the settlement, commits the write, answers it, then closes", async () => {
    const options = await isolatedDatabaseOptions(kind, "merchants");
    onTestFinished(options.cleanup);
    const config = loadConfig({
      env: { X402M_DATA: options.dataDir, ...(options.databaseUrl && { DATABASE_URL: options.databaseUrl }) },
    });
    let settleStarted = () => {};
    const settling = new Promise<void>((resolve) => {
      settleStarted = resolve;
    });
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const facilitator = heldFacilitator(() => {
      settleStarted();
      return released;
    });
    const lifecycle = new Lifecycle();
    // Once the test is over: the stop below has closed it.
    onTestFinished(() => lifecycle.close());
    const payTo = newMerchant();
    const hosts = await startMerchantHosts(config, [], facilitator, lifecycle, [
      {
        name: "test",
        port: 0,
        build: async (url, kit) => {
          const merchant = testMerchant(payTo, url, [note]);
          const funds = async () => ({ balance: 10n ** 12n, used: new Set<string>() });
          return { merchants: [merchant], fetch: (await merchantApp(merchant, { ...kit, funds })).fetch };
        },
      },
    ]);
    const url = `${hosts.urls.test}/api/note`;
    const init = { method: "POST", headers: { "content-type": "application/json" }, body: '{"text":"paid"}' };
    const signature = await signedPayment(url, init);
    const answer = fetch(url, { ...init, headers: { ...init.headers, "PAYMENT-SIGNATURE": signature } });

    // The handler has written and answered; the middleware is settling. Then the stop starts, and its
    // time-out passes while the settlement is held.
    await settling;
    const closed = lifecycle.close(CLOSE_TIMEOUT_MS).then(() => performance.now());
    // Past the drain's cut too: the connection that is to carry the answer is spared.
    await new Promise((resolve) => setTimeout(resolve, DEFAULT_DRAIN_MS + CLOSE_TIMEOUT_MS));
    const releasedAt = performance.now();
    release();
    // The stop ended after the settlement, not at its time-out; the call was answered, not cut.
    expect(await closed).toBeGreaterThanOrEqual(releasedAt);
    const answered = await answer;
    expect(answered.status).toBe(200);
    expect(answered.headers.has("payment-response")).toBe(true);

    // The database closed last, so the write is there: committed before it closed.
    const db = await openDatabase({ pgliteDir: options.pgliteDir, databaseUrl: options.databaseUrl });
    onTestFinished(() => db.close());
    expect((await db.query("SELECT text FROM test_notes")).rows).toEqual([{ text: "paid" }]);
    expect((await db.query("SELECT state FROM merchant_payments")).rows).toEqual([{ state: "settled" }]);
  }, 30_000);
});

describe.each(DATABASE_KINDS)("serve's merchants on %s, a paid call whose client a stop cut", (kind) => {
  it("does no work, settles nothing and gives the payment back when the client is gone before the work starts", async () => {
    const options = await isolatedDatabaseOptions(kind, "merchants");
    onTestFinished(options.cleanup);
    const config = loadConfig({
      env: { X402M_DATA: options.dataDir, ...(options.databaseUrl && { DATABASE_URL: options.databaseUrl }) },
    });
    let settles = 0;
    const facilitator = heldFacilitator(async () => {
      settles++;
    });
    const lifecycle = new Lifecycle();
    onTestFinished(() => lifecycle.close());
    // The paid call waits, just before its work, until the server has seen its client go: as a call queued
    // for the database when a stop's drain cuts its connection.
    let waiting = () => {};
    const asked = new Promise<void>((resolve) => {
      waiting = resolve;
    });
    let gone: Promise<void> = new Promise(() => {});
    let handled: Promise<unknown> = Promise.resolve();
    const payTo = newMerchant();
    const hosts = await startMerchantHosts(config, [], facilitator, lifecycle, [
      {
        name: "test",
        port: 0,
        build: async (url, kit) => {
          const load = async () => {
            waiting();
            await gone;
          };
          const merchant = testMerchant(payTo, url, [{ ...note, load }]);
          const funds = async () => ({ balance: 10n ** 12n, used: new Set<string>() });
          const app = await merchantApp(merchant, { ...kit, funds });
          return {
            merchants: [merchant],
            fetch: (request, env) => {
              if (request.headers.has("payment-signature")) {
                gone = new Promise((resolve) => request.signal.addEventListener("abort", () => resolve()));
              }
              const answered = app.fetch(request, env);
              if (request.headers.has("payment-signature")) handled = Promise.resolve(answered);
              return answered;
            },
          };
        },
      },
    ]);
    const url = `${hosts.urls.test}/api/note`;
    const init = { method: "POST", headers: { "content-type": "application/json" }, body: '{"text":"cut"}' };
    const signature = await signedPayment(url, init);
    const runsBefore = runs.get("/api/note") ?? 0;
    const client = new AbortController();
    const answer = fetch(url, {
      ...init,
      headers: { ...init.headers, "PAYMENT-SIGNATURE": signature },
      signal: client.signal,
    }).catch(() => "cut");
    await asked;
    client.abort();
    expect(await answer).toBe("cut");
    expect((await handled) as Response).toMatchObject({ status: 503 });
    await lifecycle.close();

    expect(settles).toBe(0);
    const db = await openDatabase({ pgliteDir: options.pgliteDir, databaseUrl: options.databaseUrl });
    onTestFinished(() => db.close());
    expect((await db.query("SELECT text FROM test_notes")).rows).toEqual([]);
    expect((await db.query("SELECT state FROM merchant_payments")).rows).toEqual([]);
    expect(runs.get("/api/note") ?? 0).toBe(runsBefore);
  }, 30_000);
});

/** Verifies every payment; settles each once `held()` resolves, touching no chain. */
function heldFacilitator(held: () => Promise<void>): FacilitatorClient {
  const payerOf = (payload: { payload: Record<string, unknown> }) =>
    (payload.payload as { authorization: { from: string } }).authorization.from;
  return {
    getSupported: async () => ({
      kinds: [{ x402Version: 2, scheme: "exact", network: NETWORK }],
      extensions: [],
      signers: {},
    }),
    verify: async (payload) => ({ isValid: true, payer: payerOf(payload) }),
    settle: async (payload, requirements) => {
      await held();
      return {
        success: true,
        transaction: `0x${"ab".repeat(32)}`,
        network: requirements.network,
        payer: payerOf(payload),
      };
    },
  };
}

/** A fresh buyer's payment for `url` asked with `init`, as its 402 requires it, as a PAYMENT-SIGNATURE header. */
async function signedPayment(url: string, init: RequestInit): Promise<string> {
  const required = decodePaymentRequiredHeader(
    (await fetch(url, init)).headers.get("payment-required") ?? "",
  );
  const buyer = new x402Client().register(
    NETWORK,
    new ExactEvmScheme(privateKeyToAccount(generatePrivateKey())),
  );
  return encodePaymentSignatureHeader(await buyer.createPaymentPayload(required));
}
