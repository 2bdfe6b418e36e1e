import { z } from "zod";
import type { FetchPolicy } from "../../../merchant-kit/index.ts";
import { defineEndpoint } from "../../../merchant-kit/index.ts";
import { PRICES } from "../prices.ts";
import type { Metadata } from "./metadata-engine.ts";
import { fetchPage, PageUrl } from "./page.ts";
import { DEFAULT_PAGE_BUDGET, type PageBudget, PageWorker, WORK_ERRORS } from "./work.ts";

const Tag = z.object({ key: z.string(), content: z.string() });
const Tags = z.array(Tag);

const MetadataOutput = z.object({
  url: z.string().describe("The final URL, after redirects."),
  title: z.string().nullable(),
  charset: z
    .string()
    .nullable()
    .describe("From `<meta charset>`, else the http-equiv Content-Type, else the HTTP header."),
  lang: z.string().nullable(),
  canonical: z.string().nullable().describe("`<link rel=canonical>`, absolute."),
  description: z.string().nullable(),
  robots: z.string().nullable(),
  viewport: z.string().nullable(),
  meta: z
    .object({
      opengraph: Tags.describe(
        "`og:`, `article:`, `book:`, `profile:`, `music:`, `video:`, `product:`, `fb:`.",
      ),
      twitter: Tags,
      dublin_core: Tags.describe("`DC.*` and `DCTERMS.*`."),
      named: Tags.describe("Other `<meta name>` tags."),
      http_equiv: Tags,
      itemprop: Tags.describe("Microdata `<meta itemprop>`."),
    })
    .describe("Every `<meta>` tag, grouped by family, in document order; repeated keys are kept."),
  links: z.array(
    z.object({
      rel: z.string(),
      href: z.string(),
      type: z.string().nullable(),
      hreflang: z.string().nullable(),
      sizes: z.string().nullable(),
      media: z.string().nullable(),
      title: z.string().nullable(),
    }),
  ),
  json_ld: z
    .array(
      z.union([
        z.object({
          index: z.number(),
          valid: z.literal(true),
          types: z.array(z.string()),
          data: z.unknown(),
        }),
        z.object({ index: z.number(), valid: z.literal(false), error: z.string(), source: z.string() }),
      ]),
    )
    .describe(
      "Every JSON-LD block, parsed; an invalid block is reported with the parser's error, not fatal.",
    ),
  counts: z.object({
    meta: z.number().int(),
    links: z.number().int(),
    json_ld: z.number().int(),
    json_ld_invalid: z.number().int(),
  }),
});

/** `/api/seo/metadata`, fetching under `policy`. */
export function metadataEndpoint(
  policy: FetchPolicy,
  budget: PageBudget = DEFAULT_PAGE_BUDGET,
  idleMs?: number,
) {
  const worker = new PageWorker(PRICES["/api/seo/metadata"], budget, { idleMs });
  return defineEndpoint({
    method: "GET",
    path: "/api/seo/metadata",
    price: PRICES["/api/seo/metadata"],
    description:
      "SEO head inventory of a web page (query `url`): title, charset, lang, canonical, description, robots, viewport; every meta tag grouped by family (OpenGraph, Twitter, Dublin Core, named, http-equiv, itemprop); link relations with absolute URLs; JSON-LD blocks parsed with their @types, invalid blocks reported with the parse error.",
    input: z.object({ url: PageUrl }),
    output: MetadataOutput,
    example: {
      input: { url: "https://example.com/" },
      output: {
        url: "https://example.com/",
        title: "Example Domain",
        charset: "utf-8",
        lang: "en",
        canonical: "https://example.com/",
        description: "An example page.",
        robots: null,
        viewport: "width=device-width, initial-scale=1",
        meta: {
          opengraph: [{ key: "og:title", content: "Example Domain" }],
          twitter: [{ key: "twitter:card", content: "summary" }],
          dublin_core: [],
          named: [
            { key: "viewport", content: "width=device-width, initial-scale=1" },
            { key: "description", content: "An example page." },
          ],
          http_equiv: [],
          itemprop: [],
        },
        links: [
          {
            rel: "canonical",
            href: "https://example.com/",
            type: null,
            hreflang: null,
            sizes: null,
            media: null,
            title: null,
          },
        ],
        json_ld: [
          {
            index: 0,
            valid: true,
            types: ["WebSite"],
            data: { "@context": "https://schema.org", "@type": "WebSite", name: "Example" },
          },
        ],
        counts: { meta: 4, links: 1, json_ld: 1, json_ld_invalid: 0 },
      },
    },
    timeoutMs: 20_000,
    effects: ["compute"],
    errors: WORK_ERRORS,
    handler: async (input, ctx) =>
      worker.run<Metadata>({ kind: "metadata" }, await fetchPage(input.url, policy, ctx.signal), ctx.signal),
  });
}
