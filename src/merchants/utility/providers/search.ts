/** `POST /api/search`: live web or news results from the configured backend, plus a direct answer. */
import { z } from "zod";
import type { LanguageProvider } from "../../../merchant-kit/index.ts";
import { defineEndpoint, notConfigured, providerErrors } from "../../../merchant-kit/index.ts";
import { PRICES } from "../prices.ts";
import { answerFrom } from "./search-answer.ts";
import type { SearchBackend } from "./search-backend.ts";

const SearchInput = z.object({
  query: z.string().trim().min(1).max(400).describe("What to search for (at most 400 characters)."),
  max_results: z.number().int().min(1).max(10).default(5).describe("Number of results, 1 to 10 (default 5)."),
  topic: z.enum(["general", "news"]).default("general").describe("`general` web search or recent `news`."),
});

const SearchOutput = z.object({
  query: z.string(),
  answer: z
    .string()
    .nullable()
    .describe("A direct answer drawn from these results (null when they hold no text); see `answer_method`."),
  answer_method: z
    .enum(["model", "backend", "extractive"])
    .describe(
      "`model`: written by the language model from the results, citing [n]; `backend`: the search backend's own answer; `extractive`: the snippet sentences closest to the query, quoted.",
    ),
  results: z.array(
    z.object({
      title: z.string(),
      url: z.string(),
      content: z.string().describe("Snippet, plain text."),
      score: z.number().describe("Relevance from 0 to 1."),
    }),
  ),
  backend: z.enum(["searxng", "brave", "tavily"]),
});

export const SEARCH_SETTINGS = "X402M_SEARCH_BACKEND, X402M_SEARCH_URL, X402M_SEARCH_KEY";

export function searchEndpoint(search: SearchBackend | undefined, language: LanguageProvider | undefined) {
  return defineEndpoint({
    method: "POST",
    path: "/api/search",
    price: PRICES["/api/search"],
    effects: ["upstream"],
    description:
      "Live web search: results with title, url, content snippet and relevance score, plus a direct answer drawn from them. Options: max_results (1-10, default 5), topic (general or news).",
    input: SearchInput,
    output: SearchOutput,
    example: {
      input: { query: "x402 payment protocol", max_results: 2, topic: "general" },
      output: {
        query: "x402 payment protocol",
        answer:
          "x402 is an open payment standard that uses the HTTP 402 status code for internet-native payments [1].",
        answer_method: "model",
        results: [
          {
            title: "x402 - An open protocol for internet-native payments",
            url: "https://www.x402.org/",
            content:
              "x402 is an open payment standard that enables services to charge for access to their APIs.",
            score: 1,
          },
          {
            title: "coinbase/x402 on GitHub",
            url: "https://github.com/coinbase/x402",
            content: "A payments protocol for the internet. Built on HTTP.",
            score: 0.9,
          },
        ],
        backend: "brave",
      },
    },
    timeoutMs: 60_000,
    // The answer's model failing is no refusal: the answer falls back to the backend's own, or none.
    errors: providerErrors("search backend", search !== undefined, SEARCH_SETTINGS),
    handler: async (input, ctx) => {
      if (!search) throw notConfigured("search backend", SEARCH_SETTINGS);
      const found = await search.search(
        { query: input.query, maxResults: input.max_results, topic: input.topic, includeAnswer: !language },
        ctx.signal,
      );
      const { answer, method } = await answerFrom(
        input.query,
        found.results,
        found.answer,
        language,
        ctx.signal,
      );
      return {
        query: input.query,
        answer,
        answer_method: method,
        results: found.results,
        backend: search.name,
      };
    },
  });
}
