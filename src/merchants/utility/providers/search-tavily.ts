/**
 * Tavily adapter: `POST {url}/search` with `Authorization: Bearer <key>` and `{query, topic, max_results,
 * include_answer}`. Results carry `title`, `url`, `content` and a 0-1 `score`, used as they are; `answer`
 * (asked for only when no language model is configured) becomes the backend answer.
 */
import { z } from "zod";
import { UpstreamError } from "../../../common/errors.ts";
import { upstreamJson } from "../../../merchant-kit/index.ts";
import { clampScore, plainText, type SearchBackend, type SearchSettings } from "./search-backend.ts";

const Body = z.object({
  answer: z.string().nullish(),
  results: z.array(
    z.looseObject({
      title: z.string().default(""),
      url: z.string(),
      content: z.string().nullish(),
      score: z.number().nullish(),
    }),
  ),
});

export function tavilyBackend(settings: SearchSettings): SearchBackend {
  const provider = "search backend (tavily)";
  return {
    name: "tavily",
    async search(q, signal) {
      const body = await upstreamJson({
        provider,
        url: `${settings.url.replace(/\/+$/, "")}/search`,
        headers: { authorization: `Bearer ${settings.key ?? ""}` },
        json: { query: q.query, topic: q.topic, max_results: q.maxResults, include_answer: q.includeAnswer },
        timeoutMs: settings.timeoutMs,
        signal,
      });
      const parsed = Body.safeParse(body);
      if (!parsed.success)
        throw new UpstreamError(`the ${provider} answered an unexpected body`, "upstream_invalid");
      return {
        results: parsed.data.results.slice(0, q.maxResults).map((r) => ({
          title: plainText(r.title),
          url: r.url,
          content: plainText(r.content ?? ""),
          score: clampScore(r.score ?? 0),
        })),
        ...(parsed.data.answer?.trim() && { answer: parsed.data.answer.trim() }),
      };
    },
  };
}
