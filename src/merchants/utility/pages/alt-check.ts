import { z } from "zod";
import type { FetchPolicy } from "../../../merchant-kit/index.ts";
import { defineEndpoint } from "../../../merchant-kit/index.ts";
import { PRICES } from "../prices.ts";
import { type AltReport, ISSUE_TYPES, LONG_ALT_CHARS } from "./alt-engine.ts";
import { fetchPage, PageUrl } from "./page.ts";
import { DEFAULT_PAGE_BUDGET, type PageBudget, PageWorker, WORK_ERRORS } from "./work.ts";

const IssueType = z.enum(ISSUE_TYPES);
const Count = z.number().int();

const AltOutput = z.object({
  url: z.string().describe("The final URL, after redirects."),
  images_total: Count.describe(
    "`<img>`, `<svg role=img>`, `<area href>` and `<input type=image>`, decorative ones included.",
  ),
  with_good_alt: Count.describe("Images with a text alternative and no issue."),
  missing_alt: Count.describe("`<img>` without an alt attribute."),
  empty_alt_decorative: Count.describe(
    '`alt=""`, `role=presentation|none` or `aria-hidden=true`: decorative.',
  ),
  low_quality_alt: Count.describe("Images whose alt is a file name, generic or too long."),
  summary: z.record(IssueType, Count).describe("Issue counts by type."),
  issues: z.array(
    z.object({
      type: IssueType,
      element: z.enum(["img", "svg", "area", "input"]),
      src: z.string().nullable(),
      alt: z.string().nullable(),
      selector: z.string().describe("CSS selector of the element."),
      snippet: z.string().describe("The element's HTML, cut at 200 characters."),
    }),
  ),
  decorative: z.array(z.object({ src: z.string().nullable(), selector: z.string() })),
});

/** `/api/seo/alt-check`, fetching under `policy`, reading the page in a worker under `budget`. */
export function altCheckEndpoint(
  policy: FetchPolicy,
  budget: PageBudget = DEFAULT_PAGE_BUDGET,
  idleMs?: number,
) {
  const worker = new PageWorker(PRICES["/api/seo/alt-check"], budget, { idleMs });
  return defineEndpoint({
    method: "GET",
    path: "/api/seo/alt-check",
    price: PRICES["/api/seo/alt-check"],
    description: `Image alt-text audit of a web page (query \`url\`): images with a missing alt, a file name as alt, a generic alt ("image", "photo", "logo"...), an over-long alt (> ${LONG_ALT_CHARS} characters), unlabeled \`<svg role="img">\`, image-map areas and image inputs without alternatives. Decorative images (empty alt) are counted separately. Per-issue lists with each element's src, selector and HTML snippet, and summary counts.`,
    input: z.object({ url: PageUrl }),
    output: AltOutput,
    example: {
      input: { url: "https://example.com/gallery" },
      output: {
        url: "https://example.com/gallery",
        images_total: 3,
        with_good_alt: 1,
        missing_alt: 1,
        empty_alt_decorative: 1,
        low_quality_alt: 0,
        summary: {
          missing_alt: 1,
          filename_alt: 0,
          generic_alt: 0,
          long_alt: 0,
          unlabeled_svg: 0,
          area_missing_alt: 0,
          input_image_missing_alt: 0,
        },
        issues: [
          {
            type: "missing_alt",
            element: "img",
            src: "https://example.com/img/sunset.jpg",
            alt: null,
            selector: "#gallery > img:nth-of-type(2)",
            snippet: '<img src="/img/sunset.jpg">',
          },
        ],
        decorative: [
          { src: "https://example.com/img/divider.png", selector: "#gallery > img:nth-of-type(3)" },
        ],
      },
    },
    timeoutMs: 20_000,
    effects: ["compute"],
    errors: WORK_ERRORS,
    handler: async (input, ctx) =>
      worker.run<AltReport>(
        { kind: "alt-check" },
        await fetchPage(input.url, policy, ctx.signal),
        ctx.signal,
      ),
  });
}
