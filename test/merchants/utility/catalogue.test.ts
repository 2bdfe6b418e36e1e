import { describe, expect, it } from "vitest";
import {
  SPEC_ORDER,
  specPathOf,
  UTILITY_ALIAS_PATHS,
  utilityEndpoints,
} from "../../../src/merchants/utility/catalogue.ts";

// Spec 4.4, price_usd per path, copied from the table: every operation under a path costs its price.
const SPEC_PRICES: Record<string, string> = {
  "/api/seo/alt-check": "0.001",
  "/api/scrape": "0.001",
  "/api/ping": "0.001",
  "/api/store": "0.001",
  "/api/timezone": "0.001",
  "/api/geo": "0.001",
  "/api/calc": "0.001",
  "/api/a11y/contrast": "0.001",
  "/api/scratchpad": "0.001",
  "/api/seo/metadata": "0.001",
  "/api/summarize": "0.002",
  "/api/dns": "0.002",
  "/api/email/verify": "0.002",
  "/api/icon/search": "0.002",
  "/api/data/convert": "0.005",
  "/v1/messages": "0.01",
  "/api/search": "0.01",
  "/api/qr": "0.01",
  "/api/a11y/check": "0.01",
  "/api/translate-text": "0.01",
  "/api/uptime/report": "0.01",
  "/api/vectorize": "0.02",
  "/api/generate-image": "0.07",
};

describe("the utility catalogue", () => {
  const endpoints = utilityEndpoints();

  it("lists only paths of spec 4.4, each at the spec's price, in the spec's order", () => {
    expect(Object.keys(SPEC_PRICES)).toEqual([...SPEC_ORDER]);
    for (const e of endpoints) {
      const specPath = specPathOf(e.path);
      expect(specPath, e.path).toBeDefined();
      expect(e.price, e.path).toBe(SPEC_PRICES[specPath ?? ""]);
    }
    const ranks = endpoints.map((e) => SPEC_ORDER.indexOf(specPathOf(e.path) ?? ""));
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
  });

  it("has one entry per method and path", () => {
    const keys = endpoints.map((e) => `${e.method} ${e.path}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("holds the alias host's paths", () => {
    const paths = new Set<string>(endpoints.map((e) => e.path));
    expect(UTILITY_ALIAS_PATHS.filter((p) => paths.has(p))).toEqual(["/api/geo", "/api/scrape"]);
  });
});
