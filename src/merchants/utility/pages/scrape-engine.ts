/**
 * The scrape of a parsed page, apart from its endpoint (`scrape.ts`): what the readers' processes load
 * (`page-worker.ts`), without the merchant kit the endpoint is defined with.
 */
import { extractArticle } from "./article.ts";
import { countWords, toMarkdown } from "./markdown.ts";
import type { Page } from "./parse.ts";
import type { ScrapeResult } from "./scrape.ts";

/** The scrape of an already parsed page. */
export function scrapePage(page: Page): ScrapeResult {
  const article = extractArticle(page);
  const markdown = toMarkdown(article.html);
  return {
    url: page.url,
    title: article.title,
    byline: article.byline,
    excerpt: article.excerpt,
    lang: article.lang,
    site_name: article.siteName,
    markdown,
    word_count: countWords(article.text),
    readable: article.readable,
  };
}
