/**
 * A small decoder for the BMP files people actually have (sharp/libvips does not read BMP): uncompressed
 * 24-bit and 32-bit (BI_RGB, or BI_BITFIELDS with the usual 8-bit masks), bottom-up or top-down. Anything
 * else (palettes, RLE, 16-bit, embedded PNG/JPEG) is refused with a clear error rather than guessed.
 */
import { BadInputError } from "../../../common/errors.ts";

export interface RgbaImage {
  width: number;
  height: number;
  /** width * height * 4 bytes, rows top to bottom. */
  data: Uint8Array;
}

const BI_RGB = 0;
const BI_BITFIELDS = 3;
const BI_ALPHABITFIELDS = 6;

function unsupported(what: string): BadInputError {
  return new BadInputError(
    `this BMP is ${what}: only uncompressed 24-bit and 32-bit BMP files are read; convert it to PNG`,
    "unsupported_image",
  );
}

/** Decodes `bytes` (starting with "BM") to RGBA, refusing images above `maxPixels`. */
export function decodeBmp(bytes: Uint8Array, maxPixels: number): RgbaImage {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 26) throw new BadInputError("the BMP file is truncated", "bad_image");
  const pixelOffset = view.getUint32(10, true);
  const headerSize = view.getUint32(14, true);
  if (headerSize < 40 || bytes.length < 14 + headerSize)
    throw unsupported("an OS/2 or truncated variant (header of fewer than 40 bytes)");
  const width = view.getInt32(18, true);
  const rawHeight = view.getInt32(22, true);
  const planes = view.getUint16(26, true);
  const bitCount = view.getUint16(28, true);
  const compression = view.getUint32(30, true);
  const topDown = rawHeight < 0;
  const height = Math.abs(rawHeight);
  if (width <= 0 || height === 0 || planes !== 1)
    throw new BadInputError("the BMP header is invalid", "bad_image");
  if (width * height > maxPixels)
    throw new BadInputError(
      `the image has ${width}x${height} pixels, more than ${maxPixels}`,
      "image_too_large",
    );
  if (bitCount !== 24 && bitCount !== 32) throw unsupported(`${bitCount}-bit`);
  let masks = { r: 0x00ff0000, g: 0x0000ff00, b: 0x000000ff, a: bitCount === 32 ? 0xff000000 : 0 };
  if (compression === BI_BITFIELDS || compression === BI_ALPHABITFIELDS) {
    if (bitCount !== 32) throw unsupported("16-bit with bit fields");
    // Masks follow a 40-byte header, or sit inside a V4/V5 header at the same offsets.
    const at = 14 + 40;
    if (bytes.length < at + 12) throw new BadInputError("the BMP file is truncated", "bad_image");
    const alphaInHeader = headerSize >= 56 || compression === BI_ALPHABITFIELDS;
    masks = {
      r: view.getUint32(at, true),
      g: view.getUint32(at + 4, true),
      b: view.getUint32(at + 8, true),
      a: alphaInHeader && bytes.length >= at + 16 ? view.getUint32(at + 12, true) : 0,
    };
  } else if (compression !== BI_RGB) {
    throw unsupported("compressed (RLE, JPEG or PNG inside)");
  }
  const channel = (mask: number) => {
    if (mask === 0) return null;
    let shift = 0;
    while (((mask >>> shift) & 1) === 0) shift++;
    if (mask >>> shift !== 0xff) throw unsupported("using bit fields other than 8 bits per channel");
    return shift;
  };
  const shifts = { r: channel(masks.r), g: channel(masks.g), b: channel(masks.b), a: channel(masks.a) };
  if (shifts.r === null || shifts.g === null || shifts.b === null) throw unsupported("missing a colour mask");
  const bytesPerPixel = bitCount / 8;
  const stride = Math.ceil((width * bytesPerPixel) / 4) * 4;
  if (pixelOffset + stride * height > bytes.length)
    throw new BadInputError("the BMP file is truncated", "bad_image");
  const data = new Uint8Array(width * height * 4);
  // 32-bit BI_RGB files usually leave the fourth byte at 0: treat the image as opaque unless some pixel has alpha.
  let anyAlpha = false;
  for (let y = 0; y < height; y++) {
    const row = pixelOffset + (topDown ? y : height - 1 - y) * stride;
    for (let x = 0; x < width; x++) {
      const at = row + x * bytesPerPixel;
      const out = (y * width + x) * 4;
      if (bitCount === 24) {
        data[out] = bytes[at + 2] ?? 0;
        data[out + 1] = bytes[at + 1] ?? 0;
        data[out + 2] = bytes[at] ?? 0;
        data[out + 3] = 255;
      } else {
        const value = view.getUint32(at, true);
        data[out] = (value >>> shifts.r) & 0xff;
        data[out + 1] = (value >>> shifts.g) & 0xff;
        data[out + 2] = (value >>> shifts.b) & 0xff;
        const alpha = shifts.a === null ? 255 : (value >>> shifts.a) & 0xff;
        data[out + 3] = alpha;
        if (alpha !== 0) anyAlpha = true;
      }
    }
  }
  if (bitCount === 32 && !anyAlpha) for (let i = 3; i < data.length; i += 4) data[i] = 255;
  return { width, height, data };
}
