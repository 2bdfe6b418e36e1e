import type { Headers } from "undici";
import type { FetchPolicy } from "./policy.ts";
import { type RedirectHop, type SafeFetchInit, safeFetch } from "./safe-fetch.ts";

export interface FetchTextResult {
  /** The final URL, after redirects. */
  url: string;
  status: number;
  headers: Headers;
  body: string;
  redirects: RedirectHop[];
}

/**
 * Fetches a caller's URL as text (HTML, JSON, robots.txt...) under the same rules as `safeFetch`,
 * whatever the status: a 404 page is still an answer for scrape or SEO checks.
 * The body is decoded with the `Content-Type` charset when Node knows it, UTF-8 otherwise
 * (a `<meta charset>` inside HTML is the caller's business).
 *
 * @example
 * const page = await fetchText("https://example.com/", {}, { maxBytes: 2_000_000 });
 * page.status; page.url; page.body.length; page.redirects.length;
 */
export async function fetchText(
  url: string | URL,
  policy: FetchPolicy = {},
  init: SafeFetchInit = {},
): Promise<FetchTextResult> {
  const result = await safeFetch(url, policy, init);
  const bytes = new Uint8Array(await result.response.arrayBuffer());
  return {
    url: result.url,
    status: result.response.status,
    headers: result.response.headers,
    body: decode(bytes, result.response.headers.get("content-type")),
    redirects: result.redirects,
  };
}

function decode(bytes: Uint8Array, contentType: string | null): string {
  const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? "")?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8").decode(bytes);
  } catch {
    return new TextDecoder("utf-8").decode(bytes);
  }
}
