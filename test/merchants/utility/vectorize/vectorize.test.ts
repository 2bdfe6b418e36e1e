/**
 * `/api/vectorize`, local engine, called without the payment layer: a generated image (white, a red
 * rectangle, a blue square with a hole) traced to each format and checked by structure and by rendering the
 * SVG back; every input format (PNG, JPEG, GIF, WebP, 24/32-bit BMP); the refusals (bad magic bytes, other
 * BMP variants, both/neither inputs, oversize by base64 and by URL); downscaling of large images; fetching
 * through a fixture server and the SSRF guard without the allow-list.
 */
import { Resvg } from "@resvg/resvg-js";
import { JSDOM } from "jsdom";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../../../src/common/errors.ts";
import { MAX_IMAGE_BYTES, vectorizeEndpoint } from "../../../../src/merchants/utility/vectorize/index.ts";
import {
  type FixtureHandler,
  type FixtureServer,
  huge,
  startFixtureServer,
} from "../../../helpers/fixtures/index.ts";
import { handlerContext } from "../providers/context.ts";
import { BLUE, colourDistance, RED, twoShapesAs, twoShapesBmp } from "./images.ts";

type Answer = {
  format: string;
  mime_type: string;
  engine: string;
  width: number;
  height: number;
  paths: number;
  colors: string[];
  input_format: string;
  svg?: string;
  data_base64?: string;
};

const bytesOf =
  (body: Buffer | string, contentType = "image/png"): FixtureHandler =>
  (_request, res) => {
    res.writeHead(200, { "content-type": contentType }).end(body);
  };

let site: FixtureServer;
let png: Buffer;
beforeAll(async () => {
  png = await twoShapesAs("png");
  site = await startFixtureServer({
    routes: {
      "/shapes.png": bytesOf(png),
      "/lies.png": bytesOf("<html>not an image</html>", "image/png"),
      "/huge.png": huge(MAX_IMAGE_BYTES + 1024, { declareLength: false }),
    },
  });
});
afterAll(() => site?.close());

const local = vectorizeEndpoint({ fetchPolicy: { allowAddresses: ["127.0.0.1"] } });
const run = async (input: object, endpoint = local, url = "http://127.0.0.1/api/vectorize") =>
  (await endpoint.handler(endpoint.input.parse(input), handlerContext(url))) as Answer;
const b64 = (bytes: Buffer) => bytes.toString("base64");
const fileOf = (answer: Answer) => Buffer.from(answer.data_base64 as string, "base64");

/** Expects the red and the blue of the image among the colours, and white. */
function expectShapeColours(colours: string[]) {
  expect(
    colours.some((c) => colourDistance(c, RED) < 12),
    colours.join(),
  ).toBe(true);
  expect(
    colours.some((c) => colourDistance(c, BLUE) < 12),
    colours.join(),
  ).toBe(true);
}

/** RGBA at (x, y) of an RGBA buffer of width `width`. */
const pixel = (data: Uint8Array, width: number, x: number, y: number) => {
  const at = (y * width + x) * 4;
  return {
    r: data[at] as number,
    g: data[at + 1] as number,
    b: data[at + 2] as number,
    a: data[at + 3] as number,
  };
};
const hexOf = (p: { r: number; g: number; b: number }) =>
  `#${[p.r, p.g, p.b].map((n) => n.toString(16).padStart(2, "0")).join("")}`;

/** The rendered image shows red in the rectangle, blue in the square, white in the square's hole and outside. */
function expectRendering(rgba: Uint8Array, width: number, scale = 1) {
  const at = (x: number, y: number) =>
    hexOf(pixel(rgba, width, Math.round(x * scale), Math.round(y * scale)));
  expect(colourDistance(at(24, 32), RED)).toBeLessThan(12);
  expect(colourDistance(at(60, 20), BLUE)).toBeLessThan(12);
  expect(colourDistance(at(72, 32), { r: 255, g: 255, b: 255 })).toBeLessThan(12);
  expect(colourDistance(at(2, 2), { r: 255, g: 255, b: 255 })).toBeLessThan(12);
}

describe("POST /api/vectorize, local engine", () => {
  it("traces to SVG by default: a valid document with the shapes in their colours, holes kept", async () => {
    const answer = await run({ image_base64: b64(png) });
    expect(answer).toMatchObject({
      format: "svg",
      mime_type: "image/svg+xml",
      engine: "local",
      width: 96,
      height: 64,
      input_format: "png",
    });
    expect(answer.data_base64).toBeUndefined();
    const svg = answer.svg as string;
    const doc = new JSDOM("").window;
    const parsed = new doc.DOMParser().parseFromString(svg, "image/svg+xml");
    expect(parsed.getElementsByTagName("parsererror")).toHaveLength(0);
    expect(parsed.documentElement.getAttribute("viewBox")).toBe("0 0 96 64");
    const paths = [...parsed.getElementsByTagName("path")];
    expect(paths.length).toBe(answer.paths);
    expect(paths.length).toBeGreaterThanOrEqual(2);
    const fills = paths.map((p) => p.getAttribute("fill") as string);
    expectShapeColours(fills);
    expect(new Set(fills)).toEqual(new Set(answer.colors));
    expectShapeColours(answer.colors);
    // The blue square has its hole as a second contour.
    const blue = paths.find((p) => colourDistance(p.getAttribute("fill") as string, BLUE) < 12);
    expect(blue?.getAttribute("d")?.match(/M/g)).toHaveLength(2);
    // Rendered back, the drawing is the image.
    const rendered = new Resvg(svg).render();
    expectRendering(rendered.pixels, rendered.width);
  });

  it("answers PNG rendered from the trace, at the image's size", async () => {
    const answer = await run({ image_base64: b64(png), format: "png" });
    expect(answer).toMatchObject({ format: "png", mime_type: "image/png", width: 96, height: 64 });
    expect(answer.svg).toBeUndefined();
    const { data, info } = await sharp(fileOf(answer))
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([96, 64]);
    expectRendering(data, info.width);
  });

  it("answers a PDF page of the image's size", async () => {
    const answer = await run({ image_base64: b64(png), format: "pdf", colors: 4 });
    const pdf = fileOf(answer);
    expect(answer.mime_type).toBe("application/pdf");
    expect(pdf.subarray(0, 5).toString("latin1")).toBe("%PDF-");
    expect(pdf.subarray(-6).toString("latin1")).toMatch(/%%EOF\s*$/);
    expect(pdf.toString("latin1")).toMatch(/\/MediaBox \[0 0 96 64\]/);
    // PDF is a format sharp/libvips may not read: the page count is in the trailer's page tree.
    expect(pdf.toString("latin1")).toMatch(/\/Type \/Pages\s*\/Count 1/);
  });

  it("answers EPS with a bounding box and one even-odd fill per path in its colour", async () => {
    const answer = await run({ image_base64: b64(png), format: "eps" });
    const eps = fileOf(answer).toString("latin1");
    expect(answer.mime_type).toBe("application/postscript");
    expect(eps.startsWith("%!PS-Adobe-3.0 EPSF-3.0\n")).toBe(true);
    expect(eps).toContain("%%BoundingBox: 0 0 96 64\n");
    expect(eps.trimEnd().endsWith("%%EOF")).toBe(true);
    const fills = eps.split("\n").filter((line) => line.startsWith("newpath"));
    expect(fills).toHaveLength(answer.paths);
    // red 220/255 = 0.86, 30/255 = 0.12
    expect(fills.some((line) => line.endsWith(" 0.86 0.12 0.12 f"))).toBe(true);
    expect(fills.some((line) => line.endsWith(" 0.12 0.24 0.86 f"))).toBe(true);
  });

  it("answers DXF with a solid hatch and closed outlines per path, on a layer per colour", async () => {
    const answer = await run({ image_base64: b64(png), format: "dxf" });
    const dxf = fileOf(answer).toString("utf8");
    const codes = dxf.split(/\r?\n/).map((line) => line.trim());
    expect(codes.slice(0, 2)).toEqual(["0", "SECTION"]);
    expect(codes).toContain("ENTITIES");
    expect(codes.at(-1) === "EOF" || codes.at(-2) === "EOF").toBe(true);
    expect(codes.filter((c) => c === "HATCH")).toHaveLength(answer.paths);
    expect(codes).toContain("SOLID");
    expect(codes.filter((c) => c === "LWPOLYLINE").length).toBeGreaterThanOrEqual(answer.paths);
    expect(codes).toContain("COLOR_DC1E1E");
    expect(codes).toContain(String(0xdc1e1e));
    expect(codes).toContain(String(0x1e3cdc));
  });

  it("answers the file itself with ?raw=1 or raw: true", async () => {
    const response = (await local.handler(
      local.input.parse({ image_base64: b64(png), format: "eps" }),
      handlerContext("http://127.0.0.1/api/vectorize?raw=1"),
    )) as unknown as Response;
    expect(response).toBeInstanceOf(Response);
    expect(response.headers.get("content-type")).toBe("application/postscript");
    expect((await response.text()).startsWith("%!PS-Adobe")).toBe(true);
    const svg = (await local.handler(
      local.input.parse({ image_base64: b64(png), raw: true }),
      handlerContext(),
    )) as unknown as Response;
    expect(svg.headers.get("content-type")).toBe("image/svg+xml; charset=utf-8");
    expect(await svg.text()).toMatch(/^<svg /);
  });

  it.each(["jpeg", "gif", "webp"] as const)("reads %s by its bytes", async (kind) => {
    const answer = await run({
      image_base64: `data:application/octet-stream;base64,${b64(await twoShapesAs(kind))}`,
    });
    expect(answer.input_format).toBe(kind);
    expectShapeColours(answer.colors);
    const rendered = new Resvg(answer.svg as string).render();
    expectRendering(rendered.pixels, rendered.width);
  });

  it.each([24, 32])("reads %i-bit BMP", async (bits) => {
    const answer = await run({ image_base64: b64(await twoShapesBmp(bits)) });
    expect(answer).toMatchObject({ input_format: "bmp", width: 96, height: 64 });
    const rendered = new Resvg(answer.svg as string).render();
    expectRendering(rendered.pixels, rendered.width);
  });

  it("refuses other BMP variants clearly", async () => {
    const eightBit = await twoShapesBmp(8);
    await expect(run({ image_base64: b64(eightBit) })).rejects.toMatchObject({
      status: 400,
      code: "unsupported_image",
      message: expect.stringMatching(/8-bit.*only uncompressed 24-bit and 32-bit/),
    });
  });

  it("keeps the size of a large image while tracing it downscaled", async () => {
    const big = await twoShapesAs("png", 2400, 1600);
    const answer = await run({ image_base64: b64(big), format: "png" });
    expect([answer.width, answer.height]).toEqual([2400, 1600]);
    const { data, info } = await sharp(fileOf(answer))
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([2400, 1600]);
    expectRendering(data, info.width, 25);
  });

  it("refuses bytes that are not an image, whatever they claim", async () => {
    for (const bytes of [
      Buffer.from("<svg xmlns='http://www.w3.org/2000/svg'/>"),
      Buffer.from("%PDF-1.7"),
      Buffer.from([0x89, 0x50]),
    ]) {
      await expect(run({ image_base64: `data:image/png;base64,${b64(bytes)}` })).rejects.toMatchObject({
        status: 400,
        code: "unsupported_image",
      });
    }
    await expect(run({ image_url: `${site.url}lies.png` })).rejects.toMatchObject({
      status: 400,
      code: "unsupported_image",
    });
  });

  it("refuses a truncated image with a 400", async () => {
    await expect(run({ image_base64: b64(png.subarray(0, 60)) })).rejects.toMatchObject({
      status: 400,
      code: "bad_image",
    });
  });

  it("refuses not-base64, both or neither inputs, and options out of range in the schema", () => {
    const bad = [
      {},
      { image_url: `${site.url}shapes.png`, image_base64: b64(png) },
      { image_url: "ftp://example.com/a.png" },
      { image_base64: b64(png), format: "gif" },
      { image_base64: b64(png), colors: 1 },
      { image_base64: b64(png), colors: 65 },
      { image_base64: b64(png), detail: "max" },
      { image_base64: "A".repeat(Math.ceil(MAX_IMAGE_BYTES / 3) * 4 + 300) },
    ];
    for (const input of bad)
      expect(local.input.safeParse(input).success, JSON.stringify(input).slice(0, 80)).toBe(false);
    expect(local.input.safeParse({ image_base64: b64(png) }).success).toBe(true);
  });

  it("refuses base64 it cannot read", async () => {
    for (const text of ["not base64!", "AB=C", "AB==="]) {
      await expect(run({ image_base64: text }), text).rejects.toMatchObject({
        status: 400,
        code: "bad_base64",
      });
    }
  });

  it("refuses base64 of an image one byte over 10 MB by its size (413), before decoding it", async () => {
    const over = Buffer.alloc(MAX_IMAGE_BYTES + 1, 0xab).toString("base64");
    await expect(run({ image_base64: over })).rejects.toMatchObject({
      status: 413,
      code: "image_too_large",
      message: expect.stringContaining(`${MAX_IMAGE_BYTES + 1} bytes`),
    });
  });

  it("fetches image_url through the guarded fetch", async () => {
    const answer = await run({ image_url: `${site.url}shapes.png`, format: "svg" });
    expect(answer).toMatchObject({ width: 96, height: 64, input_format: "png" });
    expectShapeColours(answer.colors);
    expect(site.requests.at(-1)?.headers.accept).toBe("image/*");
  });

  it("refuses an image over 10 MB from a URL (413) and a 404 (422)", async () => {
    await expect(run({ image_url: `${site.url}huge.png` })).rejects.toMatchObject({
      status: 413,
      code: "image_too_large",
    });
    await expect(run({ image_url: `${site.url}missing.png` })).rejects.toMatchObject({
      status: 422,
      code: "image_status",
    });
  });

  it("refuses loopback URLs without the test allow-list", async () => {
    const strict = vectorizeEndpoint();
    const error = await run({ image_url: `${site.url}shapes.png` }, strict).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ status: 400, code: "ssrf_blocked" });
  });

  it("answers 503 for engine hosted when no hosted engine is configured", async () => {
    await expect(run({ image_base64: b64(png), engine: "hosted" })).rejects.toMatchObject({
      status: 503,
      code: "provider_not_configured",
    });
  });
});
