/**
 * A merchant host for platform tests: the utility catalogue's calc plus a few test endpoints (echo with
 * a run counter and a delay, a POST body, a failing upstream), served by the real platform.
 */
import type { FacilitatorClient } from "@x402/core/server";
import { z } from "zod";
import type { Database } from "../../src/common/db/index.ts";
import { UpstreamError } from "../../src/common/errors.ts";
import { type Listening, listenWithUrl } from "../../src/common/listen.ts";
import { loadConfig } from "../../src/config/config.ts";
import { merchantApp } from "../../src/merchant-kit/app.ts";
import { type AnyEndpoint, defineEndpoint, type Merchant } from "../../src/merchant-kit/catalogue.ts";
import { calc } from "../../src/merchants/utility/calc.ts";

/** How many times each test endpoint's handler ran, by path. */
export const runs = new Map<string, number>();
const count = (path: string) => runs.set(path, (runs.get(path) ?? 0) + 1);

export const echo = defineEndpoint({
  method: "GET",
  path: "/api/echo",
  price: "0.002",
  description: "Echoes a text, slowly enough for concurrent requests to overlap.",
  input: z.object({
    text: z.string().min(1).describe("What to echo."),
    delay: z.coerce.number().int().max(2000).default(0),
  }),
  output: z.object({ text: z.string(), payer: z.string() }),
  example: {
    input: { text: "hi" },
    output: { text: "hi", payer: "0x0000000000000000000000000000000000000001" },
  },
  handler: async ({ text, delay }, ctx) => {
    count("/api/echo");
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

export function testMerchant(payTo: `0x${string}`, publicUrl: string): Merchant {
  return { name: "test", title: "Test API", payTo, publicUrl, endpoints: TEST_ENDPOINTS };
}

export const testConfig = () => loadConfig({ env: {} });

/** A facilitator that supports Base's exact scheme and refuses everything (no chain needed). */
export const refusingFacilitator: FacilitatorClient = {
  getSupported: async () => ({
    kinds: [{ x402Version: 2, scheme: "exact", network: "eip155:8453" }],
    extensions: [],
    signers: {},
  }),
  verify: async () => ({ isValid: false, invalidReason: "test_refuses" }),
  settle: async () => {
    throw new Error("the test facilitator does not settle");
  },
};

/** Serves `build(url)`'s merchant on 127.0.0.1 with the platform. */
export function startMerchant(
  build: (url: string) => Merchant,
  db: Database,
  facilitator: FacilitatorClient,
): Promise<Listening> {
  const config = testConfig();
  return listenWithUrl(
    async (url) =>
      (await merchantApp(build(url), { services: { db, config }, facilitator, payments: config.payments }))
        .fetch,
    "127.0.0.1",
    0,
  );
}
