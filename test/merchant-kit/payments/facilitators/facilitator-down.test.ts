/**
 * A merchant whose facilitator fails or goes away: a paid call is a 503 in the project's error shape with
 * `Retry-After`, never a 402 that sends the buyer round to pay again (nor a 500), the handler never runs,
 * nothing is charged; `/healthz` says the facilitator cannot be reached, and says so no longer once it is
 * back.
 */
import { HTTPFacilitatorClient } from "@x402/core/server";
import { wrapFetchWithPayment } from "@x402/fetch";
import { Hono } from "hono";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Listening, listenWithUrl } from "../../../../src/common/listen.ts";
import { openTestDatabase } from "../../../helpers/db.ts";
import { refusingFacilitator, runs, startMerchant, testMerchant } from "../../../helpers/merchant.ts";
import { x402ClientOf } from "../../../helpers/x402.ts";

/** A facilitator that lists its schemes and answers `/verify` with `verifyStatus` (500: it is failing). */
function facilitatorApp(verifyStatus: () => number) {
  return new Hono()
    .get("/supported", async (c) => c.json(await refusingFacilitator.getSupported()))
    .post("/verify", (c) =>
      verifyStatus() === 200
        ? c.json({ isValid: false, invalidReason: "test_refuses" })
        : c.json({ error: "database is down" }, 500),
    );
}

let facilitator: Listening;
let host: Listening;
let verifyStatus = 500;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  facilitator = await listenWithUrl(async () => facilitatorApp(() => verifyStatus).fetch, "127.0.0.1", 0);
  const { db, close } = await openTestDatabase("pglite");
  closers.push(close);
  host = await startMerchant(
    (url) => testMerchant("0x1111111111111111111111111111111111111111", url),
    db,
    new HTTPFacilitatorClient({ url: facilitator.url }),
  );
  closers.push(() => host.close());
}, 60_000);
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await facilitator.close().catch(() => undefined);
});

const key = generatePrivateKey();
const pay = wrapFetchWithPayment(
  fetch,
  x402ClientOf({ address: privateKeyToAccount(key).address, privateKey: key }),
);

async function unavailable(response: Response) {
  expect(response.status).toBe(503);
  expect(response.headers.get("retry-after")).toBe("30");
  expect(response.headers.has("payment-response")).toBe(false);
  const body = (await response.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe("facilitator_unavailable");
  expect(body.error.message).toMatch(/nothing was charged/);
  return body.error.message;
}

describe("a merchant whose facilitator fails", () => {
  it("answers 503 with Retry-After while the facilitator fails or is gone, and /healthz says so", async () => {
    const before = runs.get("/api/echo") ?? 0;
    expect((await fetch(`${host.url}/healthz`)).status).toBe(200);

    expect(await unavailable(await pay(`${host.url}/api/echo?text=hi`))).toMatch(/500/);

    // A facilitator that answers is a facilitator: its refusal is the buyer's 402 again.
    verifyStatus = 200;
    const refused = await pay(`${host.url}/api/echo?text=hi`);
    expect(refused.status).toBe(402);

    await facilitator.close();
    expect(await unavailable(await pay(`${host.url}/api/echo?text=hi`))).toMatch(/fetch failed/);
    const health = await fetch(`${host.url}/healthz`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({
      ok: false,
      facilitator: { reachable: false, since: expect.any(String), error: expect.any(String) },
    });
    expect(runs.get("/api/echo") ?? 0).toBe(before);

    // Back on its port: the next call it answers makes the host healthy again.
    const port = Number(new URL(facilitator.url).port);
    facilitator = await listenWithUrl(
      async () => facilitatorApp(() => verifyStatus).fetch,
      "127.0.0.1",
      port,
    );
    expect((await pay(`${host.url}/api/echo?text=hi`)).status).toBe(402);
    const healthy = await fetch(`${host.url}/healthz`);
    expect(healthy.status).toBe(200);
    expect(await healthy.json()).toEqual({ ok: true, facilitator: { reachable: true } });
  });

  it("answers 503 from the first request of a host started while its facilitator was away", async () => {
    // A port that was free a moment ago: nothing answers there.
    const gone = await listenWithUrl(async () => facilitatorApp(() => 200).fetch, "127.0.0.1", 0);
    await gone.close();
    const { db, close } = await openTestDatabase("pglite");
    closers.push(close);
    const cutOff = await startMerchant(
      (url) => testMerchant("0x1111111111111111111111111111111111111111", url),
      db,
      new HTTPFacilitatorClient({ url: gone.url }),
    );
    closers.push(() => cutOff.close());
    // Before the fix, the SDK's own 500 {"error": "Internal Server Error"}: it asked /supported at start.
    await unavailable(await fetch(`${cutOff.url}/api/echo?text=hi`));
    await unavailable(await fetch(`${cutOff.url}/api/echo?text=hi`));
  });
});
