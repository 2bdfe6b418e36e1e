/**
 * The page endpoints of the utility API (docs/platform.md, "The utility API's endpoints"): scrape, SEO metadata, alt-text audit, summary and
 * accessibility check. Each fetches the caller's `url` through the SSRF-guarded fetch (one fetch and one
 * parse per request, `page.ts`). See README.md for the rules and decisions.
 */
import type { AnyEndpoint, FetchPolicy } from "../../../merchant-kit/index.ts";
import { a11yCheckEndpoint } from "./a11y-check.ts";
import { altCheckEndpoint } from "./alt-check.ts";
import { metadataEndpoint } from "./metadata.ts";
import { scrapeEndpoint } from "./scrape.ts";
import { summarizeEndpoint } from "./summarize.ts";
import { DEFAULT_PAGE_BUDGET, type PageBudget } from "./work.ts";

export { MAX_HTML_BYTES } from "./page.ts";
export { PageError } from "./parse.ts";
export { DEFAULT_PAGE_BUDGET, type PageBudget } from "./work.ts";

export interface PageOptions {
  /**
   * How callers' pages are fetched. Default `{}`: the strict policy (public addresses only). Tests pass
   * `{allowAddresses: ["127.0.0.1"]}` to reach their fixture servers.
   */
  fetchPolicy?: FetchPolicy;
  /** What a call may spend reading its page, per $0.001 of its price. Default `DEFAULT_PAGE_BUDGET`. */
  budget?: PageBudget;
  /**
   * How long the readers' processes of alt-check, scrape, metadata and summarize live once idle. Default
   * `PAGE_IDLE_MS` (10 s). A test of the memory given back shortens it, rather than wait for it twice.
   */
  readerIdleMs?: number;
}

/** The five endpoints, in the price list's order (alt-check, scrape, metadata, summarize, a11y/check). */
export function pageEndpoints(options: PageOptions = {}): readonly AnyEndpoint[] {
  const policy = options.fetchPolicy ?? {};
  const budget = options.budget ?? DEFAULT_PAGE_BUDGET;
  return [
    altCheckEndpoint(policy, budget, options.readerIdleMs),
    scrapeEndpoint(policy, budget, options.readerIdleMs),
    metadataEndpoint(policy, budget, options.readerIdleMs),
    summarizeEndpoint(policy, budget, options.readerIdleMs),
    a11yCheckEndpoint(policy, budget),
  ];
}

export const PAGE_ENDPOINTS: readonly AnyEndpoint[] = pageEndpoints();
