import { decodePaymentRequiredHeader } from "@x402/core/http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Listening } from "../../src/common/listen.ts";
import { aliasOf, missingAliasPaths } from "../../src/merchant-kit/endpoint.ts";
import { listingsNdjson, listingsOf } from "../../src/merchant-kit/listings.ts";
import { priceToAtomic } from "../../src/merchant-kit/price.ts";
import { x402Routes } from "../../src/merchant-kit/routes.ts";
import { wellKnownX402 } from "../../src/merchant-kit/well-known.ts";
import { openTestDatabase } from "../helpers/db.ts";
import {
  refusingFacilitator,
  startMerchant,
  TEST_ENDPOINTS,
  testConfig,
  testMerchant,
} from "../helpers/merchant.ts";
import { NETWORK, newMerchant } from "../helpers/x402.ts";

/** Documents read back loosely: the assertions are the check. */
// biome-ignore lint/suspicious/noExplicitAny: JSON read back in a test
type LooseJson = any;

type ErrorBody = { error: { code: string; message: string } };

const payTo = newMerchant().toLowerCase() as `0x${string}`;
let shop: Listening;
let closeDb: () => Promise<void>;

beforeAll(async () => {
  const opened = await openTestDatabase("pglite");
  closeDb = opened.close;
  shop = await startMerchant((url) => testMerchant(payTo, url), opened.db, refusingFacilitator);
});
afterAll(async () => {
  await shop?.close();
  await closeDb?.();
});

describe("prices", () => {
  it("turn the spec's dollar strings into exact atomic units", () => {
    expect(priceToAtomic("0.001", 6)).toBe(1000n);
    expect(priceToAtomic("0.002856", 6)).toBe(2856n);
    expect(priceToAtomic("0.07", 6)).toBe(70000n);
    expect(priceToAtomic("1", 6)).toBe(1000000n);
    expect(() => priceToAtomic("0.0000001", 6)).toThrow(/more than 6 decimals/);
  });
});

describe("a merchant host built from its catalogue", () => {
  it("asks for the catalogue's price, wallet and Bazaar description in its 402", async () => {
    const response = await fetch(`${shop.url}/api/calc?expr=1%2B1`);
    expect(response.status).toBe(402);
    const required = decodePaymentRequiredHeader(response.headers.get("PAYMENT-REQUIRED") ?? "");
    expect(required.resource).toMatchObject({
      url: `${shop.url}/api/calc?expr=1%2B1`,
      mimeType: "application/json",
    });
    expect(required.accepts).toEqual([
      expect.objectContaining({
        scheme: "exact",
        network: NETWORK,
        amount: "1000",
        payTo,
        asset: "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
        extra: { name: "USD Coin", version: "2" },
      }),
    ]);
    const bazaar = (required.extensions as { bazaar: { info: { input: Record<string, unknown> } } }).bazaar;
    expect(bazaar.info.input).toMatchObject({
      type: "http",
      method: "GET",
      queryParams: { expr: "sqrt(2)" },
    });
    expect(response.headers.get("access-control-expose-headers")).toMatch(/PAYMENT-REQUIRED/i);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("lets a browser read every kind of answer: CORS headers on a refusal, a free page and an unknown path", async () => {
    for (const [url, status] of [
      [`${shop.url}/api/calc`, 400],
      [`${shop.url}/openapi.json`, 200],
      [`${shop.url}/no/such/path`, 404],
    ] as const) {
      const response = await fetch(url, { headers: { Origin: "https://app.example" } });
      expect(response.status, url).toBe(status);
      expect(response.headers.get("access-control-allow-origin"), url).toBe("*");
      expect(response.headers.get("access-control-expose-headers"), url).toMatch(/PAYMENT-RESPONSE/i);
      await response.arrayBuffer();
    }
  });

  it("refuses bad input with a 400 JSON error before asking for payment", async () => {
    for (const url of [
      `${shop.url}/api/calc`,
      `${shop.url}/api/calc?expr=`,
      `${shop.url}/api/echo?delay=x&text=a`,
    ]) {
      const response = await fetch(url);
      expect(response.status, url).toBe(400);
      expect(response.headers.get("PAYMENT-REQUIRED")).toBeNull();
      expect(await response.json()).toEqual({
        error: { code: "invalid_input", message: expect.any(String) },
      });
    }
    const notJson = await fetch(`${shop.url}/api/sum`, {
      method: "POST",
      body: "{",
      headers: { "content-type": "application/json" },
    });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as ErrorBody).error.code).toBe("invalid_json");
    const wrongShape = await fetch(`${shop.url}/api/sum`, {
      method: "POST",
      body: JSON.stringify({ numbers: "1" }),
      headers: { "content-type": "application/json" },
    });
    expect(wrongShape.status).toBe(400);
    const good = await fetch(`${shop.url}/api/sum`, {
      method: "POST",
      body: JSON.stringify({ numbers: [1] }),
      headers: { "content-type": "application/json" },
    });
    expect(good.status).toBe(402);
  });

  it("serves an OpenAPI 3.1 document whose operations carry the catalogue's prices and schemas", async () => {
    const doc = (await (await fetch(`${shop.url}/openapi.json`)).json()) as LooseJson;
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.servers).toEqual([{ url: shop.url }]);
    for (const endpoint of TEST_ENDPOINTS) {
      const op = doc.paths[endpoint.path][endpoint.method.toLowerCase()];
      expect(op["x-payment-info"]).toEqual({
        price: { mode: "fixed", currency: "USD", amount: endpoint.price },
        protocols: [
          {
            x402: {
              scheme: "exact",
              network: NETWORK,
              asset: "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
              amount: priceToAtomic(endpoint.price, 6).toString(),
              payTo,
              maxTimeoutSeconds: 300,
              resource: `${shop.url}${endpoint.path}`,
            },
          },
        ],
      });
      expect(op.responses["200"].content["application/json"].example).toEqual(endpoint.example.output);
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["200", "400", "402"]));
    }
    const calc = doc.paths["/api/calc"].get;
    expect(calc.parameters.map((p: { name: string }) => p.name)).toEqual(["expr", "expression"]);
    expect(calc.parameters[0]).toMatchObject({
      in: "query",
      required: false,
      schema: { type: "string" },
      example: "sqrt(2)",
    });
    expect(doc.paths["/api/sum"].post.requestBody.content["application/json"].schema).toMatchObject({
      type: "object",
      required: ["numbers"],
    });
  });

  it("lists its resources at /.well-known/x402", async () => {
    const known = await (await fetch(`${shop.url}/.well-known/x402`)).json();
    expect(known).toMatchObject({
      version: 1,
      x402Version: 2,
      resources: TEST_ENDPOINTS.map((e) => `${shop.url}${e.path}`),
      openapi: `${shop.url}/openapi.json`,
    });
  });

  it("renders a reference page with every operation, its price and a curl line, without external assets", async () => {
    for (const path of ["/", "/docs"]) {
      const response = await fetch(`${shop.url}${path}`);
      expect(response.headers.get("content-type")).toMatch(/text\/html/);
      const html = await response.text();
      expect(html).toContain('<html lang="en">');
      for (const endpoint of TEST_ENDPOINTS) {
        expect(html).toContain(
          `<code>${endpoint.path}</code> <span class="price">$${endpoint.price} per call</span>`,
        );
      }
      expect(html).toContain(`curl -i &#39;${shop.url}/api/calc?expr=sqrt%282%29&#39;`);
      expect(html).toContain(
        "curl -i -X POST -H &#39;content-type: application/json&#39; -d &#39;{&quot;numbers&quot;:[1,2]}&#39;",
      );
      // One inline script (the console), no external asset.
      expect(html.match(/<script/g)).toHaveLength(1);
      expect(html).not.toMatch(/<script src|src="http|href="http[^"]*\.(css|js)"/);
      expect(html).toContain('<form class="try" data-method="GET" data-path="/api/calc"');
      expect(html).toContain('<input name="expr" value="sqrt(2)">');
    }
  });
});

describe("listings", () => {
  it("are the catalogue's resources, prices and descriptions, by price, as import records", () => {
    const merchant = testMerchant(payTo, "https://api.test");
    const listings = listingsOf(merchant);
    expect(listings.map((l) => l.priceUsd)).toEqual([0.001, 0.002, 0.005, 0.01]);
    expect(listings[0]).toEqual({
      payTo,
      resource: "https://api.test/api/calc",
      priceUsd: 0.001,
      description: TEST_ENDPOINTS[0]?.description,
      method: "GET",
    });
    const lines = listingsNdjson([merchant])
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(4);
    expect(lines[0]).toEqual({
      type: "listing",
      pay_to: payTo,
      resource: "https://api.test/api/calc",
      price_usd: 0.001,
      description: TEST_ENDPOINTS[0]?.description,
      method: "GET",
    });
    expect(lines.every((l) => l.type === "listing")).toBe(true);
  });
});

describe("an unlisted endpoint", () => {
  it("still asks for its price, but declares no Bazaar discovery and is left out of the listings and /.well-known/x402", () => {
    const listed = testMerchant(payTo, "https://api.test");
    const merchant = {
      ...listed,
      endpoints: listed.endpoints.map((e, i) => (i === 0 ? { ...e, listed: false } : e)),
    };
    const routes = x402Routes(merchant, testConfig().payments);
    const [hidden, shown] = merchant.endpoints.map((e) => routes[`${e.method} ${e.path}`]);
    expect(hidden?.accepts).toMatchObject({ payTo, price: { amount: "1000" } });
    expect(hidden?.extensions).not.toHaveProperty("bazaar");
    expect(shown?.extensions).toHaveProperty("bazaar");
    expect(listingsOf(merchant).map((l) => l.resource)).not.toContain("https://api.test/api/calc");
    expect(listingsOf(merchant)).toHaveLength(listingsOf(listed).length - 1);
    expect(wellKnownX402(merchant).resources).not.toContain("https://api.test/api/calc");
    expect(wellKnownX402(merchant).resources).toHaveLength(wellKnownX402(listed).resources.length - 1);
  });
});

describe("exact transfers", () => {
  const routeOf = (
    exactTransfers?: readonly ("eip3009" | "permit2")[],
    scheme?: "upto"[] | ["exact", "upto"],
  ) => {
    const [calc] = testMerchant(payTo, "https://api.test").endpoints;
    const endpoint = { ...(calc as NonNullable<typeof calc>), exactTransfers, scheme };
    return x402Routes(
      { ...testMerchant(payTo, "https://api.test"), endpoints: [endpoint] },
      testConfig().payments,
    )["GET /api/calc"];
  };
  const domain = { name: "USD Coin", version: "2" };

  it("offers exact once per transfer, in the catalogue's order, Permit2's saying so", () => {
    expect(routeOf()?.accepts).toMatchObject({ scheme: "exact", price: { extra: domain } });
    expect(routeOf(["permit2"])?.accepts).toMatchObject({
      scheme: "exact",
      price: { extra: { ...domain, assetTransferMethod: "permit2" } },
    });
    expect(routeOf(["eip3009", "permit2"], ["exact", "upto"])?.accepts).toEqual([
      expect.objectContaining({ scheme: "exact", price: expect.objectContaining({ extra: domain }) }),
      expect.objectContaining({
        scheme: "exact",
        price: expect.objectContaining({ extra: { ...domain, assetTransferMethod: "permit2" } }),
      }),
      expect.objectContaining({ scheme: "upto" }),
    ]);
    // Without exact, the transfers change nothing.
    expect(routeOf(["eip3009", "permit2"], ["upto"])?.accepts).toMatchObject({ scheme: "upto" });
  });

  it("refuses an exact that nobody could pay, or a transfer listed twice", () => {
    expect(() => routeOf([])).toThrow("exactTransfers");
    expect(() => routeOf(["permit2", "permit2"])).toThrow("exactTransfers");
  });
});

describe("an alias host", () => {
  it("lists a subset of another catalogue with the same descriptions and prices", () => {
    const source = testMerchant(payTo, "https://api.test");
    const alias = aliasOf(source, {
      name: "alias",
      payTo,
      publicUrl: "https://alias.test",
      paths: ["/api/calc", "/api/geo"],
    });
    expect(alias.endpoints).toEqual([TEST_ENDPOINTS[0]]);
    expect(listingsOf(alias)).toEqual([
      { ...listingsOf(source)[0], resource: "https://alias.test/api/calc" },
    ]);
    expect(missingAliasPaths(source, ["/api/calc", "/api/geo"])).toEqual(["/api/geo"]);
  });
});
