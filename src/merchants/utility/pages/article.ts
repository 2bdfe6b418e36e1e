/**
 * The main article of a page, as Mozilla Readability (Firefox Reader View) sees it: the content block
 * with navigation, ads, sidebars, comments and footers removed. Shared by `/api/scrape` and
 * `/api/summarize`.
 */
import { createRequire } from "node:module";
import type { Readability as ReadabilityClass } from "@mozilla/readability";
import { onFirstUse } from "../lazy.ts";
import { type DomElement, type DomNode, parseHtml } from "./dom.ts";
import { clean } from "./element.ts";
import type { Page } from "./parse.ts";

// Loaded with jsdom, by the first page read (CommonJS only: the file a static import loads too).
const readability = onFirstUse(
  () => createRequire(import.meta.url)("@mozilla/readability") as { Readability: typeof ReadabilityClass },
);

export interface Article {
  title: string;
  byline: string | null;
  excerpt: string | null;
  lang: string | null;
  siteName: string | null;
  /** The cleaned article HTML. */
  html: string;
  /** Its plain text, paragraphs separated by blank lines. */
  text: string;
  /** Whether Readability found an article; false means the whole `<body>` minus chrome was used. */
  readable: boolean;
}

/** Loads Readability and jsdom now (a page worker's start), so the first page's time is its own. */
export function preloadArticle(): void {
  readability();
  parseHtml("<p>warm</p>", "http://localhost/");
}

/** Text Readability must find for its result to count as an article (its own default is 500). */
export const MIN_ARTICLE_CHARS = 250;

/** Page chrome removed when Readability finds no article, so the fallback is not the menu. */
const CHROME =
  "script, style, noscript, template, nav, header, footer, aside, form, iframe, [role=navigation], [role=banner], [role=contentinfo], [aria-hidden=true]";

/** Readability works on a copy: it rewrites the document, and the other checks need the original. */
export function extractArticle(page: Page): Article {
  const doc = page.document;
  const lang = clean(doc.documentElement.getAttribute("lang")) || null;
  const copy = doc.cloneNode(true);
  const { Readability } = readability();
  const parsed = new Readability(copy as unknown as ConstructorParameters<typeof ReadabilityClass>[0], {
    charThreshold: MIN_ARTICLE_CHARS,
  }).parse();
  // Below the threshold Readability still answers with its most desperate attempt, menus included.
  if (parsed?.content && (parsed.length ?? 0) >= MIN_ARTICLE_CHARS) {
    const holder = doc.createElement("div");
    holder.innerHTML = parsed.content;
    return {
      title: clean(parsed.title) || clean(doc.title),
      byline: clean(parsed.byline) || null,
      excerpt: clean(parsed.excerpt) || null,
      lang: clean(parsed.lang) || lang,
      siteName: clean(parsed.siteName) || null,
      html: parsed.content,
      text: blockText(holder),
      readable: true,
    };
  }
  const body = doc.body?.cloneNode(true) ?? doc.createElement("body");
  for (const el of Array.from(body.querySelectorAll(CHROME))) el.remove();
  return {
    title: clean(doc.title),
    byline: null,
    excerpt: null,
    lang,
    siteName: null,
    html: body.innerHTML,
    text: blockText(body),
    readable: false,
  };
}

const BLOCKS = new Set([
  "p",
  "div",
  "section",
  "article",
  "li",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "blockquote",
  "pre",
  "td",
  "th",
  "dd",
  "dt",
  "figcaption",
  "tr",
  "ul",
  "ol",
  "table",
  "br",
]);

/**
 * Plain text with a paragraph break after every block element, so a heading and the paragraph after it
 * never merge into one "sentence" (textContent would glue them together).
 */
export function blockText(root: DomElement): string {
  const parts: string[] = [];
  const walk = (node: DomNode) => {
    if (node.nodeType === 3) parts.push((node.textContent ?? "").replace(/\s+/g, " "));
    if (node.nodeType !== 1) return;
    const el = node as DomElement;
    if (["script", "style", "noscript", "template"].includes(el.localName)) return;
    const block = BLOCKS.has(el.localName);
    if (block) parts.push("\n\n");
    for (const child of Array.from(el.childNodes)) walk(child);
    if (block) parts.push("\n\n");
  };
  walk(root);
  return parts
    .join("")
    .split(/\n{2,}/)
    .map((p) => p.replace(/\s+/g, " ").trim())
    .filter(Boolean)
    .join("\n\n");
}
