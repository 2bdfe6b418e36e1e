/**
 * The pages endpoints sold through the real x402 flow on a devnet: one paid happy path each, against
 * saved pages served on 127.0.0.1 (opened by the fetch policy's allow-list), and failures that charge
 * nothing: bad inputs (400 before any 402), a 404 page and a non-HTML answer (422 after payment
 * verification, never settled).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pageEndpoints } from "../../../../src/merchants/utility/pages/index.ts";
import { type FixtureServer, html, startFixtureServer, text } from "../../../helpers/fixtures/index.ts";
import { type PaidShop, startPaidShop } from "../../../helpers/paid.ts";
import { usdcReader } from "../../../helpers/x402.ts";
import { fixtureHtml } from "./fixtures.ts";

let site: FixtureServer;
let shop: PaidShop;

beforeAll(async () => {
  site = await startFixtureServer({
    routes: {
      "/article": html(fixtureHtml("article")),
      "/images": html(fixtureHtml("images")),
      "/head": html(fixtureHtml("head")),
      "/wcag": html(fixtureHtml("wcag")),
      "/gone": html("<html><head><title>Gone</title></head><body><h1>Not found</h1></body></html>", 404),
      "/data.json": text('{"a": 1}', { contentType: "application/json" }),
    },
  });
  shop = await startPaidShop(pageEndpoints({ fetchPolicy: { allowAddresses: ["127.0.0.1"] } }));
});
afterAll(async () => {
  await shop?.close();
  await site?.close();
});

const buyer = () => shop.buyer();
const buyerFetch = () => shop.buyerFetch();
const page = (path: string) => encodeURIComponent(`${site.url}${path}`);

describe("pages endpoints, paid", () => {
  it.each([
    ["/api/scrape?url=ARTICLE", 1000n, { title: "What lives in a tide pool", word_count: 303 }],
    ["/api/seo/metadata?url=HEAD", 1000n, { lang: "fr", counts: { meta: 19, json_ld_invalid: 1 } }],
    ["/api/seo/alt-check?url=IMAGES", 1000n, { images_total: 19, missing_alt: 1, empty_alt_decorative: 2 }],
    ["/api/summarize?url=ARTICLE&sentences=3", 2000n, { method: "textrank", sentence_count: 14 }],
    ["/api/a11y/check?url=WCAG&level=A", 10000n, { level: "A", counts: { total: 16 } }],
  ])("sells %s", async (template, price, expected) => {
    const path = template
      .replace("ARTICLE", page("article"))
      .replace("HEAD", page("head"))
      .replace("IMAGES", page("images"))
      .replace("WCAG", page("wcag"));
    const usdc = usdcReader(shop.devnet.rpc);
    const before = await usdc.balanceOf(buyer().address);
    const merchantBefore = await usdc.balanceOf(shop.payTo);
    const response = await buyerFetch()(`${shop.url}${path}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject(expected);
    expect(response.headers.get("PAYMENT-RESPONSE")).toBeTruthy();
    expect(await usdc.balanceOf(buyer().address)).toBe(before - price);
    expect(await usdc.balanceOf(shop.payTo)).toBe(merchantBefore + price);
  });

  it("charges nothing for bad inputs, even through the paying fetch", async () => {
    const usdc = usdcReader(shop.devnet.rpc);
    const before = await usdc.balanceOf(buyer().address);
    for (const path of [
      "/api/scrape",
      "/api/scrape?url=not-a-url",
      "/api/seo/metadata?url=ftp%3A%2F%2Fexample.com%2F",
      `/api/summarize?url=${page("article")}&sentences=11`,
      `/api/a11y/check?url=${page("wcag")}&level=B`,
    ]) {
      expect((await fetch(`${shop.url}${path}`)).status, path).toBe(400);
      const response = await buyerFetch()(`${shop.url}${path}`);
      expect(response.status, path).toBe(400);
    }
    expect(await shop.pending()).toBe(0);
    expect(await usdc.balanceOf(buyer().address)).toBe(before);
  });

  it("charges nothing when the page is an error page or not HTML", async () => {
    const usdc = usdcReader(shop.devnet.rpc);
    const before = await usdc.balanceOf(buyer().address);
    for (const [path, code] of [
      [`/api/scrape?url=${page("gone")}`, "page_status"],
      [`/api/seo/alt-check?url=${page("data.json")}`, "not_html"],
      [`/api/summarize?url=${page("nowhere")}`, "page_status"],
    ] as const) {
      // A valid input is asked to pay first; the failure comes after verification and is not settled.
      expect((await fetch(`${shop.url}${path}`)).status, path).toBe(402);
      const response = await buyerFetch()(`${shop.url}${path}`);
      expect(response.status, path).toBe(422);
      expect(((await response.json()) as { error: { code: string } }).error.code, path).toBe(code);
      expect(response.headers.get("PAYMENT-RESPONSE"), path).toBeNull();
    }
    expect(await shop.pending()).toBe(0);
    expect(await usdc.balanceOf(buyer().address)).toBe(before);
  });
});
