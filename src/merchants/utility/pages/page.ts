/**
 * Fetch and parse of a caller's page, shared by every pages endpoint: one safe fetch (SSRF guard, size
 * and time caps) and one jsdom parse per request.
 */
import { z } from "zod";
import type { Errors } from "../../../merchant-kit/index.ts";
import { FETCH_ERRORS, type FetchPolicy, fetchText } from "../../../merchant-kit/index.ts";
import { type FetchedPage, type Page, PageError, parsePage } from "./parse.ts";

/** Largest HTML page we parse: far above real articles (~100-500 KB), low enough to keep jsdom cheap. */
export const MAX_HTML_BYTES = 3 * 1024 * 1024;

/** Media types we parse as HTML. XHTML parses fine in HTML mode for every check here. */
const HTML_TYPES = new Set(["text/html", "application/xhtml+xml"]);

/** The `url` query parameter: the name comparable scrape/SEO APIs use. */
export const PageUrl = z
  .string()
  .trim()
  .min(1)
  .max(2048)
  .url()
  .refine((u) => /^https?:\/\//i.test(u), { message: "only http and https URLs" })
  .describe("Public http(s) URL of the page, e.g. `https://example.com/article`.");

/** The refusals of every pages endpoint, which fetches the caller's page once the payment is verified. */
export const PAGE_ERRORS = {
  400: FETCH_ERRORS[400],
  422: `${FETCH_ERRORS[422]} Or the page answered an error status (page_status) or is not HTML (not_html).`,
} as const satisfies Errors;

/** Fetches `url` through the safe fetch and parses it on this thread (see `fetchPage`). */
export async function loadPage(url: string, policy: FetchPolicy, signal?: AbortSignal): Promise<Page> {
  const page = await fetchPage(url, policy, signal);
  return parsePage(page.html, page.url, page.status, page.headerCharset);
}

/**
 * Fetches `url` through the safe fetch and decodes it as a browser does, without parsing it (for an engine
 * that parses it elsewhere, e.g. in a worker thread). A status >= 400 or a body that is not HTML is a
 * `PageError` (422): nothing useful can be said about it, and the caller is not charged.
 */
export async function fetchPage(
  url: string,
  policy: FetchPolicy,
  signal?: AbortSignal,
): Promise<FetchedPage> {
  const result = await fetchText(
    url,
    { maxBytes: MAX_HTML_BYTES, ...policy },
    {
      signal,
      headers: { accept: "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1" },
    },
  );
  if (result.status >= 400) {
    throw new PageError(`the page answered HTTP ${result.status}`, "page_status");
  }
  const contentType = result.headers.get("content-type") ?? "";
  const mediaType = contentType.split(";")[0]?.trim().toLowerCase() ?? "";
  // No Content-Type at all: sniff, since some small servers omit it for HTML.
  const looksHtml = mediaType === "" && /^\s*(<!doctype html|<html|<head|<body)/i.test(result.body);
  if (!HTML_TYPES.has(mediaType) && !looksHtml) {
    throw new PageError(`the URL is not an HTML page (Content-Type: ${contentType || "none"})`, "not_html");
  }
  const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1]?.toLowerCase() ?? null;
  return { url: result.url, status: result.status, headerCharset: charset, html: result.body };
}
