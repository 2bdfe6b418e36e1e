/**
 * Real x402 v1 servers on the project's facilitator (issue 85): an `x402-hono` 1.1.0 server and an
 * `x402-express` 1.2.0 server, each started as their READMEs start one (`paymentMiddleware(payTo, routes,
 * facilitator)` with the facilitator's URL), selling on `base` (the devnet is Base's chain with Base's USDC
 * at its address), each paid by `x402-fetch` 1.2.0's `wrapFetchWithPayment`. Before the facilitator spoke
 * v1, every one of these payments was answered 402 `invalid_x402_version`.
 */

import type { Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { Hono } from "hono";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { paymentMiddleware as expressPayment } from "x402-express";
import { decodeXPaymentResponse, wrapFetchWithPayment } from "x402-fetch";
import { paymentMiddleware as honoPayment } from "x402-hono";
import type { Devnet } from "../../src/chain/devnet/index.ts";
import type { Database } from "../../src/common/db/index.ts";
import { type Listening, listen } from "../../src/common/listen.ts";
import type { Facilitator } from "../../src/facilitator/index.ts";
import { useDevnet } from "../helpers/chain.ts";
import { LEDGER_KIND, openTestDatabase } from "../helpers/db.ts";
import { devnetFacilitator } from "../helpers/facilitator.ts";
import { newMerchant, usdcReader } from "../helpers/x402.ts";

const chain = useDevnet({ buyers: 2 });

let ledger: { db: Database; close(): Promise<void> };
let facilitator: Facilitator;
let served: Listening;
let usdc: ReturnType<typeof usdcReader>;

beforeAll(async () => {
  ledger = await openTestDatabase(LEDGER_KIND);
  facilitator = await devnetFacilitator(chain.devnet, ledger.db);
  served = await listen(facilitator.app.fetch, "127.0.0.1", 0);
  usdc = usdcReader(chain.devnet.rpc);
});
afterAll(async () => {
  await served?.close();
  await facilitator?.close();
  await ledger?.close();
});

const WEATHER = { city: "Lisbon", temperature: 21 };
const ROUTES = {
  "/weather": { price: "$0.001", network: "base" as const, config: { description: "the weather" } },
};

/** `fetch` that keeps the X-PAYMENT headers it sends, so that a test can send one again. */
function recordingFetch() {
  const sent: string[] = [];
  const recording: typeof fetch = (input, init) => {
    const payment = new Headers(init?.headers).get("X-PAYMENT");
    if (payment) sent.push(payment);
    return fetch(input, init);
  };
  return { fetch: recording, sent };
}

/**
 * A buyer of `url` with x402-fetch 1.2.0: paid once, answered 200 with the weather and `X-PAYMENT-RESPONSE`;
 * the same payment sent again buys nothing.
 */
async function buysOnce(url: string, payTo: `0x${string}`, buyer: Devnet["buyers"][0]) {
  const recording = recordingFetch();
  const pay = wrapFetchWithPayment(recording.fetch, privateKeyToAccount(buyer.privateKey));
  const before = await usdc.balanceOf(buyer.address);

  const response = await pay(url);
  expect(response.status, await response.clone().text()).toBe(200);
  expect(await response.json()).toEqual(WEATHER);
  const header = response.headers.get("X-PAYMENT-RESPONSE");
  expect(header).toBeTruthy();
  const receipt = decodeXPaymentResponse(header as string);
  expect(receipt).toMatchObject({ success: true, network: "base", payer: buyer.address });
  expect(await usdc.balanceOf(payTo)).toBe(1000n);
  expect(await usdc.balanceOf(buyer.address)).toBe(before - 1000n);
  const mined = await usdc.receipt(receipt.transaction as `0x${string}`);
  expect(mined.from.toLowerCase()).toBe(chain.devnet.facilitatorAccount.address.toLowerCase());

  // The same X-PAYMENT again: the facilitator settles an authorization once, so the server refuses it.
  expect(recording.sent).toHaveLength(1);
  const replay = await fetch(url, { headers: { "X-PAYMENT": recording.sent[0] as string } });
  expect(replay.status).toBe(402);
  expect(await usdc.balanceOf(payTo)).toBe(1000n);
  expect(await usdc.balanceOf(buyer.address)).toBe(before - 1000n);
}

describe("x402 v1 servers on the project's facilitator", () => {
  it("an x402-hono 1.1.0 server is paid by x402-fetch 1.2.0, once", async () => {
    const payTo = newMerchant();
    const app = new Hono();
    app.use(honoPayment(payTo, ROUTES, { url: served.url as `${string}://${string}` }));
    app.get("/weather", (c) => c.json(WEATHER));
    const shop = await listen(app.fetch, "127.0.0.1", 0);
    onTestFinished(() => shop.close());

    await buysOnce(`${shop.url}/weather`, payTo, chain.devnet.buyers[0] as Devnet["buyers"][0]);
  });

  it("an x402-express 1.2.0 server is paid by x402-fetch 1.2.0, once", async () => {
    const payTo = newMerchant();
    // Express as its README starts it; the project has no Express types, so the little used is typed here.
    const express = createRequire(import.meta.url)("express") as () => {
      use(handler: unknown): void;
      get(path: string, handler: (req: unknown, res: { json(body: unknown): void }) => void): void;
      listen(port: number, host: string, ready: () => void): Server;
    };
    const app = express();
    app.use(expressPayment(payTo, ROUTES, { url: served.url as `${string}://${string}` }));
    app.get("/weather", (_req, res) => res.json(WEATHER));
    const server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, "127.0.0.1", () => resolve(s));
    });
    onTestFinished(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    const { port } = server.address() as AddressInfo;

    await buysOnce(`http://127.0.0.1:${port}/weather`, payTo, chain.devnet.buyers[1] as Devnet["buyers"][0]);
  });
});
