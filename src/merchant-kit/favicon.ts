/**
 * The merchant hosts' icon: a USDC-blue coin with a white dollar sign, 32 by 32 pixels. One drawing makes
 * both files, so they cannot drift apart: `/favicon.svg` (what browsers and agents' tools prefer, linked
 * from the reference page) and `/favicon.ico` (where tools look when a page links none: an ICO holding one
 * PNG, which every browser since 2007 reads). Both are built once, when the module loads.
 */
import zlib from "node:zlib";

/** The icon's side, in pixels. */
export const ICON_SIZE = 32;

/** Colours as RGBA. */
const RIM = [0x1a, 0x4f, 0x8a, 0xff] as const;
const COIN = [0x27, 0x75, 0xca, 0xff] as const;
const GLYPH = [0xff, 0xff, 0xff, 0xff] as const;
const CLEAR = [0, 0, 0, 0] as const;

/** The coin's outer and inner (rim's) radius, from the icon's centre. */
const OUTER = 15.5;
const INNER = 14;

/** The dollar sign, one character a pixel (`#` drawn), each pixel drawn 2 by 2, centred. */
const DOLLAR = [
  "...#...",
  ".#####.",
  "#..#..#",
  "#..#...",
  ".###...",
  "...###.",
  "...#..#",
  "#..#..#",
  ".#####.",
  "...#...",
];
const SCALE = 2;
const GLYPH_LEFT = (ICON_SIZE - 7 * SCALE) / 2;
const GLYPH_TOP = (ICON_SIZE - DOLLAR.length * SCALE) / 2;

/** The squares of the dollar sign, in icon pixels: `[x, y]` of each drawn pixel's top-left corner. */
const glyphSquares: readonly [number, number][] = DOLLAR.flatMap((row, y) =>
  [...row].flatMap((c, x): [number, number][] =>
    c === "#" ? [[GLYPH_LEFT + x * SCALE, GLYPH_TOP + y * SCALE]] : [],
  ),
);

/** The colour of pixel (x, y): its centre decides which shape it is in. */
export function pixelAt(x: number, y: number): readonly [number, number, number, number] {
  const inGlyph = glyphSquares.some(([gx, gy]) => x >= gx && x < gx + SCALE && y >= gy && y < gy + SCALE);
  if (inGlyph) return GLYPH;
  const distance = Math.hypot(x + 0.5 - ICON_SIZE / 2, y + 0.5 - ICON_SIZE / 2);
  if (distance <= INNER) return COIN;
  if (distance <= OUTER) return RIM;
  return CLEAR;
}

const hex = (rgba: readonly number[]) =>
  `#${rgba
    .slice(0, 3)
    .map((v) => v.toString(16).padStart(2, "0"))
    .join("")}`;

/** The icon as SVG: the same circles and squares as the pixels. */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${ICON_SIZE} ${ICON_SIZE}" width="${ICON_SIZE}" height="${ICON_SIZE}"><title>x402 merchant</title><circle cx="${ICON_SIZE / 2}" cy="${ICON_SIZE / 2}" r="${OUTER}" fill="${hex(RIM)}"/><circle cx="${ICON_SIZE / 2}" cy="${ICON_SIZE / 2}" r="${INNER}" fill="${hex(COIN)}"/><path fill="${hex(GLYPH)}" d="${glyphSquares.map(([x, y]) => `M${x} ${y}h${SCALE}v${SCALE}h-${SCALE}z`).join("")}"/></svg>\n`;

/** A PNG chunk: length, type, data, and the CRC of type and data. */
function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** The icon as a PNG: 8-bit RGBA, each row behind filter byte 0 (none). */
function png(): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(ICON_SIZE, 0);
  header.writeUInt32BE(ICON_SIZE, 4);
  header.set([8, 6, 0, 0, 0], 8); // bit depth 8, colour type 6 (RGBA), deflate, filter set 0, no interlace
  const rows: number[] = [];
  for (let y = 0; y < ICON_SIZE; y++) {
    rows.push(0);
    for (let x = 0; x < ICON_SIZE; x++) rows.push(...pixelAt(x, y));
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", zlib.deflateSync(Buffer.from(rows))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** The icon as an ICO: its 6-byte header, one 16-byte directory entry, and the PNG it points at. */
function ico(image: Buffer): Buffer {
  const header = Buffer.alloc(6 + 16);
  header.writeUInt16LE(0, 0); // reserved
  header.writeUInt16LE(1, 2); // type: icon
  header.writeUInt16LE(1, 4); // one image
  header.writeUInt8(ICON_SIZE, 6);
  header.writeUInt8(ICON_SIZE, 7);
  header.writeUInt8(0, 8); // no palette
  header.writeUInt8(0, 9); // reserved
  header.writeUInt16LE(1, 10); // colour planes
  header.writeUInt16LE(32, 12); // bits per pixel
  header.writeUInt32LE(image.length, 14);
  header.writeUInt32LE(header.length, 18); // where the image starts
  return Buffer.concat([header, image]);
}

export const FAVICON_PNG: Buffer = png();
export const FAVICON_ICO: Buffer = ico(FAVICON_PNG);

/** A day: the icon changes with the code only. */
const CACHE = "public, max-age=86400";

/** The two icon routes' answers, for any host (a merchant's, the demo's shops). */
export function faviconResponse(kind: "ico" | "svg"): Response {
  return kind === "ico"
    ? new Response(new Uint8Array(FAVICON_ICO), {
        headers: { "Content-Type": "image/x-icon", "Cache-Control": CACHE },
      })
    : new Response(FAVICON_SVG, { headers: { "Content-Type": "image/svg+xml", "Cache-Control": CACHE } });
}

/** The `<link>`s of a page served by a host with these routes, relative so a host under a prefix works too. */
export const FAVICON_LINKS =
  '<link rel="icon" href="favicon.svg" type="image/svg+xml">\n<link rel="icon" href="favicon.ico" sizes="32x32">';
