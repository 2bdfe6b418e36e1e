/** `/api/scrape` on the saved article page: chrome removed, structure kept as GitHub-flavoured Markdown. */
import { describe, expect, it } from "vitest";
import { countWords, toMarkdown } from "../../../../src/merchants/utility/pages/markdown.ts";
import { parsePage } from "../../../../src/merchants/utility/pages/parse.ts";
import { scrapePage } from "../../../../src/merchants/utility/pages/scrape-engine.ts";
import { fixturePage } from "./fixtures.ts";

const URL_ = "https://shore.example.com/guides/tide-pools";

describe("scrapePage", () => {
  const result = scrapePage(fixturePage("article", URL_));

  it("reads the article's metadata", () => {
    expect(result).toMatchObject({
      url: URL_,
      title: "What lives in a tide pool",
      byline: "By Ana Reyes",
      excerpt: "A field guide to the rocky shore at low tide.",
      lang: "en-GB",
      site_name: "Shore Notes",
      readable: true,
    });
  });

  it("keeps the article: headings, tables, lists and code", () => {
    expect(result.markdown).toMatch(/^Tide pools are small worlds left behind by the falling sea/);
    expect(result.markdown).toContain("\n## Anemones\n");
    expect(result.markdown).toContain("## Looking after the shore");
    expect(result.markdown).toContain(
      "| Animal | Where to look | Best season |\n| --- | --- | --- |\n| Beadlet anemone | Rock walls of the pool | All year |",
    );
    expect(result.markdown).toMatch(/^- +Take only photographs\.$/m);
    expect(result.markdown).toContain("Never use `nets` on the lower shore.");
    expect(result.markdown).toMatch(/the shrimp begin to feed\.$/);
  });

  it("drops navigation, ads, sidebar, footer and scripts", () => {
    for (const chrome of [
      "Tide tables",
      "Subscribe",
      "wetsuits",
      "Sponsored",
      "Popular this week",
      "Kelp forests",
      "All rights reserved",
      "Privacy",
      "dataLayer",
    ]) {
      expect(result.markdown, chrome).not.toContain(chrome);
    }
  });

  it("counts the words of the article text", () => {
    // 303 words: the article's paragraphs, table cells and list items (the h1 is the title).
    expect(result.word_count).toBe(303);
  });

  it("falls back to the body without chrome when there is no article", () => {
    const page = parsePage(
      "<html><head><title>Links</title></head><body><nav><a href='/'>Home</a></nav><ul><li>One short item</li></ul><footer>Footer text</footer></body></html>",
      "https://example.com/links",
    );
    const fallback = scrapePage(page);
    expect(fallback.readable).toBe(false);
    expect(fallback.title).toBe("Links");
    expect(fallback.markdown).toMatch(/^- +One short item$/);
    expect(fallback.word_count).toBe(3);
  });
});

describe("markdown helpers", () => {
  it("converts tables and strikethrough the GitHub way", () => {
    expect(toMarkdown("<table><tr><th>a</th></tr><tr><td>1</td></tr></table>")).toBe("| a |\n| --- |\n| 1 |");
    expect(toMarkdown("<p><del>old</del> new</p>")).toBe("~old~ new");
  });

  it("counts words across scripts and contractions", () => {
    expect(countWords("It's a well-known café — 3 déjà vus!")).toBe(7);
    expect(countWords("")).toBe(0);
  });
});
