/**
 * The image a caller sends, from bytes to RGBA pixels: the 10 MB cap (docs/platform.md, "The utility API's endpoints"), the format told by its magic
 * bytes (PNG, JPEG, GIF, BMP, WebP; a declared content type is never trusted), the pixel caps, and the decode
 * (sharp for PNG/JPEG/GIF/WebP, `bmp.ts` for BMP).
 */
import type { Sharp } from "sharp";
import { AppError, BadInputError } from "../../../common/errors.ts";
import { onFirstUse } from "../lazy.ts";
import { decodeBmp, type RgbaImage } from "./bmp.ts";

/** sharp (libvips) is loaded by the first image decoded; its own ESM build, as a static import had. */
export const loadSharp = onFirstUse(() => import("sharp"));

/** Largest image accepted, in bytes (10 MB, as docs/platform.md states). */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
/** Largest image accepted, in pixels (width x height): beyond it the image is refused (400 `image_too_large`). */
export const MAX_INPUT_PIXELS = 40_000_000;
/**
 * Longest side traced by the local engine. Larger images are downscaled to fit before tracing (the
 * coordinates are scaled back, so the vector keeps the image's size): tracing is CPU work in-process and this
 * bounds its time (about a second or two at this size).
 */
export const MAX_TRACE_SIDE = 1024;

export type ImageFormat = "png" | "jpeg" | "gif" | "bmp" | "webp";

export const IMAGE_MIME: Record<ImageFormat, string> = {
  png: "image/png",
  jpeg: "image/jpeg",
  gif: "image/gif",
  bmp: "image/bmp",
  webp: "image/webp",
};

/** The format the bytes are, by their signature, or null. */
export function sniffImage(bytes: Uint8Array): ImageFormat | null {
  const starts = (signature: number[], at = 0) => signature.every((b, i) => bytes[at + i] === b);
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "png";
  if (starts([0xff, 0xd8, 0xff])) return "jpeg";
  if (starts([0x47, 0x49, 0x46, 0x38]) && (bytes[4] === 0x37 || bytes[4] === 0x39) && bytes[5] === 0x61)
    return "gif";
  if (starts([0x42, 0x4d]) && bytes.length >= 26) return "bmp";
  if (starts([0x52, 0x49, 0x46, 0x46]) && starts([0x57, 0x45, 0x42, 0x50], 8)) return "webp";
  return null;
}

export function tooLarge(bytes: number): AppError {
  return new AppError(
    413,
    "image_too_large",
    `the image is ${bytes} bytes, more than the ${MAX_IMAGE_BYTES} bytes (10 MB) accepted`,
  );
}

/** Checks size and signature; returns the format. */
export function checkImage(bytes: Uint8Array): ImageFormat {
  if (bytes.length === 0) throw new BadInputError("the image is empty", "bad_image");
  if (bytes.length > MAX_IMAGE_BYTES) throw tooLarge(bytes.length);
  const format = sniffImage(bytes);
  if (!format)
    throw new BadInputError(
      "the data is not a PNG, JPEG, GIF, BMP or WebP image (checked by its first bytes, not its declared type)",
      "unsupported_image",
    );
  return format;
}

/**
 * Decodes `image_base64`: plain or URL-safe base64, or a `data:image/...;base64,` URI (its declared type is
 * ignored). Refuses anything that is not base64 rather than decoding it loosely.
 */
export function decodeBase64Image(text: string): Uint8Array {
  // Patterns that never hold one backtracking entry per character: matching a 14 MB text against
  // `^[...]+={0,2}$` overflowed V8's regexp stack in a long-lived process (a 500 instead of a 413).
  const data = text.replace(/^data:[^,]{0,255};base64,/i, "").replace(/\s+/g, "");
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  const body = data.slice(0, data.length - padding);
  if (body === "" || /[^A-Za-z0-9+/_-]/.test(body) || data.length % 4 === 1)
    throw new BadInputError("image_base64 is not valid base64", "bad_base64");
  // Refused by the size it would decode to, before decoding it.
  const size = Math.floor((body.length * 3) / 4);
  if (size > MAX_IMAGE_BYTES) throw tooLarge(size);
  return Buffer.from(data, "base64");
}

export interface DecodedImage extends RgbaImage {
  format: ImageFormat;
  /** The image's own size (the traced pixels may be smaller: `MAX_TRACE_SIDE`). */
  originalWidth: number;
  originalHeight: number;
}

/** Bytes → RGBA pixels no larger than `maxSide` on either side (first frame of an animation). */
export async function decodeImage(bytes: Uint8Array, maxSide = MAX_TRACE_SIDE): Promise<DecodedImage> {
  const format = checkImage(bytes);
  // Outside the try below: a library that fails to load is not a caller's undecodable image.
  const { default: sharp } = await loadSharp();
  let pipeline: Sharp;
  let originalWidth: number;
  let originalHeight: number;
  try {
    if (format === "bmp") {
      const bmp = decodeBmp(bytes, MAX_INPUT_PIXELS);
      originalWidth = bmp.width;
      originalHeight = bmp.height;
      pipeline = sharp(bmp.data, { raw: { width: bmp.width, height: bmp.height, channels: 4 } });
    } else {
      pipeline = sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS, failOn: "error" });
      const meta = await pipeline.metadata();
      if (!meta.width || !meta.height) throw new BadInputError("the image has no size", "bad_image");
      // Autorotated JPEGs swap their sides.
      const rotated = (meta.orientation ?? 1) >= 5;
      originalWidth = rotated ? meta.height : meta.width;
      originalHeight = rotated ? meta.width : meta.height;
      pipeline = pipeline.rotate();
    }
    const { data, info } = await pipeline
      .resize({ width: maxSide, height: maxSide, fit: "inside", withoutEnlargement: true })
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    return {
      format,
      width: info.width,
      height: info.height,
      data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
      originalWidth,
      originalHeight,
    };
  } catch (error) {
    if (error instanceof AppError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    if (/pixel limit/i.test(message))
      throw new BadInputError(`the image has more than ${MAX_INPUT_PIXELS} pixels`, "image_too_large");
    throw new BadInputError(
      `the ${format.toUpperCase()} image could not be decoded: ${message}`,
      "bad_image",
    );
  }
}
