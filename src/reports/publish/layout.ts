/**
 * Where each URL of the report service lives in a published site, and what a static host must be told to
 * serve it as the service does.
 *
 * A path keeps its URL: a page (HTML) is `<path>/index.html`, which every static host serves for `<path>/`
 * and most for `<path>`; a JSON document whose URL has no extension is `<path>/index.json` (its URL is also
 * the parent of others: `/v1/reports/base/<address>` and `.../evidence`), which hosts are told to serve for
 * `<path>` by `_redirects` (Netlify, Cloudflare Pages) or the nginx snippet in docs/publish.md; a file
 * whose URL has an extension keeps its name.
 */

/** A URL of the service, published as a file. */
export interface SiteFile {
  /** The URL path the service answers it at (no query string). */
  path: string;
  /** Where it is written, relative to the site's root, with `/` separators. */
  file: string;
  /** The content type the service answers it with. */
  contentType: string;
}

/** Where `path`, answered with `contentType`, is written. */
export function fileOf(path: string, contentType: string): string {
  const bare = path.replace(/^\/+|\/+$/g, "");
  if (/\.[a-z0-9]+$/i.test(bare)) return bare;
  const index = /^text\/html\b/.test(contentType) ? "index.html" : "index.json";
  return bare === "" ? index : `${bare}/${index}`;
}

/** The URL paths whose files are `index.json`: the rewrites a static host needs for them. */
export function jsonRewrites(files: SiteFile[]): { from: string; to: string }[] {
  return files.filter((f) => f.file.endsWith("/index.json")).map((f) => ({ from: f.path, to: `/${f.file}` }));
}

/**
 * `_redirects` (Netlify, Cloudflare Pages): JSON URLs without an extension rewritten (200, not a redirect)
 * to their `index.json`. Written per pattern, so the file stays a few lines whatever the merchants' number.
 */
export function redirectsFile(files: SiteFile[]): string {
  const patterns = new Set(
    jsonRewrites(files).map((r) =>
      r.from
        .replace(/0x[0-9a-f]{40}|(?<=\/)[1-9A-HJ-NP-Za-km-z]{32,44}(?=\/|$)/g, ":address")
        .replace(/\/pages\/\d+$/, "/pages/:page"),
    ),
  );
  return [...patterns]
    .sort()
    .map((from) => `${from} ${from}/index.json 200\n`)
    .join("");
}

/**
 * `_headers` (Netlify, Cloudflare Pages): the types a host would not guess (NDJSON, CSV as UTF-8), the
 * licence link the datasets are served with, and CORS on the API as the service sends it.
 */
export function headersFile(license: string): string {
  return [
    "/v1/*",
    "  Access-Control-Allow-Origin: *",
    "/v1/datasets/*",
    `  Link: <${license}>; rel="license"`,
    "/v1/datasets/*.ndjson",
    "  Content-Type: application/x-ndjson; charset=utf-8",
    "/v1/datasets/*.csv",
    "  Content-Type: text/csv; charset=utf-8",
    "/v1/schema/*",
    "  Content-Type: application/schema+json",
    "",
  ].join("\n");
}
