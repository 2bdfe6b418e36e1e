/**
 * Every route of every merchant with every method a client may send, unpaid and with a payment: the
 * cases are made from the catalogues (each merchant host as `serve` and the demo build it, and the demo's
 * shops), so a new endpoint is covered without a line here. What each route must answer:
 *
 * - its own method: the 402 with PAYMENT-REQUIRED (or the refusal its precheck documents); with a
 *   payment, that payment verified (the facilitator here refuses every payment);
 * - HEAD where it takes GET: GET's status and headers without a body, never verifying a payment sent along;
 * - OPTIONS: 204 with `Allow`;
 * - any other method: 405 with `Allow` and the error shape of the path's dialect, nothing verified.
 */
import { x402Client } from "@x402/core/client";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import type { PaymentRequired } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { UptoEvmScheme } from "@x402/evm/upto/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import type { Database } from "../../src/common/db/index.ts";
import { UnpaidLimit } from "../../src/common/rate-limit.ts";
import { MERCHANT_HOSTS, type MerchantHost } from "../../src/config/ports.ts";
import { DEMO_SHOPS, shopMerchant } from "../../src/demo/shops/index.ts";
import { type FacilitatorService, facilitatorRoutes } from "../../src/facilitator/http.ts";
import { merchantApp } from "../../src/merchant-kit/app.ts";
import { type AnyEndpoint, type Errors, type Merchant, pathParams } from "../../src/merchant-kit/endpoint.ts";
import { MERCHANTS } from "../../src/merchants/index.ts";
import { OFFLINE_SETTINGS } from "../../src/merchants/inference/catalogue.ts";
import { ReportService, reportRoutes } from "../../src/reports/index.ts";
import type { Config } from "../../src/services/config.ts";
import { addr, analyticsWith, payment } from "../helpers/data.ts";
import { openTestDatabase, SERVER_URL } from "../helpers/db.ts";
import { echo, runs, testConfig } from "../helpers/merchant.ts";
import { startPaidShop } from "../helpers/paid.ts";
import { NETWORK } from "../helpers/x402.ts";

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
type Method = (typeof METHODS)[number];

/** The kit's free documents on every host (merchant-kit/app.ts). */
const DOCUMENTS = ["/healthz", "/openapi.json", "/.well-known/x402", "/", "/docs"] as const;

/** The configuration the demo runs its hosts on: the inference API on its offline engine. */
const config: Config = { ...testConfig(), inference: OFFLINE_SETTINGS };
const payTo = privateKeyToAccount(generatePrivateKey()).address;

/** Every merchant host: the configured ones (`serve`) and the demo's shops. */
const HOSTS: Merchant[] = [
  ...(Object.keys(MERCHANT_HOSTS) as MerchantHost[]).map((name) =>
    MERCHANTS[name]({ payTo, publicUrl: `http://${name}.test` }, config),
  ),
  ...DEMO_SHOPS.map((shop) => shopMerchant(shop, payTo, `http://${shop.slug}.test`)),
];

/** A route as the catalogue declares it. */
interface Route {
  method: "GET" | "POST";
  path: string;
  /** The paid endpoint, for a paid route. */
  endpoint?: AnyEndpoint;
  /** The refusals a free route documents. */
  errors?: Errors;
  openai: boolean;
}

function routesOf(merchant: Merchant): Route[] {
  return [
    ...DOCUMENTS.map((path) => ({ method: "GET" as const, path, openai: false })),
    ...(merchant.free ?? []).map((r) => ({
      method: r.method,
      path: r.path,
      errors: r.errors,
      openai: r.errorDialect === "openai",
    })),
    ...merchant.endpoints.map((e) => ({
      method: e.method,
      path: e.path,
      endpoint: e,
      openai: e.errorDialect === "openai",
    })),
  ];
}

/** What `Allow` must list for a path: the methods of its routes, HEAD with GET, and OPTIONS. */
function allowOf(routes: readonly Route[], path: string): string {
  const methods = new Set(routes.filter((r) => r.path === path).map((r) => r.method as string));
  if (methods.has("GET")) methods.add("HEAD");
  methods.add("OPTIONS");
  return METHODS.filter((m) => methods.has(m)).join(", ");
}

/**
 * A request for `route` with `method`, built from its example the way a client sends it: path parameters
 * in the path, a GET's input in the query, a POST's as its JSON or multipart body (sent with any method
 * that may carry one).
 */
function requestFor(
  merchant: Merchant,
  route: Route,
  method: Method,
  headers: Record<string, string> = {},
): Request {
  const example = { ...((route.endpoint?.example.input ?? {}) as Record<string, unknown>) };
  let path = route.path;
  for (const name of pathParams(route.path)) {
    path = path.replace(`:${name}`, encodeURIComponent(String(example[name])));
    delete example[name];
  }
  const url = new URL(`${merchant.publicUrl}${path}`);
  const init: RequestInit & { headers: Record<string, string> } = { method, headers: { ...headers } };
  if (route.method === "GET") {
    for (const [name, value] of Object.entries(example)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(v));
    }
  } else if (method !== "GET" && method !== "HEAD" && route.endpoint) {
    if (route.endpoint.body === "multipart") {
      const form = new FormData();
      for (const [name, value] of Object.entries(example)) {
        for (const v of Array.isArray(value) ? value : [value]) {
          if (v instanceof Blob) form.append(name, v);
          else if (v !== undefined) form.append(name, typeof v === "object" ? JSON.stringify(v) : String(v));
        }
      }
      init.body = form;
    } else {
      init.headers["content-type"] = "application/json";
      init.body = JSON.stringify(route.endpoint.example.input);
    }
  }
  return new Request(url, init);
}

/** A facilitator that supports both schemes and refuses every payment, counting what it is asked. */
function countingFacilitator() {
  const calls = { verify: 0, settle: 0 };
  const client: FacilitatorClient = {
    getSupported: async () => ({
      kinds: [
        { x402Version: 2, scheme: "exact", network: NETWORK },
        {
          x402Version: 2,
          scheme: "upto",
          network: NETWORK,
          extra: { facilitatorAddress: privateKeyToAccount(generatePrivateKey()).address },
        },
      ],
      extensions: [],
      signers: {},
    }),
    verify: async () => {
      calls.verify++;
      return { isValid: false, invalidReason: "test_refuses" };
    },
    settle: async () => {
      calls.settle++;
      throw new Error("the test facilitator does not settle");
    },
  };
  return { client, calls };
}

/** A buyer that pays with whichever scheme a 402 offers first. */
const buyer = (() => {
  const account = privateKeyToAccount(generatePrivateKey());
  return new x402Client()
    .register(NETWORK, new ExactEvmScheme(account))
    .register(NETWORK, new UptoEvmScheme(account));
})();

/**
 * A 402's payment-required, less what is fresh by design in every 402: the sign-in-with-x challenge's nonce and
 * times (payments/extensions/siwx.ts), so that two 402s of one route compare equal.
 */
const required = (response: Response): PaymentRequired => {
  const decoded = decodePaymentRequiredHeader(response.headers.get("payment-required") ?? "");
  const signIn = decoded.extensions?.["sign-in-with-x"] as { info?: Record<string, unknown> } | undefined;
  if (signIn?.info) {
    for (const field of ["nonce", "issuedAt", "expirationTime"])
      if (field in signIn.info) signIn.info[field] = "fresh";
  }
  return decoded;
};

let db: Database;
let closeDb: () => Promise<void>;
beforeAll(async () => {
  ({ db, close: closeDb } = await openTestDatabase(SERVER_URL ? "postgres" : "pglite"));
});
afterAll(async () => {
  await closeDb?.();
});

describe.each(HOSTS.map((merchant) => ({ name: merchant.name, merchant })))("$name", ({ merchant }) => {
  const routes = routesOf(merchant);
  const facilitator = countingFacilitator();
  let app: Awaited<ReturnType<typeof merchantApp>>;
  beforeAll(async () => {
    app = await merchantApp(merchant, {
      services: { db, config },
      facilitator: facilitator.client,
      payments: config.payments,
    });
  }, 60_000);

  it.each(routes.map((route) => ({ route, name: `${route.method} ${route.path}` })))(
    "$name answers every method",
    async ({ route }) => {
      const allow = allowOf(routes, route.path);
      const send = async (method: Method, headers?: Record<string, string>) => {
        const response = await app.request(requestFor(merchant, route, method, headers));
        return { response, body: await response.text() };
      };

      // Its own method, unpaid.
      const own = await send(route.method);
      const documented = Object.keys(route.endpoint?.errors ?? route.errors ?? {}).map(Number);
      if (route.endpoint) {
        // A precheck (a program not installed, a provider not configured) may refuse before any payment.
        if (own.response.status !== 402) expect(route.endpoint.precheck, own.body).toBeDefined();
        expect([402, ...documented], own.body).toContain(own.response.status);
      } else {
        expect([200, ...documented], own.body).toContain(own.response.status);
      }

      // HEAD: GET's answer without a body.
      if (route.method === "GET") {
        const head = await send("HEAD");
        expect(head.response.status).toBe(own.response.status);
        expect(head.body).toBe("");
        expect(head.response.headers.get("content-type")).toBe(own.response.headers.get("content-type"));
        if (own.response.status === 402) expect(required(head.response)).toEqual(required(own.response));
      }

      // OPTIONS, and every method the path does not take.
      for (const method of METHODS) {
        if (method === "OPTIONS") {
          const options = await send("OPTIONS", { origin: "https://browser.test" });
          expect(options.response.status, method).toBe(204);
          expect(options.response.headers.get("allow")).toBe(allow);
          expect(options.response.headers.get("access-control-allow-methods")).toBe(
            allow.replace(/, /g, ","),
          );
          continue;
        }
        if (allow.split(", ").includes(method)) continue;
        const refused = await send(method);
        expect(refused.response.status, `${method}: ${refused.body}`).toBe(405);
        expect(refused.response.headers.get("allow")).toBe(allow);
        if (method === "HEAD") continue;
        const error = (JSON.parse(refused.body) as { error: Record<string, unknown> }).error;
        expect(error.code).toBe("method_not_allowed");
        // OpenAI's dialect where the path speaks it, the project's elsewhere.
        expect(error.type).toBe(route.openai ? "invalid_request_error" : undefined);
      }

      // With a payment: verified for its own method only, never settled here, never for HEAD.
      if (!route.endpoint || own.response.status !== 402) return;
      const signature = encodePaymentSignatureHeader(
        await buyer.createPaymentPayload(required(own.response)),
      );
      for (const method of METHODS) {
        const before = { ...facilitator.calls };
        const paid = await send(method, { "PAYMENT-SIGNATURE": signature });
        const verified = facilitator.calls.verify - before.verify;
        expect(facilitator.calls.settle, method).toBe(before.settle);
        if (method === route.method) {
          expect(paid.response.status, paid.body).toBe(402);
          expect(verified, method).toBe(1);
          expect(required(paid.response).error).toBe("test_refuses");
        } else if (method === "HEAD" && route.method === "GET") {
          expect(paid.response.status).toBe(402);
          expect(verified, method).toBe(0);
          expect(required(paid.response)).toEqual(required(own.response));
          expect(paid.response.headers.get("payment-response")).toBeNull();
        } else {
          expect(paid.response.status, method).toBe(method === "OPTIONS" ? 204 : 405);
          expect(verified, method).toBe(0);
        }
      }
    },
  );

  it("answers a path it does not have 404, whatever the method", async () => {
    for (const method of METHODS) {
      const response = await app.request(`${merchant.publicUrl}/no/such/path`, { method });
      expect(response.status, method).toBe(404);
    }
  });
});

describe("HEAD of a paid route on a devnet", () => {
  it("is never charged, even with a payment, which then buys the GET", async () => {
    const shop = await startPaidShop([echo]);
    try {
      const url = `${shop.url}/api/echo?text=probe`;
      const unpaid = await fetch(url);
      expect(unpaid.status).toBe(402);
      const buyerAccount = privateKeyToAccount(shop.buyer(0).privateKey);
      const client = new x402Client().register(NETWORK, new ExactEvmScheme(buyerAccount));
      const signature = encodePaymentSignatureHeader(await client.createPaymentPayload(required(unpaid)));
      const before = await shop.balanceOf(shop.payTo);
      const ran = runs.get("/api/echo") ?? 0;

      const head = await fetch(url, { method: "HEAD", headers: { "PAYMENT-SIGNATURE": signature } });
      expect(head.status).toBe(402);
      expect(await head.text()).toBe("");
      expect(head.headers.get("payment-response")).toBeNull();
      expect(required(head)).toEqual(required(unpaid));
      expect(await shop.pending()).toBe(0);
      expect(await shop.balanceOf(shop.payTo)).toBe(before);
      expect(runs.get("/api/echo") ?? 0).toBe(ran);

      const get = await fetch(url, { headers: { "PAYMENT-SIGNATURE": signature } });
      expect(get.status).toBe(200);
      expect(await get.json()).toMatchObject({ text: "probe" });
      expect(decodePaymentResponseHeader(get.headers.get("payment-response") ?? "").success).toBe(true);
      expect(await shop.balanceOf(shop.payTo)).toBe(before + 2000n);
    } finally {
      await shop.close();
    }
  }, 120_000);
});

describe("the report service", () => {
  let analytics: Analytics;
  let app: ReturnType<typeof reportRoutes>;
  const m = addr("merchant");
  beforeAll(async () => {
    analytics = await analyticsWith([payment({ payer: addr("a"), payTo: m, amount: 3_000_000 })]);
    const limit = new UnpaidLimit(
      {
        perSecond: 1,
        burst: 2,
        clients: 10,
        loopback: "limited",
        trustedProxies: [],
        forwardedHeader: "x-forwarded-for",
      },
      () => 0,
    );
    app = reportRoutes(new ReportService(analytics, { publicUrl: "https://reports.test" }), { limit });
  });
  afterAll(() => analytics?.close());

  it("answers a method a path does not take 405 with Allow, and HEAD as GET", async () => {
    for (const path of [
      "/",
      `/v1/reports/base/${m}`,
      "/v1/leaderboard/base",
      `/badges/base/${m}.svg`,
      "/healthz",
    ]) {
      const get = await app.request(path);
      const head = await app.request(path, { method: "HEAD" });
      expect(head.status, path).toBe(get.status);
      expect(await head.text()).toBe("");
      for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
        const refused = await app.request(path, { method });
        expect(refused.status, `${method} ${path}`).toBe(405);
        expect(refused.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
        expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("method_not_allowed");
      }
    }
  });

  it("limits a client's requests when a limit is given, reports and pages alike", async () => {
    const from = { incoming: { socket: { remoteAddress: "203.0.113.9" } } };
    const statuses = [];
    for (const path of ["/", "/v1/leaderboard/base", `/reports/base/${m}`, "/healthz"]) {
      statuses.push((await app.request(path, {}, from)).status);
    }
    expect(statuses).toEqual([200, 200, 429, 429]);
  });
});

describe("the facilitator's HTTP face", () => {
  it("answers a method a path does not take 405 with Allow", async () => {
    // Only what the routes need before reaching the facilitator: a 405 never does.
    const app = facilitatorRoutes({
      supported: () => ({ kinds: [], extensions: [], signers: {} }),
    } as unknown as FacilitatorService);
    const get = await app.request("/verify");
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST, OPTIONS");
    for (const method of ["POST", "PUT", "DELETE"]) {
      const refused = await app.request("/supported", { method });
      expect(refused.status, method).toBe(405);
      expect(refused.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    }
    const head = await app.request("/supported", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    const options = await app.request("/settle", { method: "OPTIONS" });
    expect(options.status).toBe(204);
    expect(options.headers.get("allow")).toBe("POST, OPTIONS");
    expect((await app.request("/nope", { method: "PUT" })).status).toBe(404);
  });
});
