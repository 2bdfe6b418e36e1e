/**
 * A merchant whose payee this facilitator does not serve without a key: what its buyer and its operator
 * see, with a stock `@x402/hono` merchant and with the project's merchant kit, and the same stock merchant
 * paid once it sends a key.
 */
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { type FacilitatorConfig, HTTPFacilitatorClient, x402ResourceServer } from "@x402/core/server";
import { ExactEvmScheme as ExactEvmServer } from "@x402/evm/exact/server";
import { wrapFetchWithPayment } from "@x402/fetch";
import { paymentMiddleware } from "@x402/hono";
import { Hono } from "hono";
import { parseEther } from "viem";
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import type { Devnet } from "../../src/chain/devnet/index.ts";
import type { Database } from "../../src/common/db/index.ts";
import { type Listening, listen } from "../../src/common/listen.ts";
import { setLogDestination } from "../../src/common/log.ts";
import { addKey } from "../../src/facilitator/access/index.ts";
import type { Facilitator } from "../../src/facilitator/index.ts";
import { useDevnet } from "../helpers/chain.ts";
import { openTestDatabase } from "../helpers/db.ts";
import { devnetFacilitator } from "../helpers/facilitator.ts";
import { runs, startMerchant, testMerchant } from "../helpers/merchant.ts";
import { NETWORK, newMerchant, usdcReader, x402ClientOf } from "../helpers/x402.ts";

const chain = useDevnet({ buyers: 1 });
let db: Database;
let facilitator: Facilitator;
let served: Listening;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  const opened = await openTestDatabase("pglite");
  db = opened.db;
  closers.push(opened.close);
  // Closed, with an allow-list that holds none of these tests' payees.
  facilitator = await devnetFacilitator(chain.devnet, db, {
    access: { open: false, payees: [newMerchant()] },
  });
  closers.push(() => facilitator.close());
  served = await listen(facilitator.app.fetch, "127.0.0.1", 0);
  closers.push(() => served.close());
}, 60_000);
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

const buyerFetch = () =>
  wrapFetchWithPayment(fetch, x402ClientOf(chain.devnet.buyers[0] as Devnet["buyers"][0]));

/**
 * A merchant as the x402 docs build one: `@x402/hono`'s middleware over `HTTPFacilitatorClient`, pointed at
 * this facilitator (with `createAuthHeaders` when it has a key), selling `GET /weather` for $0.001.
 */
async function stockShop(
  payTo: `0x${string}`,
  createAuthHeaders?: FacilitatorConfig["createAuthHeaders"],
): Promise<Listening> {
  const server = new x402ResourceServer(
    new HTTPFacilitatorClient({ url: served.url, ...(createAuthHeaders ? { createAuthHeaders } : {}) }),
  ).register(NETWORK, new ExactEvmServer());
  const app = new Hono();
  app.use(
    paymentMiddleware(
      { "GET /weather": { accepts: { scheme: "exact", price: "$0.001", network: NETWORK, payTo } } },
      server,
    ),
  );
  app.get("/weather", (c) => c.json({ temperature: 21 }));
  const shop = await listen(app.fetch, "127.0.0.1", 0);
  onTestFinished(() => shop.close());
  return shop;
}

/** Everything written to the console and to stderr while `fn` runs. */
async function capture(fn: () => Promise<void>): Promise<string> {
  const lines: string[] = [];
  const spies = (["log", "info", "warn", "error"] as const).map((level) =>
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      lines.push(args.map(String).join(" "));
    }),
  );
  const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  // The kit's own lines go to fd 2 through the logger, not through process.stderr.
  setLogDestination({ write: (line) => lines.push(line) });
  try {
    await fn();
  } finally {
    for (const spy of spies) spy.mockRestore();
    stderr.mockRestore();
    setLogDestination(undefined);
  }
  return lines.join("\n");
}

describe("a merchant this facilitator does not serve without a key", () => {
  it("stock @x402/hono: the buyer's 402 names the reason and what to do; the middleware logs nothing", async () => {
    const payee = newMerchant();
    const shop = await stockShop(payee);
    let response: Response | undefined;
    const logged = await capture(async () => {
      response = await buyerFetch()(`${shop.url}/weather?city=Lisbon`);
    });
    // The SDK reads our 401 as a VerifyError and answers the buyer a 402 carrying its message: the buyer
    // (an agent, a person in a browser) sees why instead of paying again; nothing reaches the chain.
    expect(response?.status).toBe(402);
    const required = decodePaymentRequiredHeader(response?.headers.get("payment-required") ?? "");
    expect(required.error).toBe(
      `payee_not_allowed: payee ${payee.toLowerCase()} is not on this facilitator's allow-list; send an API key that allows it (Authorization: Bearer <key>, see docs/facilitator.md)`,
    );
    // What the stock middleware tells its operator: nothing (@x402/hono 2.27 swallows verify errors into
    // the 402). The operator reads it in the buyer's 402, or uses the merchant kit (below).
    expect(logged).not.toMatch(/payee_not_allowed/);
    expect(await usdcReader(chain.devnet.rpc).balanceOf(payee)).toBe(0n);
  });

  it("stock @x402/hono with the key in HTTPFacilitatorClient's auth headers: paid and delivered", async () => {
    const payee = newMerchant();
    const { key } = await addKey(db, {
      name: "stock shop",
      payees: [payee.toLowerCase()],
      gasBudgetWei: parseEther("0.1"),
      ratePerMinute: 60,
    });
    const auth = { Authorization: `Bearer ${key}` };
    const shop = await stockShop(payee, async () => ({ verify: auth, settle: auth, supported: {} }));
    const response = await buyerFetch()(`${shop.url}/weather?city=Lisbon`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ temperature: 21 });
    expect(await usdcReader(chain.devnet.rpc).balanceOf(payee)).toBe(1000n);
  });

  it("the merchant kit: a 503 that names the reason, the handler never run, and one log line for the operator", async () => {
    const payee = newMerchant();
    const merchants = await openTestDatabase("pglite");
    onTestFinished(merchants.close);
    const host = await startMerchant(
      (url) => testMerchant(payee, url),
      merchants.db,
      new HTTPFacilitatorClient({ url: served.url }),
      { rpcUrl: chain.devnet.rpc },
    );
    onTestFinished(() => host.close());
    const before = runs.get("/api/echo") ?? 0;
    const answers: { status: number; body: { error: { code: string; message: string } } }[] = [];
    const logged = await capture(async () => {
      for (let i = 0; i < 3; i++) {
        const response = await buyerFetch()(`${host.url}/api/echo?text=hi`);
        answers.push({ status: response.status, body: await response.json() });
      }
    });
    for (const answer of answers) {
      expect(answer.status).toBe(503);
      expect(answer.body.error.code).toBe("facilitator_unavailable");
      expect(answer.body.error.message).toContain(
        `payee_not_allowed: payee ${payee.toLowerCase()} is not on this facilitator's allow-list`,
      );
    }
    expect(runs.get("/api/echo") ?? 0).toBe(before);
    const refusals = logged
      .split("\n")
      .filter((line) => line.includes("the facilitator refuses this merchant's payments"));
    expect(refusals).toHaveLength(1);
    expect(JSON.parse(refusals[0] as string)).toMatchObject({
      level: "error",
      status: 401,
      reason: "payee_not_allowed",
      error: expect.stringContaining(`payee ${payee.toLowerCase()} is not on this facilitator's allow-list`),
    });
    expect(await usdcReader(chain.devnet.rpc).balanceOf(payee)).toBe(0n);
  });
});
