/**
 * Photograph-like test images for `/api/vectorize`, generated here (nothing can be downloaded): smooth
 * gradients and soft-edged shapes, a light blur as a lens gives, gaussian sensor noise, then JPEG at quality 75
 * as a camera or a web page would save it. Three kinds: a portrait (soft blobs), a landscape (horizontal bands
 * with ragged edges) and a texture (fractal value noise, the hardest). Seeded (`src/demo/prng.ts`), so every run
 * gets the same bytes.
 * Also the line-art case a photo pipeline must leave alone: black strokes on white, as a PNG.
 */
import sharp from "sharp";
import { random } from "../../../../src/demo/prng.ts";

export type PhotoKind = "portrait" | "landscape" | "texture";
export const PHOTO_KINDS: readonly PhotoKind[] = ["portrait", "landscape", "texture"];

type Rgb = [number, number, number];

/** Box-Muller: a standard normal deviate from two uniform ones. */
function gaussian(next: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
}

const mix = (a: Rgb, b: Rgb, t: number): Rgb => [
  a[0] + (b[0] - a[0]) * t,
  a[1] + (b[1] - a[1]) * t,
  a[2] + (b[2] - a[2]) * t,
];
/** 0 outside, 1 inside, a soft ramp `soft` px wide across the edge (negative distance = inside). */
const coverage = (distance: number, soft: number) => Math.min(1, Math.max(0, 0.5 - distance / soft));
/** Approximate signed distance (px) to an ellipse. */
const ellipse = (x: number, y: number, cx: number, cy: number, rx: number, ry: number) =>
  (Math.hypot((x - cx) / rx, (y - cy) / ry) - 1) * Math.min(rx, ry);

function portrait(x: number, y: number, w: number, h: number): Rgb {
  const s = Math.min(w, h);
  let c = mix([96, 120, 150], [40, 52, 70], y / h);
  const body = ellipse(x, y, w * 0.5, h * 1.05, s * 0.55, s * 0.4);
  c = mix(c, mix([150, 40, 50], [90, 20, 30], x / w), coverage(body, s * 0.02));
  const hair = ellipse(x, y, w * 0.5, h * 0.36, s * 0.27, s * 0.3);
  c = mix(c, [60, 38, 24], coverage(hair, s * 0.03));
  const face = ellipse(x, y, w * 0.5, h * 0.45, s * 0.2, s * 0.26);
  // Light from the upper left: the face darkens toward its lower right.
  const shade = Math.min(1, Math.max(0, (x - w * 0.4) / (s * 0.4) + (y - h * 0.35) / (s * 0.6)));
  c = mix(c, mix([236, 190, 160], [170, 120, 95], shade), coverage(face, s * 0.015));
  for (const side of [-1, 1]) {
    const eye = ellipse(x, y, w * 0.5 + side * s * 0.08, h * 0.42, s * 0.03, s * 0.018);
    c = mix(c, [35, 30, 30], coverage(eye, s * 0.01));
  }
  const mouth = ellipse(x, y, w * 0.5, h * 0.56, s * 0.07, s * 0.015);
  return mix(c, [160, 60, 60], coverage(mouth, s * 0.01));
}

function landscape(x: number, y: number, w: number, h: number): Rgb {
  const u = x / w;
  let c = mix([70, 130, 210], [225, 215, 200], y / (h * 0.55));
  const sun = Math.hypot(x - w * 0.75, y - h * 0.18) / Math.min(w, h);
  c = mix(c, [255, 245, 200], Math.max(0, 1 - sun / 0.09) ** 2);
  const ridge =
    h * (0.42 + 0.06 * Math.sin(u * 9.1) + 0.03 * Math.sin(u * 23.7 + 1) + 0.01 * Math.sin(u * 71));
  c = mix(c, mix([110, 120, 150], [80, 90, 120], (y - ridge) / (h * 0.2)), coverage(ridge - y, 2));
  const hills = h * (0.58 + 0.04 * Math.sin(u * 5.3 + 2) + 0.015 * Math.sin(u * 31 + 0.5));
  c = mix(c, mix([70, 130, 60], [40, 90, 35], (y - hills) / (h * 0.4)), coverage(hills - y, 2));
  const field = h * (0.78 + 0.02 * Math.sin(u * 3 + 1));
  const stripes = 0.5 + 0.5 * Math.sin(y * 0.35 + u * 4);
  return mix(c, mix([190, 160, 70], [160, 130, 50], stripes), coverage(field - y, 2));
}

/** Fractal value noise (smooth random grids of doubling frequency), the look of stone or bark. */
function textureField(w: number, h: number, seed: number): Float32Array {
  const { next } = random(seed);
  const field = new Float32Array(w * h);
  let amplitude = 1;
  for (let cell = Math.max(w, h) / 3; cell >= 2; cell /= 2, amplitude *= 0.55) {
    const gw = Math.ceil(w / cell) + 2;
    const gh = Math.ceil(h / cell) + 2;
    const grid = Float32Array.from({ length: gw * gh }, () => next());
    for (let y = 0; y < h; y++) {
      const gy = y / cell;
      const j = Math.floor(gy);
      const ty = (gy - j) ** 2 * (3 - 2 * (gy - j));
      for (let x = 0; x < w; x++) {
        const gx = x / cell;
        const i = Math.floor(gx);
        const tx = (gx - i) ** 2 * (3 - 2 * (gx - i));
        const at = (a: number, b: number) => grid[b * gw + a] as number;
        const top = at(i, j) + (at(i + 1, j) - at(i, j)) * tx;
        const bottom = at(i, j + 1) + (at(i + 1, j + 1) - at(i, j + 1)) * tx;
        field[y * w + x] = (field[y * w + x] as number) + amplitude * (top + (bottom - top) * ty);
      }
    }
  }
  return field;
}

/**
 * A photograph-like JPEG of `kind`, `width` x `height`. Pipeline: the scene, a 0.8 px gaussian blur (a lens
 * and a demosaic never give perfectly sharp edges), gaussian noise of `noise` (standard deviation in 8-bit
 * levels, 6 by default: a phone's photo at moderate ISO), JPEG quality 75 with 4:2:0 chroma.
 */
export async function photo(
  kind: PhotoKind,
  width = 192,
  height = 128,
  options: { noise?: number; seed?: number } = {},
): Promise<Buffer> {
  const seed = options.seed ?? 7;
  const rgb = new Uint8Array(width * height * 3);
  const field = kind === "texture" ? textureField(width, height, seed) : undefined;
  let low = Number.POSITIVE_INFINITY;
  let high = Number.NEGATIVE_INFINITY;
  if (field) for (const v of field) [low, high] = [Math.min(low, v), Math.max(high, v)];
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let c: Rgb;
      if (field) {
        const t = ((field[y * width + x] as number) - low) / (high - low);
        c =
          t < 0.5
            ? mix([60, 40, 28], [140, 100, 70], t * 2)
            : mix([140, 100, 70], [215, 190, 150], t * 2 - 1);
      } else c = kind === "portrait" ? portrait(x, y, width, height) : landscape(x, y, width, height);
      rgb.set(c, (y * width + x) * 3);
    }
  }
  const blurred = await sharp(rgb, { raw: { width, height, channels: 3 } })
    .blur(0.8)
    .raw()
    .toBuffer();
  const { next } = random(seed, 1);
  const sigma = options.noise ?? 6;
  for (let i = 0; i < blurred.length; i++)
    blurred[i] = Math.min(255, Math.max(0, Math.round((blurred[i] as number) + sigma * gaussian(next))));
  return sharp(blurred, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 75 })
    .toBuffer();
}

/** Line art: black strokes (lines, a circle, a curve) 3 px wide on white, anti-aliased, as a PNG. */
export async function lineArt(width = 192, height = 128): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 192 128">
<rect width="192" height="128" fill="#fff"/>
<g fill="none" stroke="#111" stroke-width="3" stroke-linecap="round">
<circle cx="52" cy="64" r="36"/><path d="M100 24L176 24M100 64L160 64M100 104L176 104"/>
<path d="M16 120Q96 70 176 120"/><path d="M40 52L64 76M64 52L40 76"/></g></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}
