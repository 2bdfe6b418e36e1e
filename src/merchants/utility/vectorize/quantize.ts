/**
 * Palette quantisation for photographs: at most `colors` colours chosen from the image by k-means, and every
 * pixel replaced by its nearest. imagetracerjs's own quantiser starts k-means from a few pixels on a fixed
 * grid and runs three rounds, which leaves a photograph's palette on whatever colours those pixels happen to
 * have; sharp's libimagequant (`png({ palette })`) is good but only makes palettes of 2, 4, 16 or 256 colours.
 *
 * The k-means runs on a histogram (colours binned to 5 bits a channel, each bin its mean colour and its
 * pixel count), so its cost does not grow with the image: a 1024 px photograph has a few thousand occupied
 * bins after denoising. Seeding is deterministic (the heaviest bin, then each next the bin farthest from the
 * chosen ones, weighted by its count), so the same image always gives the same palette.
 */
import type { RgbaImage } from "./bmp.ts";

export interface PaletteColor {
  r: number;
  g: number;
  b: number;
  a: number;
}

/** Rounds of k-means at most; it usually settles sooner (no centre moves by more than a level). */
const MAX_ROUNDS = 16;

/** Squared distance with the usual perceptual weights (green counts most, blue least). */
const distance = (r1: number, g1: number, b1: number, r2: number, g2: number, b2: number) =>
  2 * (r1 - r2) ** 2 + 4 * (g1 - g2) ** 2 + 3 * (b1 - b2) ** 2;

const add = (array: Float64Array, at: number, value: number) => {
  array[at] = (array[at] as number) + value;
};

const binOf = (r: number, g: number, b: number) => ((r >> 3) << 10) | ((g >> 3) << 5) | (b >> 3);

/** An image as palette indices: `indices[y * width + x]` is the pixel's entry in `palette`. */
export interface IndexedImage {
  width: number;
  height: number;
  indices: Uint8Array;
  palette: PaletteColor[];
}

/**
 * Chooses at most `colors` (up to 256) colours for opaque `image` and maps every pixel to its nearest; every
 * palette entry is used by at least one pixel.
 */
export function quantize(image: RgbaImage, colors: number): IndexedImage {
  const { data } = image;
  const sums = new Float64Array(32768 * 3);
  const counts = new Float64Array(32768);
  for (let i = 0; i < data.length; i += 4) {
    const r = data[i] as number;
    const g = data[i + 1] as number;
    const b = data[i + 2] as number;
    const bin = binOf(r, g, b);
    add(sums, bin * 3, r);
    add(sums, bin * 3 + 1, g);
    add(sums, bin * 3 + 2, b);
    add(counts, bin, 1);
  }
  const bins: number[] = [];
  for (let bin = 0; bin < 32768; bin++) if ((counts[bin] as number) > 0) bins.push(bin);
  const n = bins.length;
  const colour = new Float64Array(n * 3);
  const weight = new Float64Array(n);
  bins.forEach((bin, i) => {
    const c = counts[bin] as number;
    weight[i] = c;
    colour[i * 3] = (sums[bin * 3] as number) / c;
    colour[i * 3 + 1] = (sums[bin * 3 + 1] as number) / c;
    colour[i * 3 + 2] = (sums[bin * 3 + 2] as number) / c;
  });
  const k = Math.min(colors, n);
  const centres = new Float64Array(k * 3);
  /** Distance from bin `i` to centre `c`. */
  const gap = (i: number, c: number) =>
    distance(
      colour[i * 3] as number,
      colour[i * 3 + 1] as number,
      colour[i * 3 + 2] as number,
      centres[c * 3] as number,
      centres[c * 3 + 1] as number,
      centres[c * 3 + 2] as number,
    );
  // Seeding: the heaviest bin, then the bin with the largest weight x distance to its nearest centre.
  const nearest = new Float64Array(n).fill(Number.POSITIVE_INFINITY);
  let pick = 0;
  for (let i = 1; i < n; i++) if ((weight[i] as number) > (weight[pick] as number)) pick = i;
  for (let c = 0; c < k; c++) {
    centres.set(colour.subarray(pick * 3, pick * 3 + 3), c * 3);
    let best = -1;
    for (let i = 0; i < n; i++) {
      const d = gap(i, c);
      if (d < (nearest[i] as number)) nearest[i] = d;
      const score = (nearest[i] as number) * (weight[i] as number);
      if (score > best) {
        best = score;
        pick = i;
      }
    }
  }
  const assignment = new Int32Array(n);
  const assign = () => {
    for (let i = 0; i < n; i++) {
      let bestCentre = 0;
      let bestDistance = Number.POSITIVE_INFINITY;
      for (let c = 0; c < k; c++) {
        const d = gap(i, c);
        if (d < bestDistance) {
          bestDistance = d;
          bestCentre = c;
        }
      }
      assignment[i] = bestCentre;
    }
  };
  for (let round = 0; round < MAX_ROUNDS; round++) {
    assign();
    const next = new Float64Array(k * 3);
    const mass = new Float64Array(k);
    for (let i = 0; i < n; i++) {
      const c = assignment[i] as number;
      const w = weight[i] as number;
      add(mass, c, w);
      add(next, c * 3, (colour[i * 3] as number) * w);
      add(next, c * 3 + 1, (colour[i * 3 + 1] as number) * w);
      add(next, c * 3 + 2, (colour[i * 3 + 2] as number) * w);
    }
    let moved = 0;
    for (let c = 0; c < k; c++) {
      const m = mass[c] as number;
      // An empty cluster keeps its centre (a seed is a real colour, so this is rare).
      if (m === 0) continue;
      for (let j = 0; j < 3; j++) {
        const value = (next[c * 3 + j] as number) / m;
        moved = Math.max(moved, Math.abs(value - (centres[c * 3 + j] as number)));
        centres[c * 3 + j] = value;
      }
    }
    if (moved < 1) break;
  }
  assign();
  const palette: PaletteColor[] = [];
  const index = new Int32Array(k).fill(-1);
  const binToPalette = new Int32Array(32768);
  bins.forEach((bin, i) => {
    const c = assignment[i] as number;
    if (index[c] === -1) {
      index[c] = palette.length;
      palette.push({
        r: Math.round(centres[c * 3] as number),
        g: Math.round(centres[c * 3 + 1] as number),
        b: Math.round(centres[c * 3 + 2] as number),
        a: 255,
      });
    }
    binToPalette[bin] = index[c] as number;
  });
  const indices = new Uint8Array(data.length / 4);
  for (let i = 0; i < indices.length; i++)
    indices[i] = binToPalette[
      binOf(data[i * 4] as number, data[i * 4 + 1] as number, data[i * 4 + 2] as number)
    ] as number;
  return { width: image.width, height: image.height, indices, palette };
}

/**
 * A majority (mode) filter, `passes` times: each pixel takes the index most of its 3x3 neighbourhood has, when
 * that is more than its own. Noise left after denoising makes specks and ragged borders between two palette
 * colours; the tracer would draw each speck as a path. One pass removes most, and keeps thin lines two
 * pixels wide or more.
 */
export function despeckle(image: IndexedImage, passes: number): IndexedImage {
  const { width, height } = image;
  const counts = new Uint16Array(image.palette.length);
  let source = image.indices;
  for (let pass = 0; pass < passes; pass++) {
    const out = source.slice();
    for (let y = 1; y < height - 1; y++) {
      for (let x = 1; x < width - 1; x++) {
        const at = y * width + x;
        const own = source[at] as number;
        let best = own;
        let bestCount = 0;
        for (let dy = -width; dy <= width; dy += width) {
          for (let dx = -1; dx <= 1; dx++) {
            const index = source[at + dy + dx] as number;
            const count = (counts[index] as number) + 1;
            counts[index] = count;
            if (count > bestCount || (count === bestCount && index === own)) {
              best = index;
              bestCount = count;
            }
          }
        }
        if (bestCount > (counts[own] as number)) out[at] = best;
        for (let dy = -width; dy <= width; dy += width)
          for (let dx = -1; dx <= 1; dx++) counts[source[at + dy + dx] as number] = 0;
      }
    }
    source = out;
  }
  return { ...image, indices: source };
}

/**
 * At most `keep` regions (4-connected pixels of one index): when there are more, the largest `keep` are
 * kept and every other pixel takes the index of the kept region that reaches it first, growing all kept
 * regions at once (a breadth-first fill). Each kept region stays connected, so the tracer draws at most `keep`
 * outlines, and its time is bounded with them: a noise image that would be 150,000 regions after
 * despeckling costs what a photograph does.
 */
export function keepLargestRegions(image: IndexedImage, keep: number): IndexedImage {
  const { width, height, indices } = image;
  const size = width * height;
  const label = new Int32Array(size).fill(-1);
  const queue = new Int32Array(size);
  const sizes: number[] = [];
  const neighbours = (p: number, visit: (q: number) => void) => {
    const x = p % width;
    if (x > 0) visit(p - 1);
    if (x < width - 1) visit(p + 1);
    if (p >= width) visit(p - width);
    if (p < size - width) visit(p + width);
  };
  for (let start = 0; start < size; start++) {
    if (label[start] !== -1) continue;
    const region = sizes.length;
    const index = indices[start];
    label[start] = region;
    let head = 0;
    let tail = 0;
    queue[tail++] = start;
    while (head < tail) {
      neighbours(queue[head++] as number, (q) => {
        if (label[q] === -1 && indices[q] === index) {
          label[q] = region;
          queue[tail++] = q;
        }
      });
    }
    sizes.push(tail);
  }
  if (sizes.length <= keep) return image;
  const kept = new Uint8Array(sizes.length);
  for (const region of sizes
    .map((_, i) => i)
    .sort((a, b) => (sizes[b] as number) - (sizes[a] as number))
    .slice(0, keep))
    kept[region] = 1;
  const out = new Uint8Array(size);
  const done = new Uint8Array(size);
  let tail = 0;
  for (let p = 0; p < size; p++)
    if (kept[label[p] as number] === 1) {
      out[p] = indices[p] as number;
      done[p] = 1;
      queue[tail++] = p;
    }
  for (let head = 0; head < tail; head++) {
    const p = queue[head] as number;
    neighbours(p, (q) => {
      if (done[q] === 0) {
        done[q] = 1;
        out[q] = out[p] as number;
        queue[tail++] = q;
      }
    });
  }
  return { ...image, indices: out };
}

/** RGBA pixels of an indexed image. */
export function toRgba(image: IndexedImage): RgbaImage {
  const data = new Uint8Array(image.indices.length * 4);
  image.indices.forEach((index, i) => {
    const c = image.palette[index] as PaletteColor;
    data[i * 4] = c.r;
    data[i * 4 + 1] = c.g;
    data[i * 4 + 2] = c.b;
    data[i * 4 + 3] = c.a;
  });
  return { width: image.width, height: image.height, data };
}
