/**
 * Photographs for the local engine. Traced like a logo, a photograph came out as thousands of specks with
 * holes between them: sensor noise and JPEG blocks split every smooth area into fragments, the tracer
 * dropped the small ones (`pathomit`) and left them transparent, and its palette came from 16 pixels on a
 * fixed grid. A photo-like image is therefore:
 *
 * 1. told apart from a drawing by how its colours spread (`looksLikePhoto`);
 * 2. downscaled to a working size and denoised with a 3x3 median (`preparePhoto`, sharp);
 * 3. quantised by k-means and despeckled (`quantize.ts`), then traced with the tolerances below, its shapes
 *    stacked largest first without holes, so whatever the tracer drops is covered by the shape beneath
 *    (`trace.ts`).
 *
 * The settings were chosen by measuring (bench/vectorize.ts `--sweep`; figures in README.md), not guessed.
 */
import type { RgbaImage } from "./bmp.ts";
import type { Detail } from "./drawing.ts";
import { loadSharp } from "./image.ts";

export interface PhotoSettings {
  /** Longest side traced (px); the vector keeps the image's size. */
  side: number;
  /** Median filter's window (px, odd), 0 for none. */
  median: number;
  /** Straight-line and curve error (px) allowed to the tracer. */
  ltres: number;
  qtres: number;
  /** Closed edges shorter than this (in edge points) are not drawn; the stacked shape beneath shows. */
  pathomit: number;
  /** Majority-filter passes over the quantised pixels. */
  despeckle: number;
}

/**
 * Per detail level, from bench/vectorize.ts `--sweep` on the generated photographs at 1600x1067 (mean SSIM,
 * paths, SVG size at 16 colours): `low` 0.90, 120 paths, 65 KB; `medium` 0.93, 260 paths, 150 KB; `high`
 * 0.94, 1,700 paths, 540 KB. The working side sets detail and cost together. A 5x5 median gave the same
 * SSIM as 3x3 with half the paths (specks it removes were noise); `high` keeps 3x3 for fine texture. Curve
 * tolerance 0.5 px against 1 px: +0.006 SSIM for 20% more bytes. Path omission (4 to 32 edge points) and
 * despeckling (0 to 2 passes) change SSIM by under 0.005 and the path count by 2x or more.
 */
export const PHOTO: Record<Detail, PhotoSettings> = {
  low: { side: 512, median: 5, ltres: 1, qtres: 1, pathomit: 16, despeckle: 1 },
  medium: { side: 768, median: 5, ltres: 0.5, qtres: 0.5, pathomit: 8, despeckle: 1 },
  high: { side: 1024, median: 3, ltres: 0.5, qtres: 0.5, pathomit: 4, despeckle: 1 },
};

/** Pixels sampled: a 256x256 grid at most. */
const SAMPLE = 65_536;
/**
 * A logo or line art, even saved as JPEG, is a few colours and their edges: the 16 most common colours
 * (5 bits a channel) cover 86 to 100% of its pixels (PNG, GIF, JPEG at quality 50 to 95, 96 to 1600 px).
 * A photograph spreads over many: 28 to 76%, whether saved as JPEG, as a noise-free PNG or with a
 * 256-colour palette (GIF), which a count of distinct colours alone would miss.
 */
export const PHOTO_MAX_DOMINANT = 0.8;
/**
 * Distinct exact colours in the sample that make an image a photograph even when a few colours dominate it
 * (up to `PHOTO_MAX_DOMINANT_MANY`): a narrow-palette photograph (sand, sky) with sensor noise. Photographs
 * not saved with a palette had 1,075 to 10,239; logos and line art 3 to 1,050 (the most: a JPEG logo at
 * quality 50 and 256 px, its ringing), but then with 93% or more in their 16 main colours.
 */
export const PHOTO_MIN_COLORS = 1024;
export const PHOTO_MAX_DOMINANT_MANY = 0.9;

/** What `looksLikePhoto` decides from, exported so the bench and tests can show it. */
export function photoSignals(image: RgbaImage): { opaque: boolean; colors: number; dominant: number } {
  const { width, height, data } = image;
  let opaque = true;
  for (let i = 3; i < data.length; i += 4) if ((data[i] as number) < 255) opaque = false;
  const step = Math.max(1, Math.ceil(Math.sqrt((width * height) / SAMPLE)));
  const seen = new Set<number>();
  const bins = new Uint32Array(32768);
  let sampled = 0;
  for (let y = 0; y < height; y += step) {
    for (let x = 0; x < width; x += step) {
      const at = (y * width + x) * 4;
      const r = data[at] as number;
      const g = data[at + 1] as number;
      const b = data[at + 2] as number;
      seen.add((r << 16) | (g << 8) | b);
      const bin = ((r >> 3) << 10) | ((g >> 3) << 5) | (b >> 3);
      bins[bin] = (bins[bin] as number) + 1;
      sampled++;
    }
  }
  const top = bins.sort().subarray(bins.length - 16);
  const dominant = top.reduce((sum, n) => sum + n, 0) / sampled;
  return { opaque, colors: seen.size, dominant };
}

/**
 * True when `image` is opaque and no small palette dominates it (a photograph, a rendering with gradients, a
 * photograph saved as GIF), or it has many colours and a small palette does not quite (a narrow-palette
 * photograph). An image with any transparent pixel is a graphic: its holes must stay holes.
 */
export function looksLikePhoto(image: RgbaImage): boolean {
  const { opaque, colors, dominant } = photoSignals(image);
  if (!opaque) return false;
  return dominant < PHOTO_MAX_DOMINANT || (colors >= PHOTO_MIN_COLORS && dominant < PHOTO_MAX_DOMINANT_MANY);
}

/** `image` downscaled to `settings.side` and median-filtered, RGBA. */
export async function preparePhoto(image: RgbaImage, settings: PhotoSettings): Promise<RgbaImage> {
  const { default: sharp } = await loadSharp();
  let pipeline = sharp(image.data, {
    raw: { width: image.width, height: image.height, channels: 4 },
  }).resize({ width: settings.side, height: settings.side, fit: "inside", withoutEnlargement: true });
  if (settings.median > 1) pipeline = pipeline.median(settings.median);
  const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
  return {
    width: info.width,
    height: info.height,
    data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  };
}
