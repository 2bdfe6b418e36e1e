/**
 * `/api/search` against fake SearXNG, Brave and Tavily servers on 127.0.0.1: the request each adapter
 * sends, results normalised to `{title, url, content, score}`, and the three ways the answer is made.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Streamed } from "../../../../src/merchant-kit/payments/streamed.ts";
import { languageProvider, searchBackend } from "../../../../src/merchants/utility/providers/index.ts";
import { searchEndpoint } from "../../../../src/merchants/utility/providers/search.ts";
import { extractiveAnswer } from "../../../../src/merchants/utility/providers/search-answer.ts";
import { type FakeUpstream, startAnthropicUpstream } from "../../../helpers/upstreams/anthropic.ts";
import { bodyOf } from "../../../helpers/upstreams/json.ts";
import { type FakeSearch, startBrave, startSearxng, startTavily } from "../../../helpers/upstreams/search.ts";
import { handlerContext } from "./context.ts";

let searxng: FakeSearch;
let brave: FakeSearch;
let tavily: FakeSearch;
let llm: FakeUpstream;
beforeAll(async () => {
  [searxng, brave, tavily, llm] = await Promise.all([
    startSearxng(),
    startBrave("brave-token"),
    startTavily("tvly-key"),
    startAnthropicUpstream("sk-ant"),
  ]);
});
afterAll(async () => {
  for (const s of [searxng, brave, tavily, llm]) await s?.close();
});

const backends = () => ({
  searxng: searchBackend({ backend: "searxng", url: searxng.base }),
  brave: searchBackend({ backend: "brave", url: brave.base, key: "brave-token" }),
  tavily: searchBackend({ backend: "tavily", url: tavily.base, key: "tvly-key" }),
});
const language = () =>
  languageProvider({ dialect: "anthropic", url: llm.base, key: "sk-ant", model: "claude-test-1" });

const search = (backend: keyof ReturnType<typeof backends>, input: object, withModel = false) =>
  searchEndpoint(backends()[backend], withModel ? language() : undefined)
    .handler({ query: "x402 payment", max_results: 5, topic: "general", ...input }, handlerContext())
    .then((answer) => answer as Exclude<typeof answer, Response | Streamed>);

describe("search backends", () => {
  it("SearXNG: GET /search with format=json and the category, scores relative to the best", async () => {
    const answer = await search("searxng", { topic: "news", max_results: 2 });
    const url = new URL(searxng.requests.at(-1)?.url as string, "http://x");
    expect(url.pathname).toBe("/search");
    expect(Object.fromEntries(url.searchParams)).toEqual({
      q: "x402 payment",
      format: "json",
      categories: "news",
    });
    expect(answer).toMatchObject({ backend: "searxng", answer_method: "extractive" });
    expect(answer.results).toEqual([
      {
        title: "x402 - payment protocol",
        url: "https://www.x402.org/",
        content:
          "The x402 protocol lets APIs charge per request. Payments settle in USDC on Base within seconds.",
        score: 1,
      },
      {
        title: "coinbase/x402",
        url: "https://github.com/coinbase/x402",
        content: "A payments protocol for the internet, built on HTTP status code 402 Payment Required.",
        score: 0.5,
      },
    ]);
  });

  it("Brave: web and news endpoints with X-Subscription-Token and count, highlights removed", async () => {
    const web = await search("brave", { max_results: 3 });
    let sent = brave.requests.at(-1);
    expect(sent?.headers["x-subscription-token"]).toBe("brave-token");
    expect(sent?.url).toBe("/res/v1/web/search?q=x402+payment&count=3");
    expect(web.results.map((r) => r.score)).toEqual([1, 0.9, 0.8]);
    expect(web.results[1]?.content).toBe(
      "A payments protocol for the internet, built on HTTP status code 402 Payment Required.",
    );
    expect(web.results[2]?.title).toBe("HTTP 402 & the web");
    const news = await search("brave", { topic: "news", max_results: 1 });
    sent = brave.requests.at(-1);
    expect(sent?.url).toBe("/res/v1/news/search?q=x402+payment&count=1");
    expect(news.results).toHaveLength(1);
  });

  it("Tavily: POST /search with a Bearer key; its own answer when no model is configured", async () => {
    const answer = await search("tavily", { topic: "news", max_results: 2 });
    const sent = tavily.requests.at(-1);
    expect(sent?.headers.authorization).toBe("Bearer tvly-key");
    expect(bodyOf(sent as never)).toEqual({
      query: "x402 payment",
      topic: "news",
      max_results: 2,
      include_answer: true,
    });
    expect(answer).toMatchObject({
      answer: "x402 lets APIs charge per request in USDC.",
      answer_method: "backend",
      results: [{ score: 0.9 }, { score: 0.7 }],
    });
  });

  it("a backend failure is a 502; a wrong key too", async () => {
    searxng.fail = 500;
    await expect(search("searxng", {})).rejects.toMatchObject({ status: 502 });
    searxng.fail = null;
    const wrong = searchBackend({ backend: "brave", url: brave.base, key: "wrong" });
    await expect(
      searchEndpoint(wrong, undefined).handler(
        { query: "q", max_results: 1, topic: "general" },
        handlerContext(),
      ),
    ).rejects.toMatchObject({ status: 502, message: expect.stringMatching(/HTTP 422/) });
  });

  it("answers 503 provider_not_configured without a backend", async () => {
    await expect(
      searchEndpoint(undefined, undefined).handler(
        { query: "q", max_results: 1, topic: "general" },
        handlerContext(),
      ),
    ).rejects.toMatchObject({ status: 503, code: "provider_not_configured" });
  });
});

describe("the answer", () => {
  it("is written by the language model from the numbered results when one is configured", async () => {
    llm.behaviour = { kind: "reply", text: () => "x402 charges per request [1]." };
    const answer = await search("brave", {}, true);
    expect(answer).toMatchObject({ answer: "x402 charges per request [1].", answer_method: "model" });
    const prompt = bodyOf(llm.requests.at(-1) as never).messages[0].content as string;
    expect(prompt).toContain("Query: x402 payment");
    expect(prompt).toContain("[1] x402 - payment protocol\nhttps://www.x402.org/");
    // Tavily is not asked for its own answer when the model writes one.
    await search("tavily", {}, true);
    expect(bodyOf(tavily.requests.at(-1) as never).include_answer).toBe(false);
  });

  it("falls back to the extractive answer when the model fails", async () => {
    llm.behaviour = { kind: "status", status: 500 };
    const answer = await search("searxng", {}, true);
    expect(answer.answer_method).toBe("extractive");
    expect(answer.answer).toContain("x402 protocol lets APIs charge per request.");
  });

  it("extracts the sentences sharing the most words with the query", () => {
    const results = [
      {
        title: "a",
        url: "u",
        content: "Unrelated opening words here. Payment protocols matter for HTTP status 402 today.",
        score: 1,
      },
      {
        title: "b",
        url: "u",
        content: "The status code 402 means payment required by the HTTP protocol.",
        score: 0.5,
      },
    ];
    expect(extractiveAnswer("HTTP 402 status payment", results)).toBe(
      "Payment protocols matter for HTTP status 402 today. The status code 402 means payment required by the HTTP protocol.",
    );
    expect(extractiveAnswer("q", [])).toBeNull();
  });
});
