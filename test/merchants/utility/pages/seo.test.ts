/** `/api/seo/metadata` and `/api/seo/alt-check` on the saved pages: exact inventories. */
import { describe, expect, it } from "vitest";
import { auditAlts, qualityIssues } from "../../../../src/merchants/utility/pages/alt-engine.ts";
import { inspectMetadata, parseJsonLd } from "../../../../src/merchants/utility/pages/metadata-engine.ts";
import { parsePage } from "../../../../src/merchants/utility/pages/parse.ts";
import { fixturePage } from "./fixtures.ts";

describe("inspectMetadata", () => {
  const meta = inspectMetadata(
    fixturePage("head", "https://cuisine.example.fr/recettes/soupe-de-poisson?ref=newsletter"),
  );

  it("reads the head's basics", () => {
    expect(meta).toMatchObject({
      title: "Recette : la soupe de poisson de Marseille",
      charset: "utf-8",
      lang: "fr",
      canonical: "https://cuisine.example.fr/recettes/soupe-de-poisson",
      description: "La vraie soupe de poisson, pas à pas.",
      robots: "index, follow, max-image-preview:large",
      viewport: "width=device-width, initial-scale=1",
      counts: { meta: 19, links: 5, json_ld: 2, json_ld_invalid: 1 },
    });
  });

  it("groups meta tags by family, repeated keys kept in order", () => {
    expect(meta.meta.opengraph.map((t) => t.key)).toEqual([
      "og:type",
      "og:title",
      "og:image",
      "og:image",
      "og:locale",
      "article:published_time",
      "fb:app_id",
    ]);
    expect(meta.meta.opengraph[3]).toEqual({
      key: "og:image",
      content: "https://cuisine.example.fr/img/soupe-600.jpg",
    });
    expect(meta.meta.twitter).toEqual([
      { key: "twitter:card", content: "summary_large_image" },
      { key: "twitter:site", content: "@cuisine_fr" },
    ]);
    expect(meta.meta.dublin_core).toEqual([
      { key: "DC.title", content: "Soupe de poisson" },
      { key: "DCTERMS.created", content: "2026-03-14" },
    ]);
    expect(meta.meta.named.map((t) => t.key)).toEqual([
      "viewport",
      "description",
      "robots",
      "author",
      "generator",
    ]);
    expect(meta.meta.http_equiv).toEqual([
      { key: "X-UA-Compatible", content: "IE=edge" },
      { key: "content-security-policy", content: "default-src 'self'" },
    ]);
    expect(meta.meta.itemprop).toEqual([{ key: "totalTime", content: "PT1H30M" }]);
  });

  it("lists link relations with absolute URLs", () => {
    expect(meta.links.map((l) => [l.rel, l.href])).toEqual([
      ["canonical", "https://cuisine.example.fr/recettes/soupe-de-poisson"],
      ["alternate", "https://cuisine.example.fr/en/recipes/fish-soup"],
      ["icon", "https://cuisine.example.fr/favicon-32.png"],
      ["stylesheet", "https://cuisine.example.fr/css/main.css"],
      ["alternate", "https://cuisine.example.fr/feed.xml"],
    ]);
    expect(meta.links[1]?.hreflang).toBe("en");
    expect(meta.links[2]).toMatchObject({ type: "image/png", sizes: "32x32" });
    expect(meta.links[4]).toMatchObject({ type: "application/rss+xml", title: "Recettes" });
  });

  it("parses JSON-LD, collects @graph types and reports an invalid block without failing", () => {
    const [graph, broken] = meta.json_ld;
    expect(graph).toMatchObject({ index: 0, valid: true, types: ["Recipe", "WebPage", "ItemPage"] });
    expect(graph?.valid && (graph.data as { "@graph": unknown[] })["@graph"]).toHaveLength(2);
    expect(broken).toMatchObject({ index: 1, valid: false });
    expect(broken?.valid === false && broken.source).toContain('"BreadcrumbList"');
    expect(broken?.valid === false && broken.error).toMatch(/JSON/);
  });

  it("answers nulls for a bare page and takes the header charset when the page names none", () => {
    const bare = inspectMetadata(parsePage("<p>hi</p>", "https://example.com/", 200, "iso-8859-1"));
    expect(bare).toMatchObject({
      title: null,
      charset: "iso-8859-1",
      lang: null,
      canonical: null,
      description: null,
      links: [],
      json_ld: [],
      counts: { meta: 0, links: 0, json_ld: 0, json_ld_invalid: 0 },
    });
  });

  it("tolerates HTML comment wrappers around JSON-LD", () => {
    expect(parseJsonLd('<!-- {"@type": "Organization"} -->', 0)).toMatchObject({
      valid: true,
      types: ["Organization"],
    });
  });
});

describe("auditAlts", () => {
  const report = auditAlts(fixturePage("images", "https://photos.example.org/index.html"));

  it("counts every kind of image once", () => {
    expect(report).toMatchObject({
      images_total: 19,
      with_good_alt: 7,
      missing_alt: 1,
      empty_alt_decorative: 2,
      low_quality_alt: 6,
      summary: {
        missing_alt: 1,
        filename_alt: 3,
        generic_alt: 2,
        long_alt: 1,
        unlabeled_svg: 1,
        area_missing_alt: 1,
        input_image_missing_alt: 1,
      },
    });
  });

  it("lists each issue with its element, resolved src (against <base>) and selector", () => {
    expect(
      report.issues.map((i) => [
        i.type,
        i.src?.replace("https://photos.example.org/gallery/", "") ?? null,
        i.alt,
      ]),
    ).toEqual([
      ["missing_alt", "img/lighthouse.jpg", null],
      ["filename_alt", "img/IMG_2041.JPG", "IMG_2041.JPG"],
      ["filename_alt", "img/harbour-boats.png", "harbour-boats"],
      ["filename_alt", "img/DSC_0042.jpg", "DSC_0042"],
      ["generic_alt", "img/gull.jpg", "Photo"],
      ["generic_alt", "img/brand-mark.svg", "Logo"],
      ["long_alt", "img/pier.jpg", expect.stringMatching(/^A long Victorian pier/)],
      ["unlabeled_svg", null, null],
      ["area_missing_alt", "south.html", null],
      ["input_image_missing_alt", "img/go.png", null],
    ]);
    expect(report.issues[0]).toMatchObject({
      element: "img",
      selector: "#gallery > img:nth-of-type(2)",
      snippet: '<img src="img/lighthouse.jpg">',
    });
    expect(report.issues[7]?.selector).toBe("#gallery > svg:nth-of-type(1)");
    expect(report.decorative.map((d) => d.src)).toEqual([
      "https://photos.example.org/gallery/img/divider.png",
      "https://photos.example.org/gallery/img/spacer.gif",
    ]);
  });

  it("judges alt texts", () => {
    expect(qualityIssues("Chalk cliffs at sunset", "https://x.test/cliffs.jpg")).toEqual([]);
    expect(qualityIssues("Search", "https://x.test/search.png")).toEqual([]);
    expect(qualityIssues("search.png", "https://x.test/search.png")).toEqual(["filename_alt"]);
    expect(qualityIssues("hero_2x", "https://x.test/hero_2x.webp?v=3")).toEqual(["filename_alt"]);
    expect(qualityIssues("PXL_20230514_101010", null)).toEqual(["filename_alt"]);
    expect(qualityIssues("Image of", null)).toEqual(["generic_alt"]);
    expect(qualityIssues("  picture!  ".trim(), null)).toEqual(["generic_alt"]);
    expect(qualityIssues("x".repeat(125), null)).toEqual([]);
    expect(qualityIssues("x".repeat(126), null)).toEqual(["long_alt"]);
  });

  it("has nothing to say about a page without images", () => {
    const empty = auditAlts(parsePage("<p>text</p>", "https://example.com/"));
    expect(empty).toMatchObject({ images_total: 0, with_good_alt: 0, issues: [], decorative: [] });
  });
});
