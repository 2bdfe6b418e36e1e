/**
 * HTML to Markdown: turndown with GitHub-flavoured tables, strikethrough and task lists, ATX headings,
 * fenced code and `-` bullets (what Markdown readers and LLM pipelines expect).
 */
import TurndownService from "turndown";
import { gfm } from "turndown-plugin-gfm";

function createService(): TurndownService {
  const service = new TurndownService({
    headingStyle: "atx",
    codeBlockStyle: "fenced",
    bulletListMarker: "-",
    emDelimiter: "_",
    hr: "---",
  });
  service.use(gfm);
  // Never let markup that carries no reading content through as raw HTML.
  service.remove(["script", "style", "noscript", "iframe", "form", "button", "input", "select", "textarea"]);
  return service;
}

const service = createService();

/** Markdown of an HTML fragment, with runs of blank lines collapsed. */
export function toMarkdown(html: string): string {
  return service
    .turndown(html)
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** Words as people count them: runs of letters or digits (Unicode-aware), apostrophes and hyphens inside. */
export function countWords(text: string): number {
  return text.match(/[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu)?.length ?? 0;
}
