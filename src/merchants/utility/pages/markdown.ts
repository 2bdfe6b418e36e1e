/**
 * HTML to Markdown: turndown with GitHub-flavoured tables, strikethrough and task lists, ATX headings,
 * fenced code and `-` bullets (what Markdown readers and LLM pipelines expect).
 */
import { createRequire } from "node:module";
import type TurndownService from "turndown";
import type { gfm as GfmPlugin } from "turndown-plugin-gfm";
import { onFirstUse } from "../lazy.ts";

// Both are CommonJS to a static import too (their `main`); loaded by the first page turned into Markdown.
const require = createRequire(import.meta.url);

function createService(): TurndownService {
  const Turndown = require("turndown") as typeof TurndownService;
  const { gfm } = require("turndown-plugin-gfm") as { gfm: typeof GfmPlugin };
  const service = new Turndown({
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

const service = onFirstUse(createService);

/** Loads turndown now (a page worker's start), so the first page's time is its own. */
export function preloadMarkdown(): void {
  service();
}

/** Markdown of an HTML fragment, with runs of blank lines collapsed. */
export function toMarkdown(html: string): string {
  return service()
    .turndown(html)
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** Words as people count them: runs of letters or digits (Unicode-aware), apostrophes and hyphens inside. */
export function countWords(text: string): number {
  return text.match(/[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu)?.length ?? 0;
}
