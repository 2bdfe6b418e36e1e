/**
 * The summary of a parsed page, apart from its endpoint (`summarize.ts`): what the readers' processes load
 * (`page-worker.ts`), without the merchant kit the endpoint is defined with.
 */
import { AppError } from "../../../common/errors.ts";
import { extractArticle } from "./article.ts";
import { countWords } from "./markdown.ts";
import type { Page } from "./parse.ts";
import type { SummarizeResult } from "./summarize.ts";
import { MIN_WORDS, textRank } from "./textrank.ts";

/** A page whose main text has no sentence to rank: nothing to sell, so a 422 that is not charged. */
export class NoTextError extends AppError {
  constructor() {
    super(422, "no_text", `the page has no article text to summarize (no sentence of ${MIN_WORDS}+ words)`);
  }
}

/** The summary of an already parsed page. */
export function summarizePage(page: Page, count: number): SummarizeResult {
  const article = extractArticle(page);
  const { sentences, chosen } = textRank(article.text, count, article.lang ?? "en");
  if (sentences.length === 0) throw new NoTextError();
  const keySentences = chosen.map((s) => s.text);
  const summary = keySentences.join(" ");
  return {
    url: page.url,
    title: article.title,
    summary,
    key_sentences: keySentences,
    scores: chosen.map(({ index, score }) => ({ index, score })),
    sentence_count: sentences.length,
    original_word_count: countWords(article.text),
    summary_word_count: countWords(summary),
    method: "textrank",
  };
}
