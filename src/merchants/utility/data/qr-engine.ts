/**
 * QR codes with the `qrcode` library: one symbol, rendered as SVG and as a PNG with a whole number of pixels
 * per module. The asked `size` is rounded to the nearest multiple of the code's width with its quiet zone:
 * a fractional pitch (512 px over 181 modules is 2.83) draws modules 2 and 3 px wide alternately, and
 * decoders lose long payloads (issue 21). The library picks the smallest version (1-40) and the densest
 * modes (numeric, alphanumeric, byte as UTF-8) for the data; its capacity depends on the error correction
 * level.
 */
import QRCode from "qrcode";
import { BadInputError } from "../../../common/errors.ts";
import { contrastRatio, parseColor, type Rgba } from "./contrast-engine.ts";

export const ECC_LEVELS = ["L", "M", "Q", "H"] as const;
export type Ecc = (typeof ECC_LEVELS)[number];

export const MIN_SIZE = 64;
export const MAX_SIZE = 2048;
export const MAX_MARGIN = 16;
/** Most characters a QR code holds at all (numeric data, level L); the level's real capacity is checked too. */
export const MAX_DATA_LENGTH = 7089;
/** Bytes of arbitrary (byte mode) data one code holds at each level, version 40: for the error message. */
export const BYTE_CAPACITY: Record<Ecc, number> = { L: 2953, M: 2331, Q: 1663, H: 1273 };
/** Below this contrast between the two colours, scanners fail: refused rather than sold unreadable. */
export const MIN_COLOR_CONTRAST = 2;
/** #rgb, #rgba, #rrggbb or #rrggbbaa, the "#" optional (it must be escaped as %23 in a URL). */
export const HEX_COLOR = /^#?([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/i;

export interface QrOptions {
  size: number;
  margin: number;
  ecc: Ecc;
  dark: string;
  light: string;
}

export interface QrResult {
  data: string;
  /** QR version (1-40): the symbol is 17 + 4 x version modules wide. */
  version: number;
  modules: number;
  ecc: Ecc;
  /** The image's actual width in pixels: `module_px` x (modules + 2 x margin), nearest to the asked size. */
  size: number;
  /** Pixels per module, a whole number. */
  module_px: number;
  margin: number;
  dark: string;
  light: string;
  svg: string;
  png_base64: string;
  data_uri: string;
}

/** "#rgb"-style input as the "#rrggbbaa" the library takes. */
export function normalizeHex(input: string, name: string): string {
  if (!HEX_COLOR.test(input))
    throw new BadInputError(`${name}: "${input}" is not a hex colour like #000000`, "invalid_color");
  let hex = input.replace(/^#/, "").toLowerCase();
  if (hex.length <= 4) hex = [...hex].map((c) => c + c).join("");
  return `#${hex.length === 6 ? `${hex}ff` : hex}`;
}

const overWhite = (c: Rgba): Rgba => ({
  ...c,
  r: c.alpha * c.r + 1 - c.alpha,
  g: c.alpha * c.g + 1 - c.alpha,
  b: c.alpha * c.b + 1 - c.alpha,
  alpha: 1,
});

/**
 * The whole pitch nearest to `asked / span` and the size it gives, for a code `span` modules wide with its
 * margin. Below one pixel per module the code cannot be drawn, so that is refused with the smallest size
 * that works; above MAX_SIZE the pitch steps down (span is at most 177 + 2 x 16 = 209, so it stays >= 1).
 */
export function fitSize(asked: number, span: number): { size: number; module_px: number } {
  if (asked < span) {
    throw new BadInputError(
      `size ${asked} is too small for this code: it is ${span} modules wide with its margin, so the smallest size is ${span} (1 px per module; ${2 * span} gives 2 px, easier to scan)`,
      "size_too_small",
    );
  }
  let module_px = Math.round(asked / span);
  if (module_px * span > MAX_SIZE) module_px = Math.floor(MAX_SIZE / span);
  return { size: module_px * span, module_px };
}

/**
 * Checks everything about a request that can be checked without rendering: colours, their contrast, that
 * the data fits the level and that `size` holds every module and the quiet zone in at least one pixel.
 * Returns the symbol's version, width in modules and the image's actual size and pitch.
 */
export function planQr(
  data: string,
  options: QrOptions,
): { version: number; modules: number; size: number; module_px: number; dark: string; light: string } {
  const dark = normalizeHex(options.dark, "dark");
  const light = normalizeHex(options.light, "light");
  const ratio = contrastRatio(overWhite(parseColor(dark)), overWhite(parseColor(light)));
  if (ratio < MIN_COLOR_CONTRAST) {
    throw new BadInputError(
      `dark and light have a contrast of ${ratio.toFixed(2)}:1; scanners need at least ${MIN_COLOR_CONTRAST}:1`,
      "invalid_color",
    );
  }
  let symbol: QRCode.QRCode;
  try {
    symbol = QRCode.create(data, { errorCorrectionLevel: options.ecc });
  } catch {
    throw new BadInputError(
      `the data does not fit in a QR code at level ${options.ecc} (at most ${BYTE_CAPACITY[options.ecc]} bytes of text, more for digits only; a lower ecc holds more)`,
      "data_too_long",
    );
  }
  const modules = symbol.modules.size;
  const { size, module_px } = fitSize(options.size, modules + 2 * options.margin);
  return { version: symbol.version, modules, size, module_px, dark, light };
}

/**
 * Renders the code as SVG and PNG, `size` x `size` pixels with `module_px` per module. The library takes a
 * width that is a whole multiple as that exact scale; its SVG's viewBox is in modules (integer coordinates),
 * so it stays crisp at any display size.
 */
export async function renderQr(data: string, options: QrOptions): Promise<QrResult> {
  const { version, modules, size, module_px, dark, light } = planQr(data, options);
  const common = {
    errorCorrectionLevel: options.ecc,
    margin: options.margin,
    width: size,
    color: { dark, light },
  };
  const [svg, png] = await Promise.all([
    QRCode.toString(data, { ...common, type: "svg" }),
    QRCode.toBuffer(data, { ...common, type: "png" }),
  ]);
  const png_base64 = png.toString("base64");
  return {
    data,
    version,
    modules,
    ecc: options.ecc,
    size,
    module_px,
    margin: options.margin,
    dark,
    light,
    svg,
    png_base64,
    data_uri: `data:image/png;base64,${png_base64}`,
  };
}
