/**
 * Brave Search API adapter: `GET {url}/res/v1/web/search` (results in `web.results`) or
 * `/res/v1/news/search` (results in `results`), `q` and `count`, with the `X-Subscription-Token` header.
 * Descriptions hold `<strong>` highlights, removed here. Brave gives no relevance score, only an order, so
 * the score falls by rank: 1, 0.9, 0.8...
 */
import { z } from "zod";
import { UpstreamError } from "../../../common/errors.ts";
import { upstreamJson } from "../../../merchant-kit/index.ts";
import { clampScore, plainText, type SearchBackend, type SearchSettings } from "./search-backend.ts";

const Result = z.looseObject({
  title: z.string().default(""),
  url: z.string(),
  description: z.string().nullish(),
});
const WebBody = z.object({ web: z.object({ results: z.array(Result) }).optional() });
const NewsBody = z.object({ results: z.array(Result) });

export function braveBackend(settings: SearchSettings): SearchBackend {
  const provider = "search backend (brave)";
  return {
    name: "brave",
    async search(q, signal) {
      const kind = q.topic === "news" ? "news" : "web";
      const url = new URL(`${settings.url.replace(/\/+$/, "")}/res/v1/${kind}/search`);
      url.searchParams.set("q", q.query);
      url.searchParams.set("count", String(q.maxResults));
      const body = await upstreamJson({
        provider,
        url: url.href,
        headers: { "x-subscription-token": settings.key ?? "" },
        timeoutMs: settings.timeoutMs,
        signal,
      });
      const parsed = kind === "news" ? NewsBody.safeParse(body) : WebBody.safeParse(body);
      if (!parsed.success)
        throw new UpstreamError(`the ${provider} answered an unexpected body`, "upstream_invalid");
      const results =
        ("web" in parsed.data
          ? parsed.data.web?.results
          : (parsed.data as z.output<typeof NewsBody>).results) ?? [];
      return {
        results: results.slice(0, q.maxResults).map((r, i) => ({
          title: plainText(r.title),
          url: r.url,
          content: plainText(r.description ?? ""),
          score: clampScore(1 - i / 10),
        })),
      };
    },
  };
}
