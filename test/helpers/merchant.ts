/**
 * A merchant host for platform tests: the utility catalogue's calc plus a few test endpoints (echo with
 * a run counter and a delay, a POST body, a failing upstream), served by the real platform.
 */
import type { FacilitatorClient } from "@x402/core/server";
import { Hono } from "hono";
import { z } from "zod";
import type { Database } from "../../src/common/db/index.ts";
import { AppError, UpstreamError } from "../../src/common/errors.ts";
import { type Listening, listenWithUrl } from "../../src/common/listen.ts";
import { merchantApp } from "../../src/merchant-kit/app.ts";
import { type AnyEndpoint, defineEndpoint, type Merchant } from "../../src/merchant-kit/endpoint.ts";
import type { FundsReader } from "../../src/merchant-kit/payments/ledger/payment-ledger.ts";
import { calc } from "../../src/merchants/utility/calc.ts";
import { loadConfig } from "../../src/services/config.ts";
import { gates } from "./gates.ts";

/** How many times each test endpoint's handler ran, by path. */
export const runs = new Map<string, number>();
const count = (path: string) => runs.set(path, (runs.get(path) ?? 0) + 1);

/**
 * The gates echo's handler waits at when asked (`hold=NAME`): a test keeps a call running until it has seen
 * what it waits for (the other requests answered), however slow the machine, instead of for a fixed delay.
 */
export const echoGates = gates();

export const echo = defineEndpoint({
  method: "GET",
  path: "/api/echo",
  price: "0.002",
  description: "Echoes a text, slowly enough for concurrent requests to overlap.",
  input: z.object({
    text: z.string().min(1).describe("What to echo."),
    delay: z.coerce.number().int().max(2000).default(0),
    hold: z.string().optional(),
  }),
  output: z.object({ text: z.string(), payer: z.string() }),
  example: {
    input: { text: "hi" },
    output: { text: "hi", payer: "0x0000000000000000000000000000000000000001" },
  },
  handler: async ({ text, delay, hold }, ctx) => {
    count("/api/echo");
    if (hold) await echoGates.pass(hold);
    await new Promise((resolve) => setTimeout(resolve, delay));
    return { text, payer: ctx.payer };
  },
});

export const sum = defineEndpoint({
  method: "POST",
  path: "/api/sum",
  price: "0.005",
  description: "Adds numbers sent as a JSON body.",
  input: z.object({ numbers: z.array(z.number()).min(1).max(100) }),
  output: z.object({ sum: z.number() }),
  example: { input: { numbers: [1, 2] }, output: { sum: 3 } },
  handler: async ({ numbers }) => ({ sum: numbers.reduce((a, b) => a + b, 0) }),
});

export const fail = defineEndpoint({
  method: "GET",
  path: "/api/fail",
  price: "0.01",
  description: "Always fails upstream.",
  input: z.object({}),
  output: z.object({}),
  example: { input: {}, output: {} },
  handler: async () => {
    count("/api/fail");
    throw new UpstreamError("the upstream is down");
  },
});

export const TEST_ENDPOINTS: readonly AnyEndpoint[] = [calc, echo, sum, fail];

/** A writing endpoint's table: one row per note, with its payer. */
const NOTES = {
  module: "test_notes",
  migrations: [
    {
      version: 1,
      name: "notes",
      up: "CREATE TABLE test_notes (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, payer text NOT NULL, text text NOT NULL)",
    },
  ],
};

export const note = defineEndpoint({
  method: "POST",
  path: "/api/note",
  price: "0.001",
  description: "Stores a note for the payer.",
  effects: ["writes"],
  tables: NOTES,
  input: z.object({ text: z.string().min(1), delay: z.number().int().max(2000).default(0) }),
  output: z.object({ id: z.string() }),
  example: { input: { text: "hi" }, output: { id: "1" } },
  handler: async ({ text, delay }, ctx) => {
    count("/api/note");
    const { rows } = await ctx.services.db.query<{ id: bigint }>(
      "INSERT INTO test_notes (payer, text) VALUES ($1, $2) RETURNING id",
      [ctx.payer, text],
    );
    await new Promise((resolve) => setTimeout(resolve, delay));
    return { id: String(rows[0]?.id) };
  },
});

export const model = defineEndpoint({
  method: "GET",
  path: "/api/model",
  price: "0.001",
  description: "Stands for a call that costs the merchant money upstream (a language model).",
  effects: ["upstream"],
  input: z.object({
    delay: z.coerce.number().int().max(2000).default(0),
    /** Once it has run, fails: a 5xx as an upstream that failed (`UpstreamError`), anything else as a refusal. */
    fail: z.coerce.number().int().min(400).max(504).optional(),
  }),
  output: z.object({ answer: z.string() }),
  example: { input: {}, output: { answer: "42" } },
  handler: async ({ delay, fail }) => {
    count("/api/model");
    await new Promise((resolve) => setTimeout(resolve, delay));
    if (fail !== undefined && fail >= 500)
      throw new UpstreamError("the model failed", "upstream_failed", 502);
    if (fail !== undefined) throw new AppError(fail as 400, "refused", "the model refused this request");
    return { answer: "42" };
  },
});

/** Endpoints the kit guards: one that writes, one that costs upstream. */
export const GUARDED_ENDPOINTS: readonly AnyEndpoint[] = [note, model];

export function testMerchant(
  payTo: `0x${string}`,
  publicUrl: string,
  endpoints: readonly AnyEndpoint[] = TEST_ENDPOINTS,
): Merchant {
  return { name: "test", title: "Test API", payTo, publicUrl, endpoints };
}

export const testConfig = () => loadConfig({ env: {} });

/** A facilitator that supports Base's exact and upto schemes and refuses everything (no chain needed). */
export const refusingFacilitator: FacilitatorClient = {
  getSupported: async () => ({
    kinds: [
      { x402Version: 2, scheme: "exact", network: "eip155:8453" },
      // As a real facilitator advertises it: an upto payment names the facilitator that may settle it.
      {
        x402Version: 2,
        scheme: "upto",
        network: "eip155:8453",
        extra: { facilitatorAddress: "0x000000000000000000000000000000000000fac1" },
      },
    ],
    extensions: [],
    signers: {},
  }),
  verify: async () => ({ isValid: false, invalidReason: "test_refuses" }),
  settle: async () => {
    throw new Error("the test facilitator does not settle");
  },
};

/** `refusingFacilitator`'s `GET /supported` over HTTP on 127.0.0.1: enough for a merchant host in another process to start. */
export function listenSupportedOnly(): Promise<Listening> {
  const app = new Hono().get("/supported", async (c) => c.json(await refusingFacilitator.getSupported()));
  return listenWithUrl(async () => app.fetch, "127.0.0.1", 0);
}

/**
 * Serves `build(url)`'s merchant on 127.0.0.1 with the kit; payers' balances are read from `rpcUrl` (a
 * devnet) or, without one, `funds`.
 */
export function startMerchant(
  build: (url: string) => Merchant,
  db: Database,
  facilitator: FacilitatorClient,
  chain: { rpcUrl?: string; funds?: FundsReader } = {},
): Promise<Listening> {
  const config = testConfig();
  const payments = { ...config.payments, rpcUrl: chain.rpcUrl ?? config.payments.rpcUrl };
  return listenWithUrl(
    async (url) =>
      (await merchantApp(build(url), { services: { db, config }, facilitator, payments, funds: chain.funds }))
        .fetch,
    "127.0.0.1",
    0,
  );
}
