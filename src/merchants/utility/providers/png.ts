/**
 * Proves bytes are a PNG before we sell them as one: the 8-byte signature, an IHDR chunk first (where the
 * width and height are), an IEND chunk last, and a size cap. It does not decode the pixels.
 */

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Largest image we pass on; a 1792x1024 PNG from current models is 2-4 MB. */
export const MAX_PNG_BYTES = 20 * 1024 * 1024;

/** Width and height of a PNG, or the reason the bytes are not one. */
export function readPng(bytes: Buffer): { width: number; height: number } | string {
  if (bytes.length > MAX_PNG_BYTES) return `the image is larger than ${MAX_PNG_BYTES} bytes`;
  if (bytes.length < 8 + 25 + 12 || !bytes.subarray(0, 8).equals(PNG_SIGNATURE))
    return "not a PNG (bad signature)";
  if (bytes.toString("latin1", 12, 16) !== "IHDR" || bytes.readUInt32BE(8) !== 13)
    return "not a PNG (no IHDR chunk)";
  if (bytes.toString("latin1", bytes.length - 8, bytes.length - 4) !== "IEND")
    return "not a PNG (no IEND chunk)";
  const width = bytes.readUInt32BE(16);
  const height = bytes.readUInt32BE(20);
  if (width === 0 || height === 0) return "not a PNG (zero size)";
  return { width, height };
}
