import { z } from "zod";
import type { FetchPolicy } from "../../../merchant-kit/index.ts";
import { defineEndpoint } from "../../../merchant-kit/index.ts";
import { PRICES } from "../prices.ts";
import { fetchPage, PageUrl } from "./page.ts";
import { DEFAULT_PAGE_BUDGET, type PageBudget, PageWorker, WORK_ERRORS } from "./work.ts";

const ScrapeOutput = z.object({
  url: z.string().describe("The final URL, after redirects."),
  title: z.string(),
  byline: z.string().nullable().describe("Author line, when the page names one."),
  excerpt: z.string().nullable().describe("The page's description or first paragraph."),
  lang: z.string().nullable().describe("Language of the page (`<html lang>`)."),
  site_name: z.string().nullable(),
  markdown: z.string().describe("The main content as GitHub-flavoured Markdown (tables included)."),
  word_count: z.number().int().describe("Words in the Markdown's text."),
  readable: z
    .boolean()
    .describe(
      "True when an article was found; false when the page has none and the body minus nav, header, footer and aside was converted.",
    ),
});

export type ScrapeResult = z.output<typeof ScrapeOutput>;

/** `/api/scrape`, fetching under `policy`. Also listed by the alias host (docs/http.md, "The merchant hosts"): same description. */
export function scrapeEndpoint(
  policy: FetchPolicy,
  budget: PageBudget = DEFAULT_PAGE_BUDGET,
  idleMs?: number,
) {
  const worker = new PageWorker(PRICES["/api/scrape"], budget, { idleMs });
  return defineEndpoint({
    method: "GET",
    path: "/api/scrape",
    price: PRICES["/api/scrape"],
    description:
      "Scrapes a public web page (query `url`) into clean Markdown: the main content as Firefox Reader View finds it (Mozilla Readability), with navigation, ads, sidebars, comments and footers removed; headings, links, lists, code and tables kept (GitHub-flavoured). Returns the final URL, title, byline, excerpt, language, Markdown and word count. HTML pages up to 3 MB; pages answering an HTTP error or not HTML are refused and not charged.",
    input: z.object({ url: PageUrl }),
    output: ScrapeOutput,
    example: {
      input: { url: "https://example.com/blog/tide-pools" },
      output: {
        url: "https://example.com/blog/tide-pools",
        title: "What lives in a tide pool",
        byline: "By Ana Reyes",
        excerpt: "A field guide to the rocky shore at low tide.",
        lang: "en",
        site_name: "Shore Notes",
        markdown:
          "Tide pools are small worlds left behind by the falling sea.\n\n## Anemones\n\nSea anemones close up when the water leaves them.",
        word_count: 23,
        readable: true,
      },
    },
    timeoutMs: 20_000,
    effects: ["compute"],
    errors: WORK_ERRORS,
    handler: async (input, ctx) =>
      worker.run<ScrapeResult>(
        { kind: "scrape" },
        await fetchPage(input.url, policy, ctx.signal),
        ctx.signal,
      ),
  });
}
