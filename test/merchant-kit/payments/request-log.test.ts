/**
 * The request log on a real merchant host, paid on a devnet through the project's facilitator over HTTP:
 * a paid request's line says who paid, how much and in which transaction, and the facilitator's lines of
 * its verification and settlement carry the merchant's request id; a streamed answer's line is written at
 * the stream's end, with its settlement. Both services log in this process, to one captured destination.
 */
import { decodePaymentResponseHeader } from "@x402/core/http";
import { wrapFetchWithPayment } from "@x402/fetch";
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from "vitest";
import { z } from "zod";
import { type Devnet, startDevnet } from "../../../src/chain/devnet/index.ts";
import type { Database } from "../../../src/common/db/index.ts";
import { type Listening, listen } from "../../../src/common/listen.ts";
import { logLevel, setLogDestination, setLogLevel } from "../../../src/common/log.ts";
import type { Facilitator } from "../../../src/facilitator/index.ts";
import { defineEndpoint } from "../../../src/merchant-kit/endpoint.ts";
import { httpFacilitator } from "../../../src/merchant-kit/payments/facilitators/failover.ts";
import { Streamed } from "../../../src/merchant-kit/payments/streamed.ts";
import { startMiner } from "../../helpers/chain.ts";
import { LEDGER_KIND, openTestDatabase, SERVER_URL } from "../../helpers/db.ts";
import { devnetFacilitator } from "../../helpers/facilitator.ts";
import { echo, startMerchant, testMerchant } from "../../helpers/merchant.ts";
import { newMerchant, x402ClientFor } from "../../helpers/x402.ts";

/** A paid answer streamed in three parts, settled at its end (payments/streamed.ts). */
const stream = defineEndpoint({
  method: "GET",
  path: "/api/stream",
  price: "0.003",
  description: "Streams three parts.",
  input: z.object({}),
  output: z.object({}),
  example: { input: {}, output: {} },
  handler: async () =>
    new Streamed({
      headers: { "content-type": "text/event-stream" },
      head: "data: start\n\n",
      parts: (async function* () {
        for (let i = 1; i <= 3; i++) yield `data: part ${i}\n\n`;
      })(),
      meter: () => 0n,
      end: (ending) => `data: ${JSON.stringify({ charged: ending.charged.toString() })}\n\n`,
    }) as never,
});

type Line = Record<string, unknown>;

let devnet: Devnet;
let facilitator: Facilitator;
let facilitatorHttp: Listening;
let host: Listening;
let lines: Line[] = [];
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  devnet = await startDevnet({ port: 0, buyers: 1, blockTime: 0 });
  closers.push(() => devnet.stop());
  const miner = startMiner(devnet);
  closers.push(() => miner.stop());
  const ledger = await openTestDatabase(LEDGER_KIND);
  closers.push(ledger.close);
  facilitator = await devnetFacilitator(devnet, ledger.db);
  closers.push(() => facilitator.close());
  facilitatorHttp = await listen(facilitator.app.fetch, "127.0.0.1", 0);
  closers.push(() => facilitatorHttp.close());
  const state: { db: Database; close(): Promise<void> } = await openTestDatabase(
    SERVER_URL ? "postgres" : "pglite",
  );
  closers.push(state.close);
  const payTo = newMerchant();
  host = await startMerchant(
    (url) => testMerchant(payTo, url, [echo, stream]),
    state.db,
    httpFacilitator(facilitatorHttp.url),
    { rpcUrl: devnet.rpc },
  );
  closers.push(() => host.close());
}, 60_000);

afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

beforeEach(() => {
  lines = [];
  const level = logLevel();
  setLogLevel("info");
  setLogDestination({ write: (line) => lines.push(JSON.parse(line) as Line) });
  onTestFinished(() => {
    setLogDestination(undefined);
    setLogLevel(level);
  });
});

const requests = (service: string) => lines.filter((l) => l.msg === "request" && l.service === service);

describe("a paid request's line", () => {
  it("names the payer, the amount, the scheme and the settlement's transaction; the facilitator's lines share its id", async () => {
    const buyer = devnet.buyers[0] as (typeof devnet.buyers)[0];
    const pay = wrapFetchWithPayment(fetch, x402ClientFor(buyer, "exact"));
    const response = await pay(`${host.url}/api/echo?text=hi`);
    expect(response.status).toBe(200);
    await response.json();
    const id = response.headers.get("x-request-id");
    const receipt = decodePaymentResponseHeader(response.headers.get("payment-response") ?? "");

    // The buyer's first request was answered 402, on a line of its own.
    const [unpaid, paid] = requests("test");
    expect(unpaid).toMatchObject({ route: "/api/echo", status: 402 });
    expect(unpaid?.request_id).not.toBe(id);
    expect(unpaid).not.toHaveProperty("transaction");
    expect(paid).toMatchObject({
      level: "info",
      request_id: id,
      method: "GET",
      route: "/api/echo",
      path: "/api/echo",
      status: 200,
      scheme: "exact",
      amount: "2000",
      network: "eip155:8453",
      transaction: receipt.transaction,
      client: "127.0.0.1",
    });
    expect(String(paid?.payer).toLowerCase()).toBe(buyer.address.toLowerCase());
    expect(paid?.transaction).toMatch(/^0x[0-9a-f]{64}$/);

    // The facilitator's own lines: the same id, sent to it as X-Request-Id.
    const facilitated = requests("facilitator").filter((l) => l.request_id === id);
    expect(facilitated.map((l) => [l.route, l.status])).toEqual([
      ["/verify", 200],
      ["/settle", 200],
    ]);
  }, 30_000);

  it("of a streamed answer is written at the stream's end, with its settlement; the facilitator's /settle shares its id", async () => {
    const buyer = devnet.buyers[0] as (typeof devnet.buyers)[0];
    const pay = wrapFetchWithPayment(fetch, x402ClientFor(buyer, "exact"));
    const response = await pay(`${host.url}/api/stream`);
    expect(response.status).toBe(200);
    const id = response.headers.get("x-request-id");
    const body = await response.text();
    expect(body).toContain('"charged":"3000"');
    const paid = requests("test").find((l) => l.request_id === id);
    expect(paid).toMatchObject({
      route: "/api/stream",
      status: 200,
      stream: "settled",
      scheme: "exact",
      amount: "3000",
      transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    const settle = requests("facilitator").find((l) => l.route === "/settle" && l.request_id === id);
    expect(settle).toMatchObject({ status: 200 });
  }, 30_000);
});
