import { describe, expect, it } from "vitest";
import { DEMO_SHOPS, shopMerchant } from "../../../src/demo/shops/index.ts";
import { ctx } from "./helpers.ts";

/** Endpoints whose answer is random: their example output is representative, not reproducible. */
const RANDOM = new Set(["dice/roll", "uuid/uuid", "password/password", "picker/pick", "picker/shuffle"]);

const all = DEMO_SHOPS.flatMap((shop) =>
  shop.endpoints.map((endpoint) => ({ key: `${shop.slug}${endpoint.path}`, shop, endpoint })),
);

describe("DEMO_SHOPS invariants", () => {
  it("has exactly 20 shops with unique slugs and names", () => {
    expect(DEMO_SHOPS).toHaveLength(20);
    expect(new Set(DEMO_SHOPS.map((s) => s.slug)).size).toBe(20);
    expect(new Set(DEMO_SHOPS.map((s) => s.name)).size).toBe(20);
  });

  it("slugs are lower-case kebab; names and titles are set", () => {
    for (const shop of DEMO_SHOPS) {
      expect(shop.slug).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(shop.name.trim()).not.toBe("");
      expect(shop.title).toContain(shop.name);
    }
  });

  it("every shop has 1 or 2 endpoints with unique paths and one priced at most $0.05", () => {
    for (const shop of DEMO_SHOPS) {
      expect(shop.endpoints.length).toBeGreaterThanOrEqual(1);
      expect(shop.endpoints.length).toBeLessThanOrEqual(2);
      const paths = shop.endpoints.map((e) => e.path);
      expect(new Set(paths).size).toBe(paths.length);
      for (const p of paths) expect(p).toMatch(/^\/[a-z0-9-]+(\/[a-z0-9-]+)*$/);
      expect(shop.endpoints.some((e) => Number(e.price) <= 0.05)).toBe(true);
    }
  });

  it("prices are plain dollar strings with exactly one below $0.001 and the two premium ones", () => {
    const prices = all.map((a) => a.endpoint.price as string);
    for (const p of prices) expect(p).toMatch(/^\d+\.\d+$/);
    const below = all.filter((a) => Number(a.endpoint.price) < 0.001);
    expect(below.map((a) => [a.key, a.endpoint.price])).toEqual([["uuid/uuid", "0.0001"]]);
    const above = all.filter((a) => Number(a.endpoint.price) > 0.05).map((a) => a.endpoint.price);
    expect(above.sort()).toEqual(["0.10", "0.25"]);
    for (const p of ["0.001", "0.002", "0.003", "0.005", "0.01", "0.02", "0.05"]) expect(prices).toContain(p);
  });

  it("every description is one or two sentences, every example parses", () => {
    for (const { endpoint } of all) {
      expect(endpoint.method === "GET" || endpoint.method === "POST").toBe(true);
      expect(endpoint.description.length).toBeGreaterThan(20);
      expect(endpoint.description.length).toBeLessThan(250);
      expect(endpoint.input.safeParse(endpoint.example.input).success).toBe(true);
      expect(endpoint.output.safeParse(endpoint.example.output).success).toBe(true);
    }
  });

  it("GET inputs take strings only (they come from the query string)", () => {
    for (const { endpoint } of all.filter((a) => a.endpoint.method === "GET")) {
      for (const value of Object.values(endpoint.example.input as Record<string, unknown>)) {
        expect(typeof value).toBe("string");
      }
    }
  });

  it("shopMerchant builds the merchant", () => {
    const shop = DEMO_SHOPS[0];
    if (!shop) throw new Error("no shops");
    const payTo = `0x${"a".repeat(40)}` as const;
    expect(shopMerchant(shop, payTo, "http://127.0.0.1:4021/fortune")).toEqual({
      name: "fortune",
      title: "Fortune Teller API",
      payTo,
      publicUrl: "http://127.0.0.1:4021/fortune",
      endpoints: shop.endpoints,
      guidance:
        "Fortune Teller, one of the devnet demo's small shops: computation on what the call sends, nothing fetched and nothing stored, answered at once; paid in the demo's devnet USDC, not real money.",
    });
  });
});

describe("every endpoint answers its example", () => {
  it("lists the random endpoints by their real keys", () => {
    for (const key of RANDOM) expect(all.map((a) => a.key)).toContain(key);
  });

  for (const { key, endpoint } of all) {
    it(`${key}: output parses${RANDOM.has(key) ? "" : " and equals the example"}`, async () => {
      // "Answered at once": pure computation settles before the event loop's next turn; a handler that
      // waited on I/O or a timer would not (a check no machine's load can fail, unlike a time limit).
      const answer = Promise.resolve(endpoint.handler(endpoint.input.parse(endpoint.example.input), ctx));
      const turn = new Promise<"waited">((resolve) => setImmediate(() => resolve("waited")));
      const settled = await Promise.race([answer.then((out) => ({ out })), turn]);
      expect(settled).not.toBe("waited");
      const out = await answer;
      expect(endpoint.output.safeParse(out).success).toBe(true);
      if (!RANDOM.has(key)) expect(out).toEqual(endpoint.example.output);
    });
  }
});
