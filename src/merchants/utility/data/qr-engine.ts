/**
 * QR codes with the `qrcode` library: one symbol, rendered as SVG and as a PNG of exactly `size` pixels.
 * The library picks the smallest version (1-40) and the densest modes (numeric, alphanumeric, byte as
 * UTF-8) for the data; its capacity depends on the error correction level.
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
  size: number;
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
 * Checks everything about a request that can be checked without rendering: colours, their contrast, that
 * the data fits the level and that `size` holds every module and the quiet zone in at least one pixel.
 * Returns the symbol's version and width in modules.
 */
export function planQr(
  data: string,
  options: QrOptions,
): { version: number; modules: number; dark: string; light: string } {
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
  const needed = modules + 2 * options.margin;
  if (options.size < needed) {
    throw new BadInputError(
      `size ${options.size} is too small for this code: it is ${needed} modules wide with its margin`,
      "size_too_small",
    );
  }
  return { version: symbol.version, modules, dark, light };
}

/** Renders the code as SVG and PNG (`size` x `size` pixels; modules scaled nearest-neighbour). */
export async function renderQr(data: string, options: QrOptions): Promise<QrResult> {
  const { version, modules, dark, light } = planQr(data, options);
  const common = {
    errorCorrectionLevel: options.ecc,
    margin: options.margin,
    width: options.size,
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
    size: options.size,
    margin: options.margin,
    dark,
    light,
    svg,
    png_base64,
    data_uri: `data:image/png;base64,${png_base64}`,
  };
}
