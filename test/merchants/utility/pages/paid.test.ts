/**
 * The pages endpoints sold through the real x402 flow on a devnet: one paid happy path each, against
 * saved pages served on 127.0.0.1 (opened by the fetch policy's allow-list), and failures that charge
 * nothing: bad inputs (400 before any 402), a 404 page and a non-HTML answer (422 after payment
 * verification, never settled), an audit past its time budget (504); and concurrent buyers of the audit.
 */
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pageEndpoints } from "../../../../src/merchants/utility/pages/index.ts";
import { walletHolding } from "../../../helpers/chain.ts";
import { type FixtureServer, html, startFixtureServer, text } from "../../../helpers/fixtures/index.ts";
import { type PaidShop, startPaidShop } from "../../../helpers/paid.ts";
import { NETWORK, pay, usdcReader } from "../../../helpers/x402.ts";
import { shopPage } from "./a11y-corpus.ts";
import { fixtureHtml } from "./fixtures.ts";

let site: FixtureServer;
let shop: PaidShop;

const SMALL_PAGE =
  '<html lang="en"><head><title>Small</title></head><body><main><h1>Hi</h1></main></body></html>';
/**
 * `/small-held` is served once `releaseHeld` is called: the audit that fetches it is kept running until the test
 * has seen what it waits for, however slow the machine, rather than for as long as an audit happens to take.
 */
let releaseHeld: () => void = () => undefined;
const held = new Promise<void>((resolve) => {
  releaseHeld = resolve;
});

beforeAll(async () => {
  site = await startFixtureServer({
    routes: {
      "/article": html(fixtureHtml("article")),
      "/images": html(fixtureHtml("images")),
      "/head": html(fixtureHtml("head")),
      "/wcag": html(fixtureHtml("wcag")),
      "/gone": html("<html><head><title>Gone</title></head><body><h1>Not found</h1></body></html>", 404),
      "/data.json": text('{"a": 1}', { contentType: "application/json" }),
      "/small": html(SMALL_PAGE),
      "/small-held": (request, res, req) => {
        void held.then(() => html(SMALL_PAGE)(request, res, req));
      },
      "/shop-3k": html(shopPage(50)),
    },
  });
  const endpoints = pageEndpoints({ fetchPolicy: { allowAddresses: ["127.0.0.1"] } });
  const a11y = endpoints.find((e) => e.path === "/api/a11y/check");
  if (!a11y) throw new Error("no /api/a11y/check");
  // The audit with a budget a 3,000-element page cannot fit in.
  shop = await startPaidShop([...endpoints, { ...a11y, path: "/api/a11y/check-300ms", timeoutMs: 300 }]);
});
afterAll(async () => {
  releaseHeld();
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
    [
      "/api/a11y/check?url=WCAG&level=A",
      10000n,
      { level: "A", engine: { name: "axe-core" }, counts: { rules: 14 } },
    ],
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

describe("concurrent buyers of /api/a11y/check", () => {
  const url = () => `${shop.url}/api/a11y/check?url=${page("small")}`;

  it("audits once and charges once for the same payment sent three times at once", async () => {
    const usdc = usdcReader(shop.devnet.rpc);
    const before = await usdc.balanceOf(buyer().address);
    const heldUrl = `${shop.url}/api/a11y/check?url=${page("small-held")}`;
    const required = decodePaymentRequiredHeader(
      (await fetch(heldUrl)).headers.get("PAYMENT-REQUIRED") ?? "",
    );
    const [requirements] = required.accepts;
    if (!requirements) throw new Error("no requirements");
    const header = encodePaymentSignatureHeader(
      await pay(buyer(), requirements, required.resource, required.extensions),
    );
    // The audit that runs is held (its page is) until the two other copies are answered: each meets the ledger's
    // row while it is taken (409). Timed by the audit alone, a copy verified after the first one had settled at
    // load 3-4 in a clean clone, and the facilitator, not the ledger, refused it (402).
    let answered = 0;
    let othersAnswered: () => void = () => undefined;
    const two = new Promise<void>((resolve) => {
      othersAnswered = resolve;
    });
    const pending = Array.from({ length: 3 }, () =>
      fetch(heldUrl, { headers: { "PAYMENT-SIGNATURE": header } }).then((response) => {
        if (++answered === 2) othersAnswered();
        return response;
      }),
    );
    await two;
    releaseHeld();
    const responses = await Promise.all(pending);
    expect(responses.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    await shop.pending();
    expect(await usdc.balanceOf(buyer().address)).toBe(before - 10_000n);
  });

  it("charges a wallet that can pay one audit once, when it sends three at once", async () => {
    const wallet = await walletHolding(shop.devnet, 10_000n);
    const payFetch = wrapFetchWithPayment(
      fetch,
      new x402Client().register(NETWORK, new ExactEvmClient(privateKeyToAccount(wallet.privateKey))),
    );
    const usdc = usdcReader(shop.devnet.rpc);
    const merchantBefore = await usdc.balanceOf(shop.payTo);
    const responses = await Promise.all(Array.from({ length: 3 }, () => payFetch(url())));
    await shop.pending();
    expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
    expect(await usdc.balanceOf(shop.payTo)).toBe(merchantBefore + 10_000n);
    expect(await usdc.balanceOf(wallet.address)).toBe(0n);
  });
});

describe("an audit past its time budget", () => {
  // Last in the file only because it stops the audit thread, which the next audit would have to restart.
  it("charges nothing for an audit past its time budget (504)", async () => {
    const usdc = usdcReader(shop.devnet.rpc);
    const before = await usdc.balanceOf(buyer().address);
    const response = await buyerFetch()(`${shop.url}/api/a11y/check-300ms?url=${page("shop-3k")}`);
    expect(response.status).toBe(504);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("timeout");
    expect(response.headers.get("PAYMENT-RESPONSE")).toBeNull();
    expect(await shop.pending()).toBe(0);
    expect(await usdc.balanceOf(buyer().address)).toBe(before);
  });
});
