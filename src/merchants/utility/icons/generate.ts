import { z } from "zod";
import { defineEndpoint } from "../../../merchant-kit/index.ts";
import { PRICES } from "../prices.ts";
import { ICON_STYLES } from "./icon-index.ts";
import {
  HEX_COLOR,
  ICON_FORMATS,
  MAX_ICON_SIZE,
  MIN_ICON_SIZE,
  renderIcon,
  resolveIcon,
} from "./icon-render.ts";

const GenerateInput = z
  .object({
    name: z
      .string()
      .trim()
      .min(1)
      .max(64)
      .describe(
        'Icon name as returned by GET /api/icon/search, e.g. "house" (older Font Awesome names such as "home" are accepted and answered with the current name).',
      ),
    style: z
      .enum(ICON_STYLES)
      .default("solid")
      .describe(
        "solid, regular or brands; must be one of the icon's `styles` from the search. Default solid.",
      ),
    size: z
      .number()
      .int()
      .min(MIN_ICON_SIZE)
      .max(MAX_ICON_SIZE)
      .default(128)
      .describe(
        `Height in pixels, ${MIN_ICON_SIZE}-${MAX_ICON_SIZE}, default 128. The width follows the icon's own proportions (most are square or narrower; a few are up to 1.25 times wider).`,
      ),
    color: z
      .string()
      .regex(HEX_COLOR, "a hex colour like #000000")
      .default("#000000")
      .describe("Fill colour, hex #rgb, #rrggbb or #rrggbbaa. Default #000000."),
    background: z
      .string()
      .regex(/^(transparent|#?([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8}))$/i, 'a hex colour or "transparent"')
      .default("transparent")
      .describe('Background fill of the whole image: a hex colour or "transparent" (default).'),
    format: z
      .enum(ICON_FORMATS)
      .default("svg")
      .describe("svg (the SVG document in `svg`) or png (rendered, base64 in `png_base64`). Default svg."),
  })
  .superRefine((body, ctx) => {
    // Unknown icons and styles are refused before any payment is asked for.
    try {
      resolveIcon(body.name, body.style);
    } catch (error) {
      ctx.addIssue({ code: "custom", path: [], message: (error as Error).message });
    }
  });

const GenerateOutput = z.object({
  name: z.string().describe("The icon's current name."),
  style: z.enum(ICON_STYLES),
  format: z.enum(ICON_FORMATS),
  svg: z.string().optional().describe("format svg: the SVG document, with Font Awesome's licence comment."),
  png_base64: z.string().optional().describe("format png: the PNG, base64."),
  data_uri: z.string().describe("The image as a data: URI, usable as an <img> src."),
  width: z.number().int().describe("Pixels."),
  height: z.number().int().describe("Pixels (= size)."),
  color: z.string().describe("#rrggbb or #rrggbbaa."),
  background: z.string().describe('#rrggbb, #rrggbbaa or "transparent".'),
  license: z.string().describe("Attribution: Font Awesome Free icons are CC BY 4.0."),
});

/**
 * The spec lists one price for the search row, which names this endpoint as its companion; it is sold at
 * the same price.
 */
export const iconGenerate = defineEndpoint({
  method: "POST",
  path: "/api/icon/generate",
  price: PRICES["/api/icon/search"],
  description:
    "One Font Awesome Free icon (CC BY 4.0), by the name GET /api/icon/search returns, as SVG or PNG: style (solid, regular, brands; default solid), size (height 16-1024 px, default 128), color (hex, default #000000), background (hex or transparent), format (svg or png, default svg); with a data: URI.",
  input: GenerateInput,
  output: GenerateOutput,
  example: {
    input: { name: "house", style: "solid", size: 64, color: "#1d4ed8", format: "svg" },
    output: {
      name: "house",
      style: "solid",
      format: "svg",
      svg: '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512" width="64" height="64"><!--! Font Awesome Free 7.3.1 ... --><path fill="#1d4ed8" d="M277.8 8.6c..."/></svg>',
      data_uri: "data:image/svg+xml;base64,PHN2ZyB4bWxucz0...",
      width: 64,
      height: 64,
      color: "#1d4ed8",
      background: "transparent",
      license: "Font Awesome Free, CC BY 4.0 (https://fontawesome.com/license/free)",
    },
  },
  timeoutMs: 10_000,
  handler: async ({ name, ...options }) => renderIcon(name, options),
});
