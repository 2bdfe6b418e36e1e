import { z } from "zod";
import { defineEndpoint } from "../../../merchant-kit/index.ts";
import { PRICES } from "../prices.ts";
import { ICON_LICENSE, ICON_STYLES, iconIndex, MAX_QUERY_LENGTH, searchIcons } from "./icon-index.ts";

export const MAX_LIMIT = 50;

const SearchInput = z.object({
  q: z
    .string()
    .trim()
    .min(1, "q: a keyword is required")
    .max(MAX_QUERY_LENGTH)
    .describe(
      `Keyword or short phrase, e.g. "house", "arrow up", "github" (1-${MAX_QUERY_LENGTH} characters). Matched against icon names, aliases, search terms and labels; small typos still match.`,
    ),
  style: z
    .enum(ICON_STYLES)
    .optional()
    .describe("Only icons available in this style: solid, regular or brands. Default: any style."),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_LIMIT)
    .default(10)
    .describe(`How many icons to return, 1-${MAX_LIMIT}. Default 10.`),
});

const IconMatch = z.object({
  name: z.string().describe("The icon's name: pass it as `name` to POST /api/icon/generate."),
  label: z.string().describe("Human-readable label."),
  styles: z.array(z.enum(ICON_STYLES)).describe("Free styles of this icon (pass one as `style`)."),
  terms: z.array(z.string()).describe("Font Awesome's search terms for the icon."),
  score: z
    .number()
    .describe(
      "Relevance, 0-100: 100 exact name, 95 alias, 80-90 name prefix, 70-75 name part, 60 exact term, 50-55 term prefix or word, 40-45 label, 35 name substring, 30-35 every word of the query matches, 10-20 fuzzy (typo).",
    ),
});

const SearchOutput = z.object({
  query: z.string(),
  style: z.enum(ICON_STYLES).nullable().describe("The style filter, or null."),
  total: z.number().int().describe("Icons that matched, before `limit`."),
  icons: z.array(IconMatch).describe("Best first; equal scores in name order."),
  icon_set: z.string().describe('The icon set and version, e.g. "Font Awesome Free 7.3.1".'),
  license: z.object({ name: z.string(), url: z.string(), attribution: z.string() }),
});

export const iconSearch = defineEndpoint({
  method: "GET",
  path: "/api/icon/search",
  price: PRICES["/api/icon/search"],
  description:
    "Ranked icons from Font Awesome Free (about 2,000 icons, CC BY 4.0) for a keyword `q`: names, styles (solid, regular, brands), search terms and a relevance score; optional style filter and limit (1-50, default 10). Pass a returned name to POST /api/icon/generate.",
  input: SearchInput,
  output: SearchOutput,
  example: {
    input: { q: "house", limit: 2 },
    output: {
      query: "house",
      style: null,
      total: 38,
      icons: [
        {
          name: "house",
          label: "House",
          styles: ["solid", "regular"],
          terms: [
            "abode",
            "building",
            "domicile",
            "dwelling",
            "home",
            "house",
            "living place",
            "main",
            "property",
            "real estate",
            "residence",
            "shelter",
          ],
          score: 100,
        },
        {
          name: "house-fire",
          label: "House Fire",
          styles: ["solid"],
          terms: [
            "alarm",
            "blaze",
            "burning",
            "disaster",
            "emergency",
            "fire",
            "hazard",
            "home",
            "house",
            "rescue",
            "smoke",
          ],
          score: 85,
        },
      ],
      icon_set: "Font Awesome Free 7.3.1",
      license: { ...ICON_LICENSE },
    },
  },
  timeoutMs: 10_000,
  handler: async ({ q, style, limit }) => {
    const index = iconIndex();
    const { total, icons } = searchIcons(q, { style, limit }, index);
    return {
      query: q,
      style: style ?? null,
      total,
      icons,
      icon_set: `Font Awesome Free ${index.version}`,
      license: { ...ICON_LICENSE },
    };
  },
});
