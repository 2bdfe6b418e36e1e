/**
 * `/api/vectorize` on photographs: generated photograph-like JPEGs (`photos.ts`) are told from graphics,
 * traced by the photo pipeline to an SVG whose rendering is close to the image (SSIM and mean absolute error,
 * `fidelity.ts`) and closer than the pipeline before it gave; the graphics (a logo, line art) are traced
 * exactly as before; the size bound holds; the quantiser and despeckler do what the pipeline relies on.
 */
import sharp from "sharp";
import { beforeAll, describe, expect, it } from "vitest";
import type { RgbaImage } from "../../../../src/merchants/utility/vectorize/bmp.ts";
import { fidelity } from "../../../../src/merchants/utility/vectorize/fidelity.ts";
import { decodeImage, MAX_INPUT_PIXELS } from "../../../../src/merchants/utility/vectorize/image.ts";
import { vectorizeEndpoint } from "../../../../src/merchants/utility/vectorize/index.ts";
import { type LocalMode, traceLocally } from "../../../../src/merchants/utility/vectorize/local.ts";
import { looksLikePhoto } from "../../../../src/merchants/utility/vectorize/photo.ts";
import {
  despeckle,
  keepLargestRegions,
  quantize,
} from "../../../../src/merchants/utility/vectorize/quantize.ts";
import { pathData, toSvg } from "../../../../src/merchants/utility/vectorize/render.ts";
import { MAX_PATH_BYTES, MAX_PATHS } from "../../../../src/merchants/utility/vectorize/trace.ts";
import { handlerContext } from "../providers/context.ts";
import { twoShapesAs } from "./images.ts";
import { lineArt, PHOTO_KINDS, type PhotoKind, photo } from "./photos.ts";

/**
 * SSIM every generated photograph (256x171) reaches through the photo pipeline at the endpoint's defaults
 * (16 colours, `medium`). Measured: 0.81 (landscape), 0.84 (portrait), 0.85 (texture); the old pipeline gave
 * 0.71, 0.40 and 0.40. At this size SSIM is computed on every pixel, noise included, so even a noise-free
 * copy of the scene would not reach 1. The new figure must also beat the old one by 0.05.
 */
const PHOTO_MIN_SSIM = 0.78;
/** Mean absolute error (levels of 255) they stay under: measured 3.8 to 5.1, the old pipeline 6.2 to 14.4. */
const PHOTO_MAX_ERROR = 5.5;
const WIDTH = 256;
const HEIGHT = 171;
const UNBOUNDED = { paths: Number.POSITIVE_INFINITY, bytes: Number.POSITIVE_INFINITY };

const photos = new Map<PhotoKind, Buffer>();
let logo: Buffer;
let logoJpeg: Buffer;
let lines: Buffer;
beforeAll(async () => {
  for (const kind of PHOTO_KINDS) photos.set(kind, await photo(kind, WIDTH, HEIGHT));
  logo = await twoShapesAs("png");
  logoJpeg = await twoShapesAs("jpeg", 288, 192);
  lines = await lineArt(WIDTH, HEIGHT);
});

const reference = (bytes: Buffer) => decodeImage(bytes, MAX_INPUT_PIXELS);

/** Traces `bytes` at the endpoint's defaults; `graphic` runs the old pipeline as it was (no size bound). */
async function traced(bytes: Buffer, mode: LocalMode) {
  const started = performance.now();
  const result = await traceLocally(bytes, {
    colors: 16,
    detail: "medium",
    mode,
    ...(mode === "graphic" && { bound: UNBOUNDED }),
  });
  const svg = toSvg(result.drawing);
  return { ...result, svg, ms: performance.now() - started, ...fidelity(svg, await reference(bytes)) };
}

describe("photographs", () => {
  it("tells photographs (JPEG or GIF) from logos and line art (even as JPEG); a transparent image is a graphic", async () => {
    for (const [kind, bytes] of photos) {
      expect(looksLikePhoto(await decodeImage(bytes)), kind).toBe(true);
      const gif = await sharp(bytes).gif().toBuffer();
      expect(looksLikePhoto(await decodeImage(gif)), `${kind} as GIF`).toBe(true);
    }
    const graphics = [logo, logoJpeg, lines, await sharp(lines).jpeg({ quality: 50 }).toBuffer()];
    for (const bytes of graphics) expect(looksLikePhoto(await decodeImage(bytes))).toBe(false);
    const photoPixels = await decodeImage(photos.get("texture") as Buffer);
    photoPixels.data[3] = 254;
    expect(looksLikePhoto(photoPixels)).toBe(false);
  });

  it.each(PHOTO_KINDS)(
    "traces a %s JPEG close to the image, closer than before, within the bounds",
    async (kind) => {
      const bytes = photos.get(kind) as Buffer;
      const before = await traced(bytes, "graphic");
      const after = await traced(bytes, "auto");
      expect(after.photo).toBe(true);
      expect(after.ssim, `SSIM ${after.ssim} (before ${before.ssim})`).toBeGreaterThan(PHOTO_MIN_SSIM);
      expect(after.ssim).toBeGreaterThan(before.ssim + 0.05);
      expect(after.meanAbsError).toBeLessThan(PHOTO_MAX_ERROR);
      expect(after.meanAbsError).toBeLessThan(before.meanAbsError);
      expect(after.drawing.shapes.length).toBeLessThanOrEqual(MAX_PATHS);
      const pathBytes = after.drawing.shapes.reduce((sum, s) => sum + pathData(s.contours).length, 0);
      expect(pathBytes).toBeLessThanOrEqual(MAX_PATH_BYTES);
      // Fewer paths than before, at most 16 colours, and well inside the endpoint's 60 s.
      expect(after.drawing.shapes.length).toBeLessThan(before.drawing.shapes.length);
      expect(new Set(after.drawing.shapes.map((s) => s.color)).size).toBeLessThanOrEqual(16);
      expect(after.ms).toBeLessThan(60_000);
    },
  );

  it("traces a logo and line art exactly as before, as faithfully", async () => {
    for (const [bytes, minSsim] of [
      [logo, 0.999],
      [logoJpeg, 0.96],
      [lines, 0.95],
    ] as const) {
      const before = await traced(bytes, "graphic");
      const after = await traced(bytes, "auto");
      expect(after.photo).toBe(false);
      expect(after.svg).toBe(before.svg);
      expect(after.ssim).toBeGreaterThan(minSsim);
    }
  });

  it("answers a photograph through the endpoint: the SVG renders close to the image", async () => {
    const endpoint = vectorizeEndpoint();
    const bytes = photos.get("portrait") as Buffer;
    const answer = (await endpoint.handler(
      endpoint.input.parse({ image_base64: bytes.toString("base64") }),
      handlerContext("http://127.0.0.1/api/vectorize"),
    )) as {
      svg: string;
      paths: number;
      colors: string[];
      width: number;
      height: number;
      input_format: string;
    };
    expect(answer).toMatchObject({ width: WIDTH, height: HEIGHT, input_format: "jpeg" });
    expect(answer.colors.length).toBeLessThanOrEqual(16);
    expect(answer.paths).toBe((answer.svg.match(/<path /g) ?? []).length);
    expect(fidelity(answer.svg, await reference(bytes)).ssim).toBeGreaterThan(PHOTO_MIN_SSIM);
  });

  it("holds a photograph to the path bound by merging its smallest regions, and stays recognisable", async () => {
    const bytes = photos.get("portrait") as Buffer;
    const full = await traceLocally(bytes, { colors: 16, detail: "medium" });
    expect(full.drawing.shapes.length).toBeGreaterThan(80);
    const cut = await traceLocally(bytes, { colors: 16, detail: "medium", bound: { paths: 40, bytes: 1e9 } });
    expect(cut.drawing.shapes.length).toBeLessThanOrEqual(40);
    expect(fidelity(toSvg(cut.drawing), await reference(bytes)).ssim).toBeGreaterThan(0.75);
    const small = await traceLocally(bytes, {
      colors: 16,
      detail: "medium",
      bound: { paths: 1e6, bytes: 5_000 },
    });
    const kept = small.drawing.shapes.reduce((sum, s) => sum + pathData(s.contours).length, 0);
    expect(kept).toBeLessThanOrEqual(5_000);
    expect(small.drawing.shapes.length).toBeGreaterThan(1);
  });

  it("holds a graphic to the bound by leaving out its smallest shapes, the others in their order", async () => {
    const full = await traceLocally(logo, { colors: 4, detail: "medium" });
    const cut = await traceLocally(logo, { colors: 4, detail: "medium", bound: { paths: 2, bytes: 1e9 } });
    // In palette order: the blue square (32x32, a hole), the white around everything, the white in the hole
    // (12x12), the red rectangle (32x48). The white around and the red are the two largest.
    const [blue, white, hole, red] = full.drawing.shapes;
    expect([blue?.color, white?.color, hole?.color, red?.color]).toEqual([
      "#1e3cdc",
      "#ffffff",
      "#ffffff",
      "#dc1e1e",
    ]);
    expect(cut.drawing.shapes).toEqual([white, red]);
  });
});

describe("fidelity", () => {
  it("scores a vector by its rendering: 1 and 0 for the same image, lower and higher for a wrong one", async () => {
    const traced = await traceLocally(logo, { colors: 4, detail: "medium" });
    const image = await reference(logo);
    expect(fidelity(toSvg(traced.drawing), image)).toEqual({ ssim: 1, meanAbsError: 0 });
    const blank = '<svg xmlns="http://www.w3.org/2000/svg" width="96" height="64"/>';
    const wrong = fidelity(blank, image);
    expect(wrong.ssim).toBeLessThan(0.8);
    expect(wrong.meanAbsError).toBeGreaterThan(40);
  });
});

describe("quantize and despeckle", () => {
  /** A left half of one colour and a right half of another, each with noise of `spread` levels. */
  function halves(spread: number): RgbaImage {
    const width = 40;
    const height = 20;
    const data = new Uint8Array(width * height * 4);
    for (let i = 0; i < width * height; i++) {
      const jitter = ((i * 7919) % (2 * spread + 1)) - spread;
      const base = i % width < 20 ? [200, 40, 40] : [40, 80, 200];
      data.set([...base.map((v) => v + jitter), 255], i * 4);
    }
    return { width, height, data };
  }

  it("chooses at most `colors` colours from the image, the same every time", () => {
    const image = halves(12);
    const first = quantize(image, 2);
    expect(first.palette).toHaveLength(2);
    const [red, blue] = [...first.palette].sort((a, b) => b.r - a.r);
    for (const [got, want] of [
      [red, [200, 40, 40]],
      [blue, [40, 80, 200]],
    ] as const)
      for (const [i, channel] of (["r", "g", "b"] as const).entries())
        expect(Math.abs((got?.[channel] as number) - (want[i] as number))).toBeLessThanOrEqual(2);
    expect(first.indices[0]).not.toBe(first.indices[39]);
    expect(quantize(image, 2)).toEqual(first);
    expect(quantize(image, 64).palette.length).toBeLessThanOrEqual(64);
  });

  it("keeps the largest regions and grows them over the others", () => {
    // 6x4: index 0 on the left half, 1 on the right, a lone 2 and a pair of 3s inside the right half.
    const width = 6;
    const height = 4;
    const indices = new Uint8Array(width * height).map((_, i) => (i % width < 3 ? 0 : 1));
    indices[1 * width + 4] = 2;
    indices[2 * width + 4] = 3;
    indices[2 * width + 5] = 3;
    const palette = [0, 1, 2, 3].map((v) => ({ r: v, g: v, b: v, a: 255 }));
    const image = { width, height, indices, palette };
    expect(keepLargestRegions(image, 4)).toBe(image);
    const two = keepLargestRegions(image, 2).indices;
    expect([...two]).toEqual([...indices].map((_, i) => (i % width < 3 ? 0 : 1)));
    const three = keepLargestRegions(image, 3).indices;
    expect(three[2 * width + 4]).toBe(3);
    expect(three[1 * width + 4]).not.toBe(2);
  });

  it("removes a lone pixel and keeps a line two pixels wide", () => {
    const width = 9;
    const height = 9;
    const indices = new Uint8Array(width * height);
    indices[2 * width + 2] = 1;
    for (let x = 0; x < width; x++) {
      indices[5 * width + x] = 2;
      indices[6 * width + x] = 2;
    }
    const palette = [0, 1, 2].map((v) => ({ r: v, g: v, b: v, a: 255 }));
    const out = despeckle({ width, height, indices, palette }, 1).indices;
    expect(out[2 * width + 2]).toBe(0);
    expect(out[5 * width + 4]).toBe(2);
    expect(out[6 * width + 4]).toBe(2);
  });
});
