/**
 * The hosts' icon: a real 32x32 image in both files (the ICO's PNG decoded here, byte by byte, its CRCs
 * checked; the SVG drawing the same dollar sign), served by every merchant host and by the demo's shops
 * host, and linked from the reference page.
 */
import zlib from "node:zlib";
import { describe, expect, it, onTestFinished } from "vitest";
import { shopsApp } from "../../src/demo/shops/host.ts";
import { DEMO_SHOPS, shopMerchant } from "../../src/demo/shops/index.ts";
import { merchantApp } from "../../src/merchant-kit/app.ts";
import { FAVICON_ICO, FAVICON_SVG, ICON_SIZE, pixelAt } from "../../src/merchant-kit/favicon.ts";
import { openTestDatabase } from "../helpers/db.ts";
import { refusingFacilitator, testConfig, testMerchant } from "../helpers/merchant.ts";

/** The ICO's one image: its directory entry and the PNG it points at. */
function icoImage(ico: Buffer) {
  expect(ico.readUInt16LE(0)).toBe(0);
  expect(ico.readUInt16LE(2)).toBe(1); // an icon
  expect(ico.readUInt16LE(4)).toBe(1); // one image
  const size = ico.readUInt32LE(6 + 8);
  const offset = ico.readUInt32LE(6 + 12);
  expect([ico.readUInt8(6), ico.readUInt8(7)]).toEqual([ICON_SIZE, ICON_SIZE]);
  expect(offset + size).toBe(ico.length);
  return ico.subarray(offset, offset + size);
}

/** A PNG's chunks, each CRC checked, and its RGBA pixels (8-bit, unfiltered rows: what the kit writes). */
function decodePng(png: Buffer): { width: number; height: number; pixels: number[][] } {
  expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const chunks: { type: string; data: Buffer }[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    const body = png.subarray(at + 4, at + 8 + length);
    expect(png.readUInt32BE(at + 8 + length), `CRC of ${body.subarray(0, 4)}`).toBe(zlib.crc32(body));
    chunks.push({ type: body.subarray(0, 4).toString("ascii"), data: body.subarray(4) });
    at += 12 + length;
  }
  expect(chunks.map((c) => c.type)).toEqual(["IHDR", "IDAT", "IEND"]);
  const header = chunks[0]?.data as Buffer;
  const [width, height] = [header.readUInt32BE(0), header.readUInt32BE(4)];
  expect([...header.subarray(8)]).toEqual([8, 6, 0, 0, 0]);
  const raw = zlib.inflateSync(chunks[1]?.data as Buffer);
  expect(raw.length).toBe(height * (1 + width * 4));
  const pixels: number[][] = [];
  for (let y = 0; y < height; y++) {
    const row = raw.subarray(y * (1 + width * 4));
    expect(row[0]).toBe(0);
    for (let x = 0; x < width; x++) pixels.push([...row.subarray(1 + x * 4, 5 + x * 4)]);
  }
  return { width, height, pixels };
}

describe("the hosts' icon", () => {
  const { width, height, pixels } = decodePng(icoImage(FAVICON_ICO));

  it("is a 32x32 ICO whose PNG holds the drawing: a coin with a sign on it, corners clear", () => {
    expect([width, height]).toEqual([ICON_SIZE, ICON_SIZE]);
    expect(pixels).toEqual(
      Array.from({ length: ICON_SIZE * ICON_SIZE }, (_, i) => [
        ...pixelAt(i % ICON_SIZE, Math.floor(i / ICON_SIZE)),
      ]),
    );
    const colours = new Set(pixels.map((p) => p.join(",")));
    expect(colours).toEqual(new Set(["0,0,0,0", "26,79,138,255", "39,117,202,255", "255,255,255,255"]));
    expect(pixels[0]).toEqual([0, 0, 0, 0]);
    const white = pixels.filter((p) => p.join(",") === "255,255,255,255").length;
    expect(white).toBeGreaterThan(50);
  });

  it("is drawn the same in SVG: each square of its sign is white in the PNG, and they are all the white", () => {
    expect(FAVICON_SVG).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 32 32"/);
    const squares = [...FAVICON_SVG.matchAll(/M(\d+) (\d+)h2v2h-2z/g)].map(([, x, y]) => [
      Number(x),
      Number(y),
    ]);
    expect(squares.length).toBeGreaterThan(10);
    const corners: [number, number][] = [
      [0, 0],
      [1, 0],
      [0, 1],
      [1, 1],
    ];
    for (const [x, y] of squares as [number, number][])
      for (const [dx, dy] of corners)
        expect(pixels[(y + dy) * ICON_SIZE + x + dx], `${x},${y}`).toEqual([255, 255, 255, 255]);
    expect(pixels.filter((p) => p.join(",") === "255,255,255,255")).toHaveLength(squares.length * 4);
  });

  it("is served by a merchant host, GET and HEAD, and linked from its reference page", async () => {
    const opened = await openTestDatabase("pglite");
    onTestFinished(opened.close);
    const config = testConfig();
    const app = await merchantApp(testMerchant(`0x${"2".repeat(40)}`, "http://merchant.test"), {
      services: { db: opened.db, config },
      facilitator: refusingFacilitator,
      payments: config.payments,
    });
    const ico = await app.request("/favicon.ico");
    expect(ico.status).toBe(200);
    expect(ico.headers.get("content-type")).toBe("image/x-icon");
    expect(Buffer.from(await ico.arrayBuffer()).equals(FAVICON_ICO)).toBe(true);
    const head = await app.request("/favicon.ico", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("image/x-icon");
    const svg = await app.request("/favicon.svg");
    expect(svg.headers.get("content-type")).toBe("image/svg+xml");
    expect(await svg.text()).toBe(FAVICON_SVG);
    for (const page of ["/", "/docs"]) {
      const html = await (await app.request(page)).text();
      expect(html).toContain('<link rel="icon" href="favicon.svg" type="image/svg+xml">');
      expect(html).toContain('<link rel="icon" href="favicon.ico" sizes="32x32">');
      expect(html).toContain('<a href="llms.txt">llms.txt</a>');
    }
  });

  it("is served by the demo's shops host at its root and under each shop", async () => {
    const opened = await openTestDatabase("pglite");
    onTestFinished(opened.close);
    const shops = DEMO_SHOPS.filter((s) => ["uuid", "fortune"].includes(s.slug)).map((shop, i) => ({
      name: shop.name,
      merchant: shopMerchant(
        shop,
        `0x${String(i + 3).repeat(40)}` as `0x${string}`,
        `http://shops.test/${shop.slug}`,
      ),
    }));
    const config = testConfig();
    const app = await shopsApp(shops, {
      services: { db: opened.db, config },
      facilitator: refusingFacilitator,
      payments: config.payments,
    });
    for (const path of ["/favicon.ico", "/fortune/favicon.ico", "/uuid/favicon.ico"]) {
      const response = await app.request(path);
      expect(response.status, path).toBe(200);
      expect(Buffer.from(await response.arrayBuffer()).equals(FAVICON_ICO), path).toBe(true);
    }
  });
});
