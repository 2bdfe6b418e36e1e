import { z } from "zod";
import { defineEndpoint } from "../../../merchant-kit/index.ts";
import { PRICES } from "../prices.ts";
import {
  BYTE_CAPACITY,
  ECC_LEVELS,
  HEX_COLOR,
  MAX_DATA_LENGTH,
  MAX_MARGIN,
  MAX_SIZE,
  MIN_SIZE,
  planQr,
  renderQr,
} from "./qr-engine.ts";

const hex = (what: string, fallback: string) =>
  z
    .string()
    .regex(HEX_COLOR, "a hex colour like #000000 (#rgb, #rrggbb or #rrggbbaa; write # as %23)")
    .default(fallback)
    .describe(`${what} colour, hex #rgb, #rrggbb or #rrggbbaa; the "#" may be omitted. Default ${fallback}.`);

/**
 * `data`'s length as it travels in the URL: a byte of UTF-8 other than A-Z a-z 0-9 - . _ counts 3, the
 * most it takes percent-encoded, whether the client writes a space as %20 or +. The limit is on this
 * length, not on characters: a paid GET carries its URL twice (request line, and `PAYMENT-SIGNATURE`), and
 * the 402's `PAYMENT-REQUIRED` carries it once, base64, beside the endpoint's schemas. At 7,089 the 402's
 * headers stay within the 16 KiB that Node's fetch (undici) accepts by default; 2,953 bytes of non-ASCII
 * text, 8,859 characters percent-encoded, made a 402 the buyer's fetch could not read (issue 69).
 */
export function urlLength(data: string): number {
  let length = 0;
  for (const byte of Buffer.from(data, "utf8"))
    length += /[A-Za-z0-9._-]/.test(String.fromCharCode(byte)) ? 1 : 3;
  return length;
}

const n = (x: number) => x.toLocaleString("en-US");

/** The documented names (docs/platform.md): data, size, margin, ecc, dark, light. */
const QrInput = z
  .object({
    data: z
      .string()
      .min(1)
      .max(MAX_DATA_LENGTH)
      .describe(
        `Text or URL to encode, at most ${n(MAX_DATA_LENGTH)} characters as it travels in the URL (percent-encoded: every byte of UTF-8 other than A-Z a-z 0-9 - . _ counts 3). Capacity depends on ecc: up to ${n(BYTE_CAPACITY.M)} bytes of text at M (${n(BYTE_CAPACITY.L)} at L, ${n(BYTE_CAPACITY.Q)} at Q, ${n(BYTE_CAPACITY.H)} at H), more for digits only.`,
      ),
    size: z.coerce
      .number()
      .int()
      .min(MIN_SIZE)
      .max(MAX_SIZE)
      .default(512)
      .describe(
        `Wanted width and height of the PNG (and SVG) in pixels, ${MIN_SIZE}-${MAX_SIZE}. Default 512. Rounded to the nearest whole number of pixels per module (see size and module_px in the answer); a size under 1 px per module is refused with the smallest that works.`,
      ),
    margin: z.coerce
      .number()
      .int()
      .min(0)
      .max(MAX_MARGIN)
      .default(2)
      .describe(
        `Quiet zone around the code, in modules, 0-${MAX_MARGIN}. Default 2 (4 is the standard's minimum for print).`,
      ),
    ecc: z
      .enum(ECC_LEVELS)
      .default("M")
      .describe("Error correction level: L (7%), M (15%), Q (25%), H (30%). Default M."),
    dark: hex("Module", "#000000"),
    light: hex("Background", "#ffffff"),
  })
  .superRefine((q, ctx) => {
    const inUrl = urlLength(q.data);
    if (inUrl > MAX_DATA_LENGTH) {
      ctx.addIssue({
        code: "custom",
        path: ["data"],
        message: `data is ${n(inUrl)} characters percent-encoded in the URL; the limit is ${n(MAX_DATA_LENGTH)}`,
      });
      return;
    }
    // Capacity, size and colour contrast are checked before any payment is asked for.
    try {
      planQr(q.data, q);
    } catch (error) {
      ctx.addIssue({ code: "custom", path: [], message: (error as Error).message });
    }
  });

const QrOutput = z.object({
  data: z.string().describe("The encoded text."),
  version: z.number().int().describe("QR version, 1-40."),
  modules: z.number().int().describe("Width of the symbol in modules, without the margin."),
  ecc: z.enum(ECC_LEVELS),
  size: z
    .number()
    .int()
    .describe(
      "Actual width and height of the image in pixels: module_px x (modules + 2 x margin), nearest to the asked size.",
    ),
  module_px: z
    .number()
    .int()
    .describe("Pixels per module, a whole number so that every module is drawn alike."),
  margin: z.number().int(),
  dark: z.string().describe("#rrggbbaa."),
  light: z.string().describe("#rrggbbaa."),
  svg: z.string().describe("The code as an SVG document."),
  png_base64: z.string().describe("The code as a PNG, base64."),
  data_uri: z.string().describe("The PNG as a data: URI, usable as an <img> src."),
});

export const qr = defineEndpoint({
  method: "GET",
  path: "/api/qr",
  price: PRICES["/api/qr"],
  description:
    "QR code for a text or URL as SVG, PNG (base64) and a data: URI; options size (px, default 512), margin (modules, default 2), ecc (L/M/Q/H, default M), dark and light hex colours. The size is rounded to the nearest whole number of pixels per module (at most 2048 px), so long payloads stay readable; a size below 1 px per module gets a 400 naming the smallest size that works.",
  input: QrInput,
  output: QrOutput,
  example: {
    input: { data: "https://example.com", size: 128 },
    output: {
      data: "https://example.com",
      version: 2,
      modules: 25,
      ecc: "M",
      size: 116,
      module_px: 4,
      margin: 2,
      dark: "#000000ff",
      light: "#ffffffff",
      svg: '<svg xmlns="http://www.w3.org/2000/svg" width="116" height="116" viewBox="0 0 29 29" shape-rendering="crispEdges">...</svg>',
      png_base64: "iVBORw0KGgo...",
      data_uri: "data:image/png;base64,iVBORw0KGgo...",
    },
  },
  timeoutMs: 10_000,
  handler: async ({ data, ...options }) => renderQr(data, options),
});
