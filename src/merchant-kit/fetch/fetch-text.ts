import { isUtf8 } from "node:buffer";
import { decodeBuffer } from "encoding-sniffer";
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
 * The body is decoded as a browser decodes it (`decodeBody`).
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
    body: decodeBody(bytes, result.response.headers.get("content-type")),
    redirects: result.redirects,
  };
}

/**
 * The body as a browser reads it (WHATWG Encoding, "determine the character encoding"): a byte-order mark
 * first, then the `Content-Type` charset, then a `<meta charset>` or `http-equiv` in the first 1,024 bytes,
 * and else a guess from the bytes: UTF-8 when they are valid UTF-8, windows-1252 (what browsers assume of
 * an unlabelled legacy page) when not. Old pages in Shift_JIS, windows-1251 or ISO-8859-1 that say so only
 * in their `<meta>` are then read right, not as mojibake.
 */
export function decodeBody(bytes: Uint8Array, contentType: string | null): string {
  const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? "")?.[1];
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return decodeBuffer(buffer, {
    ...(charset && { transportLayerEncodingLabel: charset }),
    defaultEncoding: isUtf8(buffer) ? "utf-8" : "windows-1252",
  });
}
