/**
 * `/screens`: docs/screens.md, the screens' rules and thresholds, as a page like the others. One text
 * serves the repository's readers and the reports' readers, so the two never disagree.
 */
import fs from "node:fs";
import { marked } from "marked";
import { html, trusted } from "../../common/html.ts";
import { LICENSE_URL } from "../build/report.ts";
import { documentShell, licenceFooter, noticeBanner } from "./shell.ts";

const SOURCE = new URL("../../../docs/screens.md", import.meta.url);

let rendered: string | undefined;

/** The document's HTML, rendered once: it is the project's own file, so its markup is trusted. */
function screensHtml(): string {
  rendered ??= marked.parse(fs.readFileSync(SOURCE, "utf8"), { async: false, gfm: true });
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
