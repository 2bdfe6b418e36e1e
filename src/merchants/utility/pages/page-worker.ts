/** The worker thread side of the page endpoints (`work.ts`): one page parsed and read per job. */
import { serveJobs } from "../job-thread.ts";
import { auditAlts } from "./alt-engine.ts";
import { preloadArticle } from "./article.ts";
import { preloadMarkdown } from "./markdown.ts";
import { inspectMetadata } from "./metadata-engine.ts";
import { parsePage } from "./page.ts";
import { scrapePage } from "./scrape.ts";
import { summarizePage } from "./summarize.ts";
import type { PageJob } from "./work.ts";

// Loaded before the first job, so a job's deadline measures its page, not the worker's start.
preloadArticle();
preloadMarkdown();

serveJobs<PageJob, unknown>(({ page: fetched, ...task }) => {
  const page = parsePage(fetched.html, fetched.url, fetched.status, fetched.headerCharset);
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
});
