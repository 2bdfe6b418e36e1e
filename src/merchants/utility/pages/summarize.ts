import { z } from "zod";
import type { FetchPolicy } from "../../../merchant-kit/index.ts";
import { defineEndpoint } from "../../../merchant-kit/index.ts";
import { PRICES } from "../prices.ts";
import { fetchPage, PageUrl } from "./page.ts";
import { DEFAULT_PAGE_BUDGET, type PageBudget, PageWorker, WORK_ERRORS } from "./work.ts";

const SummarizeInput = z.object({
  url: PageUrl,
  sentences: z.coerce
    .number()
    .int()
    .min(1)
    .max(10)
    .default(5)
    .describe("How many key sentences to return, 1-10 (default 5)."),
});

const SummarizeOutput = z.object({
  url: z.string().describe("The final URL, after redirects."),
  title: z.string(),
  summary: z.string().describe("The key sentences joined with spaces, in document order."),
  key_sentences: z.array(z.string()).describe("The chosen sentences, in document order."),
  scores: z
    .array(z.object({ index: z.number().int(), score: z.number() }))
    .describe("Position of each key sentence among the article's sentences (from 0) and its TextRank score."),
  sentence_count: z.number().int().describe("Sentences of the article that were ranked."),
  original_word_count: z.number().int(),
  summary_word_count: z.number().int(),
  method: z.literal("textrank"),
});

export type SummarizeResult = z.output<typeof SummarizeOutput>;

/** `/api/summarize`, fetching under `policy`. */
export function summarizeEndpoint(
  policy: FetchPolicy,
  budget: PageBudget = DEFAULT_PAGE_BUDGET,
  idleMs?: number,
) {
  const worker = new PageWorker(PRICES["/api/summarize"], budget, { idleMs });
  return defineEndpoint({
    method: "GET",
    path: "/api/summarize",
    price: PRICES["/api/summarize"],
    description:
      "Extractive summary of a web page's main article (query `url`, option `sentences` 1-10, default 5): the article is isolated with Mozilla Readability, its sentences ranked with TextRank (sentence-similarity graph, PageRank), and the best returned verbatim in document order. Deterministic, no AI.",
    input: SummarizeInput,
    output: SummarizeOutput,
    example: {
      input: { url: "https://example.com/blog/tide-pools", sentences: 2 },
      output: {
        url: "https://example.com/blog/tide-pools",
        title: "What lives in a tide pool",
        summary:
          "Tide pools are small worlds left behind by the falling sea. Sea anemones close up when the water leaves them.",
        key_sentences: [
          "Tide pools are small worlds left behind by the falling sea.",
          "Sea anemones close up when the water leaves them.",
        ],
        scores: [
          { index: 0, score: 1.31 },
          { index: 4, score: 1.12 },
        ],
        sentence_count: 12,
        original_word_count: 240,
        summary_word_count: 21,
        method: "textrank",
      },
    },
    timeoutMs: 20_000,
    effects: ["compute"],
    errors: {
      ...WORK_ERRORS,
      422: `${WORK_ERRORS[422]} Or the page has no article text to summarize (no_text).`,
    },
    handler: async (input, ctx) =>
      worker.run<SummarizeResult>(
        { kind: "summarize", sentences: input.sentences },
        await fetchPage(input.url, policy, ctx.signal),
        ctx.signal,
      ),
  });
}
