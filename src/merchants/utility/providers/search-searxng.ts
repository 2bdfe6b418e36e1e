/**
 * SearXNG adapter: `GET {url}/search?q=...&format=json&categories=general|news` (the instance must allow
 * the JSON format in `search.formats`). Results carry `title`, `url`, `content` and an engine-weighted
 * `score` with no fixed range, so scores are divided by the best one; `answers` (strings, or objects with
 * `answer` in recent versions) become the backend answer.
 */
import { z } from "zod";
import { UpstreamError } from "../../../common/errors.ts";
import { upstreamJson } from "../../../merchant-kit/index.ts";
import { clampScore, plainText, type SearchBackend, type SearchSettings } from "./search-backend.ts";

const Body = z.object({
  results: z.array(
    z.looseObject({
      title: z.string().default(""),
      url: z.string(),
      content: z.string().nullish(),
      score: z.number().nullish(),
    }),
  ),
  answers: z.array(z.union([z.string(), z.looseObject({ answer: z.string() })])).default([]),
});

export function searxngBackend(settings: SearchSettings): SearchBackend {
  const provider = "search backend (searxng)";
  return {
    name: "searxng",
    async search(q, signal) {
      const url = new URL(`${settings.url.replace(/\/+$/, "")}/search`);
      url.searchParams.set("q", q.query);
      url.searchParams.set("format", "json");
      url.searchParams.set("categories", q.topic);
      const parsed = Body.safeParse(
        await upstreamJson({ provider, url: url.href, timeoutMs: settings.timeoutMs, signal }),
      );
      if (!parsed.success)
        throw new UpstreamError(`the ${provider} answered an unexpected body`, "upstream_invalid");
      const hits = parsed.data.results.slice(0, q.maxResults);
      const best = Math.max(0, ...hits.map((h) => h.score ?? 0));
      const answer = parsed.data.answers
        .map((a) => (typeof a === "string" ? a : a.answer))
        .find((a) => a.trim());
      return {
        results: hits.map((h, i) => ({
          title: plainText(h.title),
          url: h.url,
          content: plainText(h.content ?? ""),
          score: clampScore(best > 0 ? (h.score ?? 0) / best : 1 - i / hits.length),
        })),
        ...(answer && { answer: plainText(answer) }),
      };
    },
  };
}
