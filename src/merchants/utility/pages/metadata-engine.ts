/**
 * The head inventory of a page for `/api/seo/metadata`. Meta tags are grouped by family from their own
 * attributes (rules below); `<meta>`, `<link>` and JSON-LD are read from the whole document, since
 * microdata `itemprop` metas, stylesheets and JSON-LD blocks often sit in `<body>`.
 */
import { clean } from "./element.ts";
import type { Page } from "./parse.ts";

export interface MetaTag {
  /** The `property`, `name`, `http-equiv` or `itemprop` value, as written. */
  key: string;
  content: string;
}

export interface LinkRelation {
  rel: string;
  /** Absolute, resolved against the page URL (or `<base href>`). */
  href: string;
  type: string | null;
  hreflang: string | null;
  sizes: string | null;
  media: string | null;
  title: string | null;
}

export type JsonLdBlock =
  | { index: number; valid: true; types: string[]; data: unknown }
  | { index: number; valid: false; error: string; source: string };

export interface Metadata {
  url: string;
  title: string | null;
  charset: string | null;
  lang: string | null;
  canonical: string | null;
  description: string | null;
  robots: string | null;
  viewport: string | null;
  meta: {
    opengraph: MetaTag[];
    twitter: MetaTag[];
    dublin_core: MetaTag[];
    named: MetaTag[];
    http_equiv: MetaTag[];
    itemprop: MetaTag[];
  };
  links: LinkRelation[];
  json_ld: JsonLdBlock[];
  counts: { meta: number; links: number; json_ld: number; json_ld_invalid: number };
}

/** OpenGraph and its vertical namespaces (ogp.me), plus Facebook's `fb:` properties. */
const OPENGRAPH = /^(og|article|book|profile|music|video|fb|product):/i;
/** Dublin Core in both spellings: `DC.title` (DCMES) and `DCTERMS.created` (DCMI terms). */
const DUBLIN_CORE = /^(dc|dcterms)[.:]/i;
/** JSON-LD text kept verbatim in an invalid block's report, cut here. */
const SOURCE_MAX = 300;

/**
 * Family rules, first match wins: `http-equiv` → http_equiv; `property` or `name` in an OpenGraph
 * namespace → opengraph; `twitter:` → twitter; `DC.`/`DCTERMS.` → dublin_core; `itemprop` → itemprop;
 * any other `name` → named. `<meta charset>` is reported as `charset`, not as a tag.
 */
export function inspectMetadata(page: Page): Metadata {
  const doc = page.document;
  const meta: Metadata["meta"] = {
    opengraph: [],
    twitter: [],
    dublin_core: [],
    named: [],
    http_equiv: [],
    itemprop: [],
  };
  let metaCharset: string | null = null;
  for (const el of Array.from(doc.querySelectorAll("meta"))) {
    const content = el.getAttribute("content") ?? "";
    const httpEquiv = el.getAttribute("http-equiv");
    const property = el.getAttribute("property");
    const name = el.getAttribute("name");
    const itemprop = el.getAttribute("itemprop");
    if (el.hasAttribute("charset")) metaCharset ??= clean(el.getAttribute("charset")).toLowerCase() || null;
    if (httpEquiv) {
      meta.http_equiv.push({ key: httpEquiv, content });
      continue;
    }
    const key = property ?? name;
    if (key && OPENGRAPH.test(key)) meta.opengraph.push({ key, content });
    else if (key && /^twitter:/i.test(key)) meta.twitter.push({ key, content });
    else if (key && DUBLIN_CORE.test(key)) meta.dublin_core.push({ key, content });
    else if (itemprop) meta.itemprop.push({ key: itemprop, content });
    else if (key) meta.named.push({ key, content });
  }
  const contentTypeCharset = meta.http_equiv
    .filter((t) => t.key.toLowerCase() === "content-type")
    .map((t) => /charset\s*=\s*([^;\s]+)/i.exec(t.content)?.[1]?.toLowerCase())
    .find(Boolean);
  const named = (key: string) => meta.named.find((t) => t.key.toLowerCase() === key)?.content.trim() || null;

  const links: LinkRelation[] = Array.from(doc.querySelectorAll("link[rel]")).map((el) => {
    const attr = (n: string) => el.getAttribute(n) || null;
    return {
      rel: clean(el.getAttribute("rel")).toLowerCase(),
      href: absolute(el.getAttribute("href"), doc.baseURI) ?? "",
      type: attr("type"),
      hreflang: attr("hreflang"),
      sizes: attr("sizes"),
      media: attr("media"),
      title: attr("title"),
    };
  });
  const canonical = links.find((l) => l.rel.split(" ").includes("canonical"))?.href || null;

  const jsonLd = Array.from(doc.querySelectorAll('script[type="application/ld+json" i]')).map((el, index) =>
    parseJsonLd(el.textContent ?? "", index),
  );
  const title = doc.querySelector("title");
  return {
    url: page.url,
    title: title ? clean(title.textContent) : null,
    charset: metaCharset ?? contentTypeCharset ?? page.headerCharset,
    lang: clean(doc.documentElement.getAttribute("lang")) || null,
    canonical,
    description: named("description"),
    robots: named("robots"),
    viewport: named("viewport"),
    meta,
    links,
    json_ld: jsonLd,
    counts: {
      meta: Object.values(meta).reduce((n, tags) => n + tags.length, 0),
      links: links.length,
      json_ld: jsonLd.length,
      json_ld_invalid: jsonLd.filter((b) => !b.valid).length,
    },
  };
}

function absolute(href: string | null, base: string): string | null {
  if (href === null) return null;
  try {
    return new URL(href.trim(), base).href;
  } catch {
    return href;
  }
}

/** One JSON-LD block: parsed, with the `@type`s of its top level and its `@graph`; or why it is invalid. */
export function parseJsonLd(source: string, index: number): JsonLdBlock {
  // HTML comment wrappers (`<!-- ... -->`) are an old CMS habit that browsers and Google tolerate.
  const text = source.trim().replace(/^<!--/, "").replace(/-->$/, "").trim();
  try {
    const data: unknown = JSON.parse(text);
    return { index, valid: true, types: typesOf(data), data };
  } catch (error) {
    return {
      index,
      valid: false,
      error: (error as Error).message,
      source: text.length > SOURCE_MAX ? `${text.slice(0, SOURCE_MAX - 1)}…` : text,
    };
  }
}

function typesOf(data: unknown): string[] {
  const types = new Set<string>();
  const visit = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== "object") return;
    const record = node as Record<string, unknown>;
    const type = record["@type"];
    for (const t of Array.isArray(type) ? type : [type]) if (typeof t === "string") types.add(t);
    if (record["@graph"]) visit(record["@graph"]);
  };
  visit(data);
  return [...types];
}
