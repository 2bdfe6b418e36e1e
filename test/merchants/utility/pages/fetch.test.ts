/**
 * The pages endpoints' fetch path, through the real safe fetch to a fixture server on 127.0.0.1 (opened
 * by the policy's allow-list only): redirects followed, error pages and non-HTML refused with a 4xx
 * (never charged), and the production default refusing loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AnyEndpoint, HandlerContext } from "../../../../src/merchant-kit/endpoint.ts";
import type { A11yReport } from "../../../../src/merchants/utility/pages/a11y-report.ts";
import { PAGE_ENDPOINTS, pageEndpoints } from "../../../../src/merchants/utility/pages/index.ts";
import { loadPage } from "../../../../src/merchants/utility/pages/page.ts";
import {
  type FixtureServer,
  html,
  huge,
  redirect,
  startFixtureServer,
  text,
} from "../../../helpers/fixtures/index.ts";
import { shopPage } from "./a11y-corpus.ts";
import { fixtureHtml } from "./fixtures.ts";

const policy = { allowAddresses: ["127.0.0.1"] };
let server: FixtureServer;

beforeAll(async () => {
  server = await startFixtureServer({
    routes: {
      "/article": html(fixtureHtml("article")),
      "/images": html(fixtureHtml("images")),
      "/head": html(fixtureHtml("head")),
      "/wcag": html(fixtureHtml("wcag")),
      "/old-article": redirect("/article", 301),
      "/gone": html(
        "<html><head><title>Not found</title></head><body><h1>Page not found</h1></body></html>",
        404,
      ),
      "/data.json": text('{"a": 1}', { contentType: "application/json" }),
      "/xhtml": text(fixtureHtml("head"), { contentType: "application/xhtml+xml; charset=utf-8" }),
      "/no-type": (_req, res) =>
        void res.end("<!DOCTYPE html><html><head><title>Untyped</title></head></html>"),
      "/big": huge(4 * 1024 * 1024),
      // A French page in windows-1252, labelled only in its <meta>, as old sites are.
      "/latin": (_req, res) =>
        void res
          .writeHead(200, { "content-type": "text/html" })
          .end(
            Buffer.from(
              '<!DOCTYPE html><html lang="fr"><head><meta charset="windows-1252"><title>Café</title></head>' +
                '<body><main><h1>Crème brûlée</h1><img src="/brûlée.jpg"></main></body></html>',
              "latin1",
            ),
          ),
      "/shop-3k": html(shopPage(50)),
      "/shop-11k": html(shopPage(450)),
    },
  });
});
afterAll(async () => server?.close());

/**
 * The file's endpoints, one set as one host has them: each starts its reader's process on its first call and
 * keeps it for the next (a start costs 1-2.5 s of CPU), where a set per call started one per call.
 */
const ENDPOINTS = pageEndpoints({ fetchPolicy: policy });

const ctx = () => ({ signal: new AbortController().signal }) as HandlerContext;
const byPath = (endpoints: readonly AnyEndpoint[], path: string) => {
  const endpoint = endpoints.find((e) => e.path === path);
  if (!endpoint) throw new Error(`no ${path}`);
  return endpoint;
};
const call = (path: string, query: Record<string, string>, endpoints = ENDPOINTS) => {
  const endpoint = byPath(endpoints, path);
  return endpoint.handler(endpoint.input.parse(query), ctx());
};

describe("loadPage", () => {
  it("follows a redirect and reports the final URL", async () => {
    const page = await loadPage(`${server.url}old-article`, policy);
    expect(page.url).toBe(`${server.url}article`);
    expect(page.status).toBe(200);
    expect(page.headerCharset).toBe("utf-8");
    expect(page.document.title).toBe("What lives in a tide pool | Shore Notes");
  });

  it("refuses an error page with a 422 page_status", async () => {
    await expect(loadPage(`${server.url}gone`, policy)).rejects.toMatchObject({
      status: 422,
      code: "page_status",
    });
    await expect(loadPage(`${server.url}nowhere`, policy)).rejects.toMatchObject({
      status: 422,
      code: "page_status",
    });
  });

  it("refuses what is not HTML, accepts XHTML and untyped HTML", async () => {
    await expect(loadPage(`${server.url}data.json`, policy)).rejects.toMatchObject({
      status: 422,
      code: "not_html",
    });
    expect((await loadPage(`${server.url}xhtml`, policy)).document.title).toContain("soupe de poisson");
    expect((await loadPage(`${server.url}no-type`, policy)).document.title).toBe("Untyped");
  });

  it("caps the page size", async () => {
    await expect(loadPage(`${server.url}big`, policy)).rejects.toMatchObject({
      status: 422,
      code: "too_large",
    });
  });

  it("refuses loopback without the allow-list (the production default)", async () => {
    const before = server.requests.length;
    await expect(call("/api/scrape", { url: `${server.url}article` }, PAGE_ENDPOINTS)).rejects.toMatchObject({
      status: 400,
      code: "ssrf_blocked",
    });
    expect(server.requests.length).toBe(before);
  });
});

describe("the five endpoints over HTTP", () => {
  it("scrape", async () => {
    const result = await call("/api/scrape", { url: `${server.url}old-article` });
    expect(result).toMatchObject({
      url: `${server.url}article`,
      title: "What lives in a tide pool",
      word_count: 303,
    });
  });

  it("seo/metadata resolves links against the served URL", async () => {
    const result = await call("/api/seo/metadata", { url: `${server.url}head` });
    expect(result).toMatchObject({
      canonical: `${server.url}recettes/soupe-de-poisson`,
      counts: { meta: 19, links: 5, json_ld: 2, json_ld_invalid: 1 },
    });
  });

  it("seo/alt-check", async () => {
    expect(await call("/api/seo/alt-check", { url: `${server.url}images` })).toMatchObject({
      images_total: 19,
      missing_alt: 1,
      empty_alt_decorative: 2,
    });
  });

  it("summarize, with its sentences option", async () => {
    const result = await call("/api/summarize", { url: `${server.url}article`, sentences: "2" });
    expect(result).toMatchObject({ method: "textrank", key_sentences: expect.any(Array) });
    expect((result as { key_sentences: string[] }).key_sentences).toHaveLength(2);
  });

  it("a11y/check, AA by default", async () => {
    expect(await call("/api/a11y/check", { url: `${server.url}wcag` })).toMatchObject({
      level: "AA",
      engine: { name: "axe-core", version: "4.14.1" },
      counts: { total: 33, rules: 17, by_level: { A: 11, AA: 3, AAA: 0, best_practice: 19 } },
    });
  });

  it("validates inputs before any fetch", () => {
    const input = (path: string) => byPath(ENDPOINTS, path).input;
    expect(input("/api/scrape").safeParse({}).success).toBe(false);
    expect(input("/api/scrape").safeParse({ url: "not a url" }).success).toBe(false);
    expect(input("/api/scrape").safeParse({ url: "ftp://example.com/x" }).success).toBe(false);
    expect(input("/api/summarize").safeParse({ url: "https://example.com/", sentences: "0" }).success).toBe(
      false,
    );
    expect(input("/api/summarize").safeParse({ url: "https://example.com/", sentences: "11" }).success).toBe(
      false,
    );
    expect(input("/api/summarize").parse({ url: "https://example.com/" })).toMatchObject({ sentences: 5 });
    expect(input("/api/a11y/check").safeParse({ url: "https://example.com/", level: "AAAA" }).success).toBe(
      false,
    );
  });
});

describe("a11y/check's bounds", () => {
  it("reads a page in a legacy charset as a browser does", async () => {
    const report = (await call("/api/a11y/check", { url: `${server.url}latin` })) as A11yReport;
    expect(report.findings.map((f) => f.rule)).toEqual(["image-alt"]);
    expect(report.findings[0]?.nodes[0]).toMatchObject({
      selector: "img",
      snippet: '<img src="/brûlée.jpg">',
    });
  });

  it("refuses a page past the size cap or the element cap before auditing it", async () => {
    await expect(call("/api/a11y/check", { url: `${server.url}big` })).rejects.toMatchObject({
      status: 422,
      code: "too_large",
    });
    const started = performance.now();
    await expect(call("/api/a11y/check", { url: `${server.url}shop-11k` })).rejects.toMatchObject({
      status: 422,
      code: "too_complex",
      message: expect.stringMatching(
        /^the page has about 1\d{4} elements; the audit takes pages of up to 5000$/,
      ),
    });
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it("audits off the event loop, and stops when the caller's budget runs out", async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    const controller = new AbortController();
    const started = performance.now();
    const a11y = byPath(pageEndpoints({ fetchPolicy: policy }), "/api/a11y/check");
    const audit = a11y.handler(a11y.input.parse({ url: `${server.url}shop-3k` }), {
      signal: controller.signal,
    } as HandlerContext);
    setTimeout(() => controller.abort(new Error("no answer within the budget")), 600);
    await expect(audit).rejects.toThrow("no answer within the budget");
    clearInterval(timer);
    // The timers kept running while the page was being audited: ~60 ticks in 600 ms (fewer on a busy
    // host), where an audit on this thread would have let through none.
    expect(ticks).toBeGreaterThan(10);
    expect(performance.now() - started).toBeLessThan(3_000);
    // The endpoint audits the next page, in a fresh process.
    expect(await call("/api/a11y/check", { url: `${server.url}wcag`, level: "A" }, [a11y])).toMatchObject({
      counts: { rules: 14 },
    });
  }, 60_000);
});
