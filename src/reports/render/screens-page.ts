/**
 * `/screens`: docs/screens.md, the screens' rules and thresholds, as a page like the others. One text
 * serves the repository's readers and the reports' readers, so the two never disagree.
 */
import fs from "node:fs";
import { Marked } from "marked";
import { html, trusted } from "../../common/html.ts";
import { LICENSE_URL } from "../week/report.ts";
import { documentShell, licenceFooter, noticeBanner } from "./shell.ts";

const SOURCE = new URL("../../../docs/screens.md", import.meta.url);

let rendered: string | undefined;

/**
 * A heading's anchor as GitHub makes it from the heading's text ("## 1. `self_payment`: ..." is
 * `#1-self_payment-...`), so that a link into docs/screens.md works on GitHub and on this page alike: the
 * flag feed names the changelog's, docs/report.md each screen's.
 */
export function headingAnchor(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The text of a heading's inline HTML, as GitHub reads it for the anchor. */
const textOf = (inline: string) =>
  inline
    .replace(/<[^>]*>/g, "")
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&amp;", "&");

const screensMarkdown = new Marked({
  gfm: true,
  renderer: {
    heading({ tokens, depth }) {
      const inline = this.parser.parseInline(tokens);
      return `<h${depth} id="${headingAnchor(textOf(inline))}">${inline}</h${depth}>\n`;
    },
  },
});

/** The document's HTML, rendered once: it is the project's own file, so its markup is trusted. */
function screensHtml(): string {
  rendered ??= screensMarkdown.parse(fs.readFileSync(SOURCE, "utf8"), { async: false });
  return rendered;
}

export function renderScreensPage(opts: { notice?: string }): string {
  return documentShell(
    "How the screens work: x402 merchants on Base",
    html`${noticeBanner(opts.notice)}
<p class="nav"><a href="/">x402 merchants on Base</a></p>
<main>
${trusted(screensHtml())}
</main>
${licenceFooter(LICENSE_URL)}`,
  );
}
