import sharp from "sharp";

/** A whole PNG of `w` x `h` pixels, as an upload sends it (the kit reads its header with sharp). */
export async function realPng(w = 2, h = 1): Promise<Uint8Array> {
  const png = await sharp({ create: { width: w, height: h, channels: 4, background: "#3366ff" } })
    .png()
    .toBuffer();
  return new Uint8Array(png);
}
