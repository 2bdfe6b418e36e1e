/**
 * Renders one Font Awesome Free glyph as a standalone SVG (its own viewBox, the path filled with the
 * chosen colour, an optional background rectangle, Font Awesome's licence comment kept) and, on request,
 * as a PNG rasterised by resvg.
 *
 * `size` is the icon's height in pixels, as a font size would be: Font Awesome draws every glyph 512 units
 * high and as wide as it needs (from 128 to 640 units), so the width is `size * width / 512`, rounded
 * (a 640-unit-wide icon at size 128 is 160 x 128). Nothing is stretched or padded.
 */
import { createRequire } from "node:module";
import type { Resvg as ResvgClass } from "@resvg/resvg-js";
import { BadInputError, NotFoundError } from "../../../common/errors.ts";
import { onFirstUse } from "../lazy.ts";
import { findIcon, type Icon, type IconIndex, type IconStyle, iconIndex } from "./icon-index.ts";

// Loaded by the first PNG (CommonJS only: the file a static import loads too).
const resvg = onFirstUse(
  () => createRequire(import.meta.url)("@resvg/resvg-js") as { Resvg: typeof ResvgClass },
);

export const MIN_ICON_SIZE = 16;
export const MAX_ICON_SIZE = 1024;
export const ICON_FORMATS = ["svg", "png"] as const;
export type IconFormat = (typeof ICON_FORMATS)[number];
/** #rgb, #rgba, #rrggbb or #rrggbbaa; the "#" optional. */
export const HEX_COLOR = /^#?([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/i;

export interface IconRenderOptions {
  style: IconStyle;
  size: number;
  color: string;
  /** A hex colour, or "transparent" (the default). */
  background: string;
  format: IconFormat;
}

export interface RenderedIcon {
  name: string;
  style: IconStyle;
  format: IconFormat;
  svg?: string;
  png_base64?: string;
  data_uri: string;
  width: number;
  height: number;
  color: string;
  background: string;
  license: string;
}

/** A hex colour as `{hex: "#rrggbb", opacity}` (opacity 0-1 from the alpha digits, 1 without them). */
export function parseHexColor(input: string, name: string): { hex: string; opacity: number } {
  if (!HEX_COLOR.test(input))
    throw new BadInputError(`${name}: "${input}" is not a hex colour like #000000`, "invalid_color");
  let digits = input.replace(/^#/, "").toLowerCase();
  if (digits.length <= 4) digits = [...digits].map((c) => c + c).join("");
  const opacity = digits.length === 8 ? Number.parseInt(digits.slice(6), 16) / 255 : 1;
  return { hex: `#${digits.slice(0, 6)}`, opacity: Math.round(opacity * 1000) / 1000 };
}

function paint(name: string, color: { hex: string; opacity: number }): string {
  return color.opacity < 1
    ? `${name}="${color.hex}" ${name}-opacity="${color.opacity}"`
    : `${name}="${color.hex}"`;
}

/** Resolves name and style, or throws the error a caller should see. */
export function resolveIcon(name: string, style: IconStyle, index: IconIndex = iconIndex()): Icon {
  const icon = findIcon(name, index);
  if (!icon)
    throw new NotFoundError(
      `no icon named "${name}" in Font Awesome Free ${index.version}; find names with GET /api/icon/search`,
      "unknown_icon",
    );
  if (!icon.glyphs[style])
    throw new BadInputError(
      `icon "${icon.name}" has no ${style} style; it has ${icon.styles.join(", ")}`,
      "unknown_style",
    );
  return icon;
}

/** Renders an icon (by name or alias) in the given style, size and colours. */
export function renderIcon(
  name: string,
  options: IconRenderOptions,
  index: IconIndex = iconIndex(),
): RenderedIcon {
  const icon = resolveIcon(name, options.style, index);
  const glyph = icon.glyphs[options.style];
  if (!glyph) throw new BadInputError(`icon "${icon.name}" has no ${options.style} style`, "unknown_style");
  if (!Number.isInteger(options.size) || options.size < MIN_ICON_SIZE || options.size > MAX_ICON_SIZE)
    throw new BadInputError(
      `size must be an integer from ${MIN_ICON_SIZE} to ${MAX_ICON_SIZE}`,
      "invalid_size",
    );
  const color = parseHexColor(options.color, "color");
  const transparent = options.background.toLowerCase() === "transparent";
  const background = transparent ? undefined : parseHexColor(options.background, "background");

  const [minX, minY, vbWidth, vbHeight] = glyph.viewBox;
  const height = options.size;
  const width = Math.max(1, Math.round((options.size * vbWidth) / vbHeight));
  const svg = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="${glyph.viewBox.join(" ")}" width="${width}" height="${height}">`,
    index.licenseComment,
    background
      ? `<rect x="${minX}" y="${minY}" width="${vbWidth}" height="${vbHeight}" ${paint("fill", background)}/>`
      : "",
    `<path ${paint("fill", color)} d="${glyph.path}"/>`,
    "</svg>",
  ].join("");

  const common = {
    name: icon.name,
    style: options.style,
    format: options.format,
    width,
    height,
    color: color.hex + (color.opacity < 1 ? alphaHex(color.opacity) : ""),
    background: background
      ? background.hex + (background.opacity < 1 ? alphaHex(background.opacity) : "")
      : "transparent",
    license: "Font Awesome Free, CC BY 4.0 (https://fontawesome.com/license/free)",
  };
  if (options.format === "svg") {
    return { ...common, svg, data_uri: `data:image/svg+xml;base64,${Buffer.from(svg).toString("base64")}` };
  }
  const { Resvg } = resvg();
  const png = new Resvg(svg, {
    fitTo: { mode: "width", value: width },
    font: { loadSystemFonts: false },
  })
    .render()
    .asPng();
  const base64 = Buffer.from(png).toString("base64");
  return { ...common, png_base64: base64, data_uri: `data:image/png;base64,${base64}` };
}

function alphaHex(opacity: number): string {
  return Math.round(opacity * 255)
    .toString(16)
    .padStart(2, "0");
}
