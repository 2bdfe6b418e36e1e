/**
 * Fake search backends on 127.0.0.1 speaking the real formats:
 * - SearXNG `GET /search?q&format=json&categories` → `{query, number_of_results, results: [{url, title,
 *   content, engine, score, category}], answers, suggestions, infoboxes}` (403 without `format=json`
 *   allowed, as a default instance does);
 * - Brave `GET /res/v1/web/search` → `{type: "search", query, web: {type, results: [{title, url,
 *   description}]}}` and `/res/v1/news/search` → `{type: "news", results: [...]}`, 401-like 422 without a
 *   valid `X-Subscription-Token`;
 * - Tavily `POST /search` → `{query, answer, results: [{title, url, content, score, raw_content}],
 *   response_time}`, 401 without `Authorization: Bearer <key>`.
 */
import { type FixtureServer, startFixtureServer } from "../fixtures/index.ts";
import { bodyOf, sendJson } from "./json.ts";

export interface FakeSearch extends FixtureServer {
  base: string;
  fail: number | null;
}

export const SEARCH_DOCS = [
  {
    title: "x402 - <strong>payment</strong> protocol",
    url: "https://www.x402.org/",
    content:
      "The x402 protocol lets APIs charge per request. Payments settle in USDC on Base within seconds.",
  },
  {
    title: "coinbase/x402",
    url: "https://github.com/coinbase/x402",
    content: "A payments protocol for the internet, built on HTTP status code 402 Payment Required.",
  },
  {
    title: "HTTP 402 &amp; the web",
    url: "https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/402",
    content: "The HTTP 402 Payment Required status code is reserved for future use.",
  },
];

async function start(): Promise<FakeSearch> {
  const server = (await startFixtureServer()) as FakeSearch;
  server.base = server.url.replace(/\/$/, "");
  server.fail = null;
  return server;
}

export async function startSearxng(): Promise<FakeSearch> {
  const server = await start();
  server.route("/search", (request, res) => {
    const q = new URL(request.url, "http://x").searchParams;
    if (server.fail) return sendJson(res, server.fail, { error: "failed" });
    if (q.get("format") !== "json") return void res.writeHead(403).end("Forbidden");
    sendJson(res, 200, {
      query: q.get("q"),
      number_of_results: 0,
      results: SEARCH_DOCS.map((d, i) => ({
        ...d,
        engine: "duckduckgo",
        engines: ["duckduckgo", "brave"],
        positions: [i + 1],
        score: 4 / (i + 1),
        category: q.get("categories") ?? "general",
        ...(q.get("categories") === "news" && { publishedDate: "2026-11-20T10:00:00" }),
      })),
      answers: [],
      corrections: [],
      infoboxes: [],
      suggestions: ["x402 payments"],
      unresponsive_engines: [],
    });
  });
  return server;
}

export async function startBrave(token: string): Promise<FakeSearch> {
  const server = await start();
  const results = (news: boolean) =>
    SEARCH_DOCS.map((d) => ({
      type: news ? "news_result" : "search_result",
      title: d.title,
      url: d.url,
      description: d.content.replace("402", "<strong>402</strong>"),
      language: "en",
      ...(news && { age: "1 day ago" }),
    }));
  const guard = (token_: unknown) => token_ === token;
  server.route("/res/v1/web/search", (request, res) => {
    if (server.fail)
      return sendJson(res, server.fail, { type: "ErrorResponse", error: { status: server.fail } });
    if (!guard(request.headers["x-subscription-token"]))
      return sendJson(res, 422, {
        type: "ErrorResponse",
        error: { code: "SUBSCRIPTION_TOKEN_INVALID", status: 422 },
      });
    const q = new URL(request.url, "http://x").searchParams;
    const count = Number(q.get("count") ?? 20);
    sendJson(res, 200, {
      type: "search",
      query: { original: q.get("q") },
      web: { type: "search", results: results(false).slice(0, count) },
    });
  });
  server.route("/res/v1/news/search", (request, res) => {
    if (!guard(request.headers["x-subscription-token"]))
      return sendJson(res, 422, {
        type: "ErrorResponse",
        error: { code: "SUBSCRIPTION_TOKEN_INVALID", status: 422 },
      });
    const q = new URL(request.url, "http://x").searchParams;
    sendJson(res, 200, {
      type: "news",
      query: { original: q.get("q") },
      results: results(true).slice(0, Number(q.get("count") ?? 20)),
    });
  });
  return server;
}

export async function startTavily(key: string): Promise<FakeSearch> {
  const server = await start();
  server.route("/search", (request, res) => {
    if (server.fail) return sendJson(res, server.fail, { detail: { error: "Internal error" } });
    if (request.headers.authorization !== `Bearer ${key}`)
      return sendJson(res, 401, { detail: { error: "Unauthorized: missing or invalid API key." } });
    const body = bodyOf(request);
    sendJson(res, 200, {
      query: body.query,
      follow_up_questions: null,
      answer: body.include_answer ? "x402 lets APIs charge per request in USDC." : null,
      images: [],
      results: SEARCH_DOCS.slice(0, body.max_results ?? 5).map((d, i) => ({
        ...d,
        score: 0.9 - i * 0.2,
        raw_content: null,
      })),
      response_time: 1.2,
    });
  });
  return server;
}
