/**
 * `/llms.txt`: what it names (the OpenAPI document, the MCP endpoint, the guidance) and the prices it
 * lists, held to the catalogue they are generated from, for a test merchant of every kind of price and for
 * every real merchant and demo shop; served by every host, the demo's shops host with every shop's.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import { z } from "zod";
import { shopsApp } from "../../src/demo/shops/host.ts";
import { DEMO_SHOPS, shopMerchant } from "../../src/demo/shops/index.ts";
import { merchantApp } from "../../src/merchant-kit/app.ts";
import {
  type AnyEndpoint,
  defineEndpoint,
  type Merchant,
  resourceUrl,
  templatePath,
} from "../../src/merchant-kit/endpoint.ts";
import { hostInfo, hostInfoSettings } from "../../src/merchant-kit/host-info.ts";
import { llmsTxt } from "../../src/merchant-kit/llms-txt.ts";
import { MERCHANTS } from "../../src/merchants/index.ts";
import { loadConfig } from "../../src/services/config.ts";
import { openTestDatabase } from "../helpers/db.ts";
import { echo, refusingFacilitator, sum, testConfig } from "../helpers/merchant.ts";

const URL_ = "https://merchant.example";
const payTo = `0x${"1".repeat(40)}` as const;
const payments = testConfig().payments;

const metered = defineEndpoint({
  method: "POST",
  path: "/v1/metered",
  price: "0.04",
  scheme: "upto",
  description: "Metered work. Costs what it used.",
  input: z.object({ cost: z.number().int() }),
  output: z.object({ cost: z.number() }),
  example: { input: { cost: 1 }, output: { cost: 1 } },
  handler: async ({ cost }) => ({ cost }),
});
const either = defineEndpoint({
  method: "POST",
  path: "/v1/either",
  price: "0.018",
  scheme: ["exact", "upto"],
  description: "Either scheme. Listed or metered.",
  input: z.object({}),
  output: z.object({}),
  example: { input: {}, output: {} },
  handler: async () => ({}),
});
const hidden = defineEndpoint({
  method: "GET",
  path: "/api/hidden",
  price: "0.5",
  listed: false,
  description: "Served, not advertised.",
  input: z.object({}),
  output: z.object({}),
  example: { input: {}, output: {} },
  handler: async () => ({}),
});

const merchant: Merchant = {
  name: "test",
  title: "Test API",
  payTo,
  publicUrl: URL_,
  guidance: "Start with the echo.",
  endpoints: [echo, sum, metered, either, hidden],
  free: [
    {
      method: "GET",
      path: "/v1/prices",
      description: "The prices (free).",
      example: {},
      handler: () => Response.json({}),
    },
  ],
};

/** Each price line: `- [METHOD path](url): text` as method, path, url and the dollar amount it starts with. */
function priceLines(text: string): { method: string; path: string; url: string; price: string }[] {
  const section = text.split(/^##+ Prices$/m).slice(1);
  return section.flatMap((part) =>
    [
      ...(part.split(/^##+ (?!Prices)/m)[0] ?? "").matchAll(
        /^- \[(GET|POST) ([^\]]+)\]\(([^)]+)\): (?:up to )?\$([0-9.]+) /gm,
      ),
    ].map(([, method, path, url, price]) => ({
      method: method as string,
      path: path as string,
      url: url as string,
      price: price as string,
    })),
  );
}

/** What the catalogue advertises: each listed endpoint's line, as the file must give it. */
const advertised = (m: Merchant) =>
  m.endpoints
    .filter((e: AnyEndpoint) => e.listed !== false)
    .map((e) => ({ method: e.method, path: templatePath(e.path), url: resourceUrl(m, e), price: e.price }));

describe("llms.txt", () => {
  const text = llmsTxt(merchant, hostInfo(merchant, payments));

  it("opens with the title, a one-line summary and the host's guidance", () => {
    const lines = text.split("\n");
    expect(lines[0]).toBe("# Test API");
    expect(lines[2]).toBe(
      "> Paid per call through x402, no account and no key: 5 paid operations, $0.002 to $0.5 a call.",
    );
    expect(lines[4]).toBe("Start with the echo.");
    expect(text).toContain("PAYMENT-SIGNATURE");
  });

  it("names the OpenAPI document and the MCP endpoint", () => {
    expect(text).toContain(`- [OpenAPI document](${URL_}/openapi.json): `);
    expect(text).toContain(`- [MCP endpoint](${URL_}/mcp): `);
  });

  it("lists every advertised price as the catalogue writes it, and says how each is paid", () => {
    expect(priceLines(text)).toEqual(advertised(merchant));
    expect(text).toContain(`- [POST /api/sum](${URL_}/api/sum): $0.005 per call (x402 scheme exact). `);
    expect(text).toContain(`- [POST /v1/metered](${URL_}/v1/metered): up to $0.04 per call, metered: `);
    expect(text).toContain(
      `- [POST /v1/either](${URL_}/v1/either): $0.018 per call (x402 scheme exact), or metered up to it`,
    );
    // Unlisted: served and in the OpenAPI document, not advertised here (as in /.well-known/x402).
    expect(text).not.toContain("/api/hidden");
    expect(text).toContain(
      "- 1 more operation is served but not advertised: their prices are in the OpenAPI document.",
    );
    expect(text).toContain(`## Free\n\n- [GET /v1/prices](${URL_}/v1/prices): free. The prices (free).`);
  });

  it.each(Object.keys(MERCHANTS))("of the %s host lists every price of its catalogue", (name) => {
    const built = MERCHANTS[name as keyof typeof MERCHANTS](
      { payTo, publicUrl: URL_ },
      loadConfig({ env: { X402M_INFERENCE_ENGINE: "offline" } }),
    );
    const lines = priceLines(llmsTxt(built, hostInfo(built, payments)));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines).toEqual(advertised(built));
  });

  it("of every demo shop lists its prices", () => {
    for (const shop of DEMO_SHOPS) {
      const built = shopMerchant(shop, payTo, `${URL_}/${shop.slug}`);
      expect(priceLines(llmsTxt(built, hostInfo(built, payments))), shop.slug).toEqual(advertised(built));
    }
  });

  it("is served by the host as plain text, with the operator's settings", async () => {
    const opened = await openTestDatabase("pglite");
    onTestFinished(opened.close);
    const config = loadConfig({ env: { X402M_CONTACT_EMAIL: "ops@merchant.example" } });
    const app = await merchantApp(merchant, {
      services: { db: opened.db, config },
      facilitator: refusingFacilitator,
      payments: config.payments,
    });
    const response = await app.request("/llms.txt");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await response.text()).toBe(
      llmsTxt(merchant, hostInfo(merchant, config.payments, hostInfoSettings(config, "test"))),
    );
    const doc = await (await app.request("/openapi.json")).json();
    expect(doc["x-agentcash-guidance"]).toEqual({ llmsTxtUrl: `${URL_}/llms.txt` });
  });

  it("of the demo's shops host names every shop's documents and prices, and one OpenAPI document holds them all", async () => {
    const opened = await openTestDatabase("pglite");
    onTestFinished(opened.close);
    const shops = DEMO_SHOPS.map((shop, i) => ({
      name: shop.name,
      merchant: shopMerchant(
        shop,
        `0x${String(i % 10).repeat(40)}` as `0x${string}`,
        `http://shops.test/${shop.slug}`,
      ),
    }));
    const config = testConfig();
    const app = await shopsApp(shops, {
      services: { db: opened.db, config },
      facilitator: refusingFacilitator,
      payments: config.payments,
    });
    const text = await (await app.request("/llms.txt")).text();
    expect(text.split("\n")[0]).toBe("# Demo shops");
    expect(text).toContain("- [OpenAPI document](http://shops.test/openapi.json): ");
    for (const { merchant: shop } of shops) {
      expect(text).toContain(`## ${shop.title}\n`);
      expect(text).toContain(`- [OpenAPI document](${shop.publicUrl}/openapi.json): `);
      expect(text).toContain(`- [MCP endpoint](${shop.publicUrl}/mcp): `);
    }
    expect(priceLines(text)).toEqual(shops.flatMap(({ merchant: shop }) => advertised(shop)));
    // Each shop's own, at its slug, is its part on its own.
    const fortune = await (await app.request("/fortune/llms.txt")).text();
    expect(fortune.split("\n")[0]).toBe("# Fortune Teller API");

    const doc = await (await app.request("/openapi.json")).json();
    expect(doc.servers).toEqual([{ url: "http://shops.test" }]);
    const operations = Object.entries(
      doc.paths as Record<string, Record<string, { operationId: string }>>,
    ).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({
        key: `${method.toUpperCase()} ${path}`,
        id: op.operationId,
      })),
    );
    expect(operations.map((o) => o.key)).toEqual(
      shops.flatMap(({ merchant: shop }) =>
        shop.endpoints.map((e) => `${e.method} /${shop.name}${templatePath(e.path)}`),
      ),
    );
    expect(new Set(operations.map((o) => o.id)).size).toBe(operations.length);
  });
});
