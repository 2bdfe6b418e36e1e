/** The page endpoints' worker, run as a child process (`work.ts`): one page parsed and read per job. */
import { serveJobs } from "../job-runner.ts";
import { auditAlts } from "./alt-engine.ts";
import { preloadArticle } from "./article.ts";
import { markupDepth } from "./depth.ts";
import type { DomDocument } from "./dom.ts";
import { preloadMarkdown } from "./markdown.ts";
import { inspectMetadata } from "./metadata-engine.ts";
import { PageError, parsePage } from "./parse.ts";
import { scrapePage } from "./scrape-engine.ts";
import { summarizePage } from "./summarize-engine.ts";
import type { PageJob } from "./work.ts";

// Loaded before the first job, so a job's deadline measures its page, not the worker's start.
preloadArticle();
preloadMarkdown();

/**
 * Deepest element nesting read. Readability, turndown and the text walks recurse down the tree: a page of
 * 200,000 nested `<div>`s overflowed their stacks (a 500 after 25 s of CPU, issue 69). Readability's work
 * grows with the square of the depth (one chain of `<div>`s: 1.5 s at 250, 4.2 s at 500), so half of
 * Chromium's own limit (its parser stops nesting at 512).
 */
export const MAX_DEPTH = 256;

function read({ page: fetched, ...task }: PageJob): unknown {
  // Before the parse, whose tree building is quadratic in the depth; after it, as the tree came out.
  refuseDeeper(markupDepth(fetched.html));
  const page = parsePage(fetched.html, fetched.url, fetched.status, fetched.headerCharset);
  refuseDeeper(depthOf(page.document));
  switch (task.kind) {
    case "alt-check":
      return auditAlts(page);
    case "scrape":
      return scrapePage(page);
    case "metadata":
      return inspectMetadata(page);
    case "summarize":
      return summarizePage(page, task.sentences);
  }
}

// One small page scraped before the first job (the parse, Readability and turndown: every reading's parts
// but the audits' rules): they compile much of their code on first use, and the first page of a fresh
// process took twice the CPU of the next (0.72 against 0.36 s for an alt-check of 48 KB on a busy host), all
// of it against that page's budget and deadline; 0.51 after this.
read({
  kind: "scrape",
  page: {
    url: "http://127.0.0.1/warm",
    status: 200,
    headerCharset: null,
    html: `<!doctype html><html lang="en"><head><title>Warm</title></head><body>${"<p>A sentence about tide pools and the fish in them. Another one.</p>".repeat(30)}<img src="a.png"></body></html>`,
  },
});

serveJobs<PageJob, unknown>(read);

function refuseDeeper(depth: number): void {
  if (depth <= MAX_DEPTH) return;
  throw new PageError(
    `the page nests elements ${depth} deep; pages are read up to a depth of ${MAX_DEPTH}`,
    "too_complex",
  );
}

/** The deepest nesting of elements, walked without recursion (the tree may be deeper than the stack). */
function depthOf(doc: DomDocument): number {
  let deepest = 0;
  let depth = 1;
  let el = doc.documentElement;
  for (;;) {
    if (depth > deepest) deepest = depth;
    const child = el.firstElementChild;
    if (child) {
      el = child;
      depth += 1;
      continue;
    }
    let up: typeof el | null = el;
    while (up && !up.nextElementSibling) {
      up = up.parentElement;
      depth -= 1;
    }
    if (!up || depth <= 0) return deepest;
    el = up.nextElementSibling as typeof el;
  }
}
