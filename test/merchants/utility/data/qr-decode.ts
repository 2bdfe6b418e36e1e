/** Reads a QR code PNG back with decoders independent of the one that drew it (pngjs + jsQR). */
import jsQRModule from "jsqr";
import { PNG } from "pngjs";

type JsQR = typeof jsQRModule.default;
// jsqr is CommonJS with `exports.default`: depending on the loader's interop the default import is the
// function or the module object holding it.
const jsQR: JsQR = (jsQRModule as unknown as { default?: JsQR }).default ?? (jsQRModule as unknown as JsQR);

export interface DecodedQr {
  /** The decoded text, or undefined when no code was found. */
  text: string | undefined;
  width: number;
  height: number;
  /** The pixel at (x, y) as #rrggbbaa. */
  pixel: (x: number, y: number) => string;
}

export function decodeQrPng(pngBase64: string): DecodedQr {
  const png = PNG.sync.read(Buffer.from(pngBase64, "base64"));
  const code = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
  const pixel = (x: number, y: number) => {
    const i = (y * png.width + x) * 4;
    return `#${[...png.data.subarray(i, i + 4)].map((v) => v.toString(16).padStart(2, "0")).join("")}`;
  };
  return { text: code?.data, width: png.width, height: png.height, pixel };
}
