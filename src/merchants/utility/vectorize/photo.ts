/**
 * Photographs for the local engine. Traced like a logo, a photograph came out as thousands of specks with
 * holes between them: sensor noise and JPEG blocks split every smooth area into fragments, the tracer
 * dropped the small ones (`pathomit`) and left them transparent, and its palette came from 16 pixels on a
 * fixed grid. A photo-like image is therefore:
 *
 * 1. told apart from a drawing by its colours (`looksLikePhoto`);
 * 2. downscaled to a working size and denoised with a 3x3 median (`preparePhoto`, sharp);
 * 3. quantised by k-means and despeckled (`quantize.ts`), then traced with the tolerances below, its shapes
 *    stacked largest first without holes, so whatever the tracer drops is covered by the shape beneath
 *    (`trace.ts`).
 *
 * The settings were chosen by measuring (bench/vectorize.ts `--sweep`; figures in README.md), not guessed.
 */
import type { RgbaImage } from "./bmp.ts";
import { loadSharp } from "./image.ts";
import type { Detail } from "./trace.ts";

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

/** Pixels sampled to count colours: a 256x256 grid at most. */
const SAMPLE = 65_536;
/**
 * Distinct colours in the sample above which an image is a photograph. Measured on the generated set: the
 * photographs have 1,650 to 11,600 (noise-free renderings included), logos and line art 3 to 505 (JPEG at
 * quality 75 included).
 */
export const PHOTO_MIN_COLORS = 1024;

/**
 * True when `image` is opaque and has many colours: a photograph or a rendering with gradients. An image with
 * any transparent pixel is a graphic (its holes must stay holes).
 */
export function looksLikePhoto(image: RgbaImage): boolean {
  const { width, height, data } = image;
  for (let i = 3; i < data.length; i += 4) if ((data[i] as number) < 255) return false;
  const step = Math.max(1, Math.ceil(Math.sqrt((width * height) / SAMPLE)));
  const seen = new Set<number>();
  for (let y = 0; y < height; y += step) {
    for (let x = 0; x < width; x += step) {
      const at = (y * width + x) * 4;
      seen.add(((data[at] as number) << 16) | ((data[at + 1] as number) << 8) | (data[at + 2] as number));
      if (seen.size >= PHOTO_MIN_COLORS) return true;
    }
  }
  return false;
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
