/** Test images for `/api/vectorize`, made with sharp (and a BMP writer): two coloured shapes on white. */
import sharp from "sharp";

export const RED = { r: 220, g: 30, b: 30 };
export const BLUE = { r: 30, g: 60, b: 220 };

/** 96x64: white, a red 32x48 rectangle at (8, 8), a blue 32x32 square at (56, 16) with a white 12x12 hole. */
export async function twoShapes(
  width = 96,
  height = 64,
): Promise<{ data: Buffer; width: number; height: number }> {
  const sx = width / 96;
  const sy = height / 64;
  const rect = (w: number, h: number, c: { r: number; g: number; b: number }) =>
    sharp({ create: { width: Math.round(w * sx), height: Math.round(h * sy), channels: 3, background: c } })
      .png()
      .toBuffer();
  const data = await sharp({ create: { width, height, channels: 3, background: { r: 255, g: 255, b: 255 } } })
    .composite([
      { input: await rect(32, 48, RED), left: Math.round(8 * sx), top: Math.round(8 * sy) },
      { input: await rect(32, 32, BLUE), left: Math.round(56 * sx), top: Math.round(16 * sy) },
      {
        input: await rect(12, 12, { r: 255, g: 255, b: 255 }),
        left: Math.round(66 * sx),
        top: Math.round(26 * sy),
      },
    ])
    .removeAlpha()
    .raw()
    .toBuffer();
  return { data, width, height };
}

export async function twoShapesAs(
  format: "png" | "jpeg" | "gif" | "webp",
  width = 96,
  height = 64,
): Promise<Buffer> {
  const image = await twoShapes(width, height);
  const pipeline = sharp(image.data, { raw: { width, height, channels: 3 } });
  if (format === "jpeg") return pipeline.jpeg({ quality: 95 }).toBuffer();
  if (format === "gif") return pipeline.gif().toBuffer();
  if (format === "webp") return pipeline.webp({ lossless: true }).toBuffer();
  return pipeline.png().toBuffer();
}

/** An uncompressed bottom-up BMP of `bits` 24 or 32 (or any other count, header only, to test refusals). */
export async function twoShapesBmp(bits = 24): Promise<Buffer> {
  const { data, width, height } = await twoShapes();
  const bpp = bits === 32 ? 4 : 3;
  const stride = Math.ceil((width * bpp) / 4) * 4;
  const pixels = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const from = (y * width + x) * 3;
      const to = (height - 1 - y) * stride + x * bpp;
      pixels[to] = data[from + 2] as number;
      pixels[to + 1] = data[from + 1] as number;
      pixels[to + 2] = data[from] as number;
      if (bpp === 4) pixels[to + 3] = 0;
    }
  }
  const header = Buffer.alloc(54);
  header.write("BM", 0, "latin1");
  header.writeUInt32LE(54 + pixels.length, 2);
  header.writeUInt32LE(54, 10);
  header.writeUInt32LE(40, 14);
  header.writeInt32LE(width, 18);
  header.writeInt32LE(height, 22);
  header.writeUInt16LE(1, 26);
  header.writeUInt16LE(bits, 28);
  header.writeUInt32LE(0, 30);
  header.writeUInt32LE(pixels.length, 34);
  return Buffer.concat([header, pixels]);
}

/** Distance between a "#rrggbb" colour and an RGB triple. */
export function colourDistance(hex: string, c: { r: number; g: number; b: number }): number {
  const r = Number.parseInt(hex.slice(1, 3), 16);
  const g = Number.parseInt(hex.slice(3, 5), 16);
  const b = Number.parseInt(hex.slice(5, 7), 16);
  return Math.hypot(r - c.r, g - c.g, b - c.b);
}
