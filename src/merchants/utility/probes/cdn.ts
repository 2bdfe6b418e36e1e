/**
 * CDN detection from response headers. Each rule is a header a CDN's edge adds to every answer it serves
 * (documented by the vendors); the first provider with a matching rule wins, in this table's order, so a
 * Netlify or Vercel site behind Cloudflare is reported as Cloudflare (the edge the visitor reaches).
 * Headers can be forged by the origin or stripped by a proxy: this says what the answer claims, not a proof.
 *
 * | provider | evidence |
 * |---|---|
 * | Cloudflare | `cf-ray`, `cf-cache-status`, `server: cloudflare` |
 * | Amazon CloudFront | `x-amz-cf-id`, `x-amz-cf-pop`, `via: ... cloudfront` |
 * | Fastly | `x-fastly-request-id`, `fastly-debug-digest`, `x-served-by: cache-...` |
 * | Akamai | `akamai-grn`, `x-akamai-request-id`, `x-akamai-transformed`, `server: AkamaiGHost` / `AkamaiNetStorage` |
 * | Vercel | `x-vercel-id`, `x-vercel-cache`, `server: Vercel` |
 * | Netlify | `x-nf-request-id`, `server: Netlify` |
 * | Azure Front Door | `x-azure-ref`, `x-fd-int-roxy-purgeid` |
 * | Google Cloud CDN | `via: 1.1 google` |
 * | Bunny CDN | `cdn-pullzone`, `cdn-requestid`, `server: BunnyCDN-...` |
 * | KeyCDN | `server: keycdn-engine` |
 * | Sucuri | `x-sucuri-id` |
 * | Imperva Incapsula | `x-iinfo`, `x-cdn: Incapsula` |
 * | Fly.io | `fly-request-id`, `server: Fly/...` |
 */
export interface CdnDetection {
  provider: string;
  /** The headers that matched, as `name: value`. */
  evidence: string[];
}

type Rule = { header: string; value?: RegExp };

export const CDN_RULES: ReadonlyArray<{ provider: string; rules: Rule[] }> = [
  {
    provider: "Cloudflare",
    rules: [{ header: "cf-ray" }, { header: "cf-cache-status" }, { header: "server", value: /^cloudflare/i }],
  },
  {
    provider: "Amazon CloudFront",
    rules: [{ header: "x-amz-cf-id" }, { header: "x-amz-cf-pop" }, { header: "via", value: /cloudfront/i }],
  },
  {
    provider: "Fastly",
    rules: [
      { header: "x-fastly-request-id" },
      { header: "fastly-debug-digest" },
      { header: "x-served-by", value: /(^|,\s*)cache-[a-z0-9-]+/i },
    ],
  },
  {
    provider: "Akamai",
    rules: [
      { header: "akamai-grn" },
      { header: "x-akamai-request-id" },
      { header: "x-akamai-transformed" },
      { header: "server", value: /^Akamai(GHost|NetStorage)/i },
    ],
  },
  {
    provider: "Vercel",
    rules: [{ header: "x-vercel-id" }, { header: "x-vercel-cache" }, { header: "server", value: /^vercel/i }],
  },
  { provider: "Netlify", rules: [{ header: "x-nf-request-id" }, { header: "server", value: /^netlify/i }] },
  { provider: "Azure Front Door", rules: [{ header: "x-azure-ref" }, { header: "x-fd-int-roxy-purgeid" }] },
  { provider: "Google Cloud CDN", rules: [{ header: "via", value: /\b1\.1 google\b/i }] },
  {
    provider: "Bunny CDN",
    rules: [
      { header: "cdn-pullzone" },
      { header: "cdn-requestid" },
      { header: "server", value: /^BunnyCDN/i },
    ],
  },
  { provider: "KeyCDN", rules: [{ header: "server", value: /^keycdn-engine/i }] },
  { provider: "Sucuri", rules: [{ header: "x-sucuri-id" }] },
  { provider: "Imperva Incapsula", rules: [{ header: "x-iinfo" }, { header: "x-cdn", value: /incapsula/i }] },
  { provider: "Fly.io", rules: [{ header: "fly-request-id" }, { header: "server", value: /^Fly\//i }] },
];

/** The CDN the headers name (lower-case header names), or `null` when none does. */
export function detectCdn(headers: Readonly<Record<string, string>>): CdnDetection | null {
  for (const { provider, rules } of CDN_RULES) {
    const evidence = rules.flatMap(({ header, value }) => {
      const found = headers[header];
      return found !== undefined && (value === undefined || value.test(found)) ? [`${header}: ${found}`] : [];
    });
    if (evidence.length > 0) return { provider, evidence };
  }
  return null;
}
