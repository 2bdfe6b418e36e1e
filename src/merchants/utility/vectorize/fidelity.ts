/**
 * How close a vector is to the image it was traced from: the SVG rasterised (resvg) at the reference's size and
 * compared pixel by pixel. Two figures, because they see different faults:
 *
 * - **SSIM** (structural similarity, ssim.js with its defaults: Wang et al.'s 11 px window on luminance, images
 *   whose short side is above 384 px averaged down first as the reference MATLAB code does). 1 is identical;
 *   it punishes lost edges and texture, and forgives a uniform shift of colour.
 * - **Mean absolute error** of the R, G and B channels, in 8-bit levels (0 to 255). It punishes wrong colours
 *   and holes (a region left undrawn shows white), which SSIM on luminance alone can miss.
 *
 * Both images are flattened on white first, as a viewer shows them.
 *
 * @example
 * const reference = await decodeImage(bytes, Number.POSITIVE_INFINITY);
 * const { ssim, meanAbsError } = fidelity(svg, reference);
 */
import { createRequire } from "node:module";
import { onFirstUse } from "../lazy.ts";
import type { RgbaImage } from "./bmp.ts";
import { rasterize } from "./render.ts";

const require = createRequire(import.meta.url);
const ssimJs = onFirstUse(() => require("ssim.js") as typeof import("ssim.js"));

export interface Fidelity {
  /** Mean SSIM, -1 to 1 (1 = identical). */
  ssim: number;
  /** Mean absolute difference per RGB channel, 0 to 255. */
  meanAbsError: number;
}

/** RGBA composited on white, alpha left at 255. */
function onWhite(data: Uint8Array): Uint8ClampedArray {
  const out = new Uint8ClampedArray(data.length);
  for (let i = 0; i < data.length; i += 4) {
    const a = (data[i + 3] as number) / 255;
    out[i] = (data[i] as number) * a + 255 * (1 - a);
    out[i + 1] = (data[i + 1] as number) * a + 255 * (1 - a);
    out[i + 2] = (data[i + 2] as number) * a + 255 * (1 - a);
    out[i + 3] = 255;
  }
  return out;
}

/** Compares `svg`, rasterised at `reference.width`, with `reference` (RGBA). */
export function fidelity(svg: string, reference: RgbaImage): Fidelity {
  const drawn = rasterize(svg, reference.width);
  // A reference downscaled from the vector's size may round its height the other way: compare the common rows.
  if (Math.abs(drawn.height - reference.height) > 1)
    throw new Error(
      `the SVG rasterises to ${drawn.width}x${drawn.height}, not ${reference.width}x${reference.height}`,
    );
  const width = reference.width;
  const height = Math.min(drawn.height, reference.height);
  const a = onWhite(reference.data.subarray(0, width * height * 4));
  const b = onWhite(drawn.data.subarray(0, width * height * 4));
  let error = 0;
  for (let i = 0; i < a.length; i += 4)
    error +=
      Math.abs((a[i] as number) - (b[i] as number)) +
      Math.abs((a[i + 1] as number) - (b[i + 1] as number)) +
      Math.abs((a[i + 2] as number) - (b[i + 2] as number));
  const { mssim } = ssimJs().ssim({ data: a, width, height }, { data: b, width, height });
  return { ssim: mssim, meanAbsError: error / ((a.length / 4) * 3) };
}
