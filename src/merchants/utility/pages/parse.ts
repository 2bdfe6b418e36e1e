/**
 * A caller's page parsed (jsdom), apart from its fetch (`page.ts`): what the readers' processes load
 * (`page-worker.ts`), without the merchant kit the fetch needs, whose load was most of a reader's start.
 */
import { AppError } from "../../../common/errors.ts";
import { type DomDocument, parseHtml } from "./dom.ts";

/**
 * A fetched page that is not usable (error status, not HTML, too large a DOM for an engine): the caller's URL,
 * so a 422, never charged.
 */
export class PageError extends AppError {
  constructor(
    message: string,
    code: "page_status" | "not_html" | "too_complex",
    options?: { afterWork?: boolean },
  ) {
    super(422, code, message, options);
  }
}

/** A page as fetched and decoded, not parsed yet. */
export interface FetchedPage {
  /** The final URL, after redirects. */
  url: string;
  status: number;
  /** Charset announced by the `Content-Type` header, if any. */
  headerCharset: string | null;
  html: string;
}

export interface Page extends FetchedPage {
  document: DomDocument;
}

/** Parses HTML as if served from `url` (relative links resolve against it, or against `<base>`). */
export function parsePage(
  html: string,
  url: string,
  status = 200,
  headerCharset: string | null = null,
): Page {
  return { url, status, headerCharset, html, document: parseHtml(html, url) };
}
