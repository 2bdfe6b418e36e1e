/**
 * WCAG 2.x contrast: relative luminance with the sRGB transfer function and (L1 + 0.05) / (L2 + 0.05).
 * Pass/fail is decided on the exact ratio, never the rounded one: #777 on white is 4.478..., shown as 4.48
 * by every checker, and fails AA for normal text (4.5).
 * https://www.w3.org/TR/WCAG22/#dfn-contrast-ratio
 */
import { converter, formatHex, formatHex8, parse } from "culori";
import { BadInputError } from "../../../common/errors.ts";

/** An sRGB colour, channels and alpha in 0..1 (gamma-encoded, as CSS writes them). */
export interface Rgba {
  r: number;
  g: number;
  b: number;
  alpha: number;
}

/** WCAG 2.x thresholds: 1.4.3 (AA), 1.4.6 (AAA), 1.4.11 (non-text, AA only). */
export const THRESHOLDS = {
  normal_text: { AA: 4.5, AAA: 7 },
  large_text: { AA: 3, AAA: 4.5 },
  ui_components: 3,
} as const;

const toRgb = converter("rgb");
/** Rounding error allowed when a colour space conversion lands a hair outside 0..1. */
const EPSILON = 1e-9;

/**
 * Parses a CSS colour: hex (#rgb, #rgba, #rrggbb, #rrggbbaa; the "#" may be left out, since it must be
 * escaped in a URL), rgb()/rgba(), hsl(), named colours and other CSS colour syntaxes culori knows, as long
 * as the colour lies inside sRGB (WCAG 2.x contrast is defined there only).
 */
export function parseColor(input: string, name = "colour"): Rgba {
  const text = input.trim();
  const hexOnly = /^([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/i.test(text);
  const parsed = parse(hexOnly ? `#${text}` : text);
  if (!parsed) {
    throw new BadInputError(
      `${name}: "${input}" is not a colour (use #rrggbb, #rgb, rgb(r, g, b) or a CSS name)`,
      "invalid_color",
    );
  }
  const rgb = toRgb(parsed);
  const channels = [rgb.r, rgb.g, rgb.b];
  if (channels.some((c) => !Number.isFinite(c) || c < -EPSILON || c > 1 + EPSILON)) {
    throw new BadInputError(`${name}: "${input}" lies outside the sRGB gamut`, "invalid_color");
  }
  const clamp = (c: number) => Math.min(1, Math.max(0, c));
  return { r: clamp(rgb.r), g: clamp(rgb.g), b: clamp(rgb.b), alpha: clamp(rgb.alpha ?? 1) };
}

/** Source-over compositing of `top` on an opaque `bottom`, per channel on the encoded values, as browsers do. */
export function composite(top: Rgba, bottom: Rgba): Rgba {
  const a = top.alpha;
  const mix = (t: number, b: number) => a * t + (1 - a) * b;
  return { r: mix(top.r, bottom.r), g: mix(top.g, bottom.g), b: mix(top.b, bottom.b), alpha: 1 };
}

/** sRGB decoding (IEC 61966-2-1); WCAG's older 0.03928 knee gives the same result for every 8-bit value. */
function linear(c: number): number {
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
}

export function relativeLuminance(c: Rgba): number {
  return 0.2126 * linear(c.r) + 0.7152 * linear(c.g) + 0.0722 * linear(c.b);
}

export function contrastRatio(a: Rgba, b: Rgba): number {
  const [hi, lo] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

const WHITE: Rgba = { r: 1, g: 1, b: 1, alpha: 1 };

export interface ContrastResult {
  /** Rounded to 2 decimals, for display. */
  contrast_ratio: number;
  /** Unrounded: the value pass/fail is decided on. */
  contrast_ratio_exact: number;
  ratio_string: string;
  foreground: string;
  background: string;
  /** The colours actually compared, after compositing, as #rrggbb. */
  effective_foreground: string;
  effective_background: string;
  luminance: { foreground: number; background: number };
  passes: {
    normal_text: { AA: boolean; AAA: boolean };
    large_text: { AA: boolean; AAA: boolean };
    ui_components: boolean;
  };
}

const hexOf = (c: Rgba) =>
  c.alpha < 1 ? formatHex8({ mode: "rgb", ...c }) : formatHex({ mode: "rgb", ...c });

/**
 * The contrast of a foreground on a background. A semi-transparent background is first composited over
 * white (the default page canvas), then a semi-transparent foreground over that background: the colours a
 * reader sees.
 * @example contrast("#777", "#fff").passes.normal_text.AA === false // 4.48:1
 */
export function contrast(foreground: string, background: string): ContrastResult {
  const fg = parseColor(foreground, "foreground");
  const bg = parseColor(background, "background");
  const effectiveBg = composite(bg, WHITE);
  const effectiveFg = composite(fg, effectiveBg);
  const ratio = contrastRatio(effectiveFg, effectiveBg);
  const rounded = Math.round(ratio * 100) / 100;
  return {
    contrast_ratio: rounded,
    contrast_ratio_exact: ratio,
    ratio_string: `${rounded}:1`,
    foreground: hexOf(fg),
    background: hexOf(bg),
    effective_foreground: formatHex({ mode: "rgb", ...effectiveFg }),
    effective_background: formatHex({ mode: "rgb", ...effectiveBg }),
    luminance: { foreground: relativeLuminance(effectiveFg), background: relativeLuminance(effectiveBg) },
    passes: {
      normal_text: { AA: ratio >= THRESHOLDS.normal_text.AA, AAA: ratio >= THRESHOLDS.normal_text.AAA },
      large_text: { AA: ratio >= THRESHOLDS.large_text.AA, AAA: ratio >= THRESHOLDS.large_text.AAA },
      ui_components: ratio >= THRESHOLDS.ui_components,
    },
  };
}
