import { describe, expect, it } from "vitest";
import { qr } from "../../../../src/merchants/utility/data/qr.ts";
import {
  BYTE_CAPACITY,
  fitSize,
  type QrOptions,
  renderQr,
} from "../../../../src/merchants/utility/data/qr-engine.ts";
import { decodeQrPng as decode } from "./qr-decode.ts";

const DEFAULTS: QrOptions = { size: 512, margin: 2, ecc: "M", dark: "#000000", light: "#ffffff" };

describe("renderQr", () => {
  it.each([
    ["https://example.com/path?q=1&r=two", DEFAULTS],
    ["Grüße, 世界 😀", { ...DEFAULTS, ecc: "H" as const, size: 300 }],
    ["0123456789".repeat(30), { ...DEFAULTS, ecc: "L" as const, size: 400, margin: 4 }],
    ["x", { ...DEFAULTS, size: 64, margin: 0 }],
  ])("encodes %j so that an independent decoder reads it back", async (data, options) => {
    const result = await renderQr(data, options);
    const png = decode(result.png_base64);
    expect(png.text).toBe(data);
    const span = result.modules + 2 * options.margin;
    expect(result.size).toBe(result.module_px * span);
    expect(Math.abs(result.size - options.size)).toBeLessThanOrEqual(span / 2);
    expect([png.width, png.height]).toEqual([result.size, result.size]);
    expect(result.data_uri).toBe(`data:image/png;base64,${result.png_base64}`);
    expect(result.modules).toBe(17 + 4 * result.version);
    // The SVG is drawn in module units: crisp whatever size it is shown at.
    expect(result.svg).toContain(
      `width="${result.size}" height="${result.size}" viewBox="0 0 ${span} ${span}"`,
    );
    expect(result.svg).not.toMatch(/d="[^"]*\d\.\d*[1-46-9]/); // only whole and half (stroke centre) coordinates
  });

  it("rounds the size to the nearest whole pitch, within the maximum", () => {
    expect(fitSize(512, 181)).toEqual({ size: 543, module_px: 3 }); // 2.83 px per module rounds up
    expect(fitSize(512, 33)).toEqual({ size: 528, module_px: 16 });
    expect(fitSize(500, 100)).toEqual({ size: 500, module_px: 5 }); // already whole: unchanged
    expect(fitSize(2048, 209)).toEqual({ size: 1881, module_px: 9 }); // 9.8 would round past 2048
    expect(fitSize(181, 181)).toEqual({ size: 181, module_px: 1 });
    expect(() => fitSize(180, 181)).toThrow(/smallest size is 181/);
  });

  it("paints the quiet zone in the light colour and the finder pattern in the dark one", async () => {
    const options = { ...DEFAULTS, size: 290, margin: 2, dark: "#1a237e", light: "fff59d" };
    const result = await renderQr("colours", options);
    const png = decode(result.png_base64);
    expect(png.text).toBe("colours");
    expect(result.dark).toBe("#1a237eff");
    expect(result.light).toBe("#fff59dff");
    expect(png.pixel(0, 0)).toBe("#fff59dff");
    // The top-left finder's outer ring starts right after the margin.
    const inFinder = Math.floor((options.margin + 0.5) * result.module_px);
    expect(png.pixel(inFinder, inFinder)).toBe("#1a237eff");
    expect(result.svg).toContain("#1a237e");
    expect(result.svg).toContain("#fff59d");
  });

  it("a higher ecc makes a bigger symbol for the same data", async () => {
    const low = await renderQr("https://example.com/a/longer/path/for/the/test", { ...DEFAULTS, ecc: "L" });
    const high = await renderQr("https://example.com/a/longer/path/for/the/test", { ...DEFAULTS, ecc: "H" });
    expect(high.version).toBeGreaterThan(low.version);
  });

  it("refuses data beyond the level's capacity, and takes it at a lower level", async () => {
    const text = "a".repeat(BYTE_CAPACITY.M + 1);
    await expect(renderQr(text, DEFAULTS)).rejects.toMatchObject({ status: 400, code: "data_too_long" });
    // 161 modules + margin = 165: 8 px per module.
    const low = await renderQr(text, { ...DEFAULTS, ecc: "L", size: 1320 });
    expect(low.modules).toBe(161);
    expect(low.version).toBeGreaterThan(30);
    expect(decode(low.png_base64).text).toBe(text);
  });

  it("refuses a size that cannot hold every module, naming the smallest that can", async () => {
    // 500 bytes at M: 85 modules + 4 of margin.
    await expect(renderQr("a".repeat(500), { ...DEFAULTS, size: 64 })).rejects.toMatchObject({
      code: "size_too_small",
      message: expect.stringMatching(/smallest size is 89\b/),
    });
  });

  it("refuses colours that are not hex or too alike to scan", async () => {
    await expect(renderQr("x", { ...DEFAULTS, dark: "red" })).rejects.toMatchObject({
      code: "invalid_color",
    });
    await expect(renderQr("x", { ...DEFAULTS, dark: "#eeeeee" })).rejects.toMatchObject({
      code: "invalid_color",
      message: expect.stringMatching(/contrast/),
    });
  });
});

describe("query parameters", () => {
  const parse = (q: Record<string, string>) => qr.input.safeParse(q);

  it("applies the spec's defaults", () => {
    expect(parse({ data: "hi" }).data).toEqual({ data: "hi", ...DEFAULTS });
  });

  it.each([
    [{ data: "hi", size: "10" }, /size/],
    [{ data: "hi", size: "5000" }, /size/],
    [{ data: "hi", size: "abc" }, /size/],
    [{ data: "hi", margin: "-1" }, /margin/],
    [{ data: "hi", ecc: "X" }, /ecc/],
    [{ data: "hi", dark: "blue" }, /dark/],
    [{ data: "hi", light: "#12345" }, /light/],
    [{ data: "" }, /data/],
    [{ data: "ab".repeat(1200) }, /does not fit/],
    [{ data: "é".repeat(1200) }, /7,200 characters percent-encoded in the URL; the limit is 7,089/],
    [{}, /data/],
  ])("refuses %# before payment", (query, message) => {
    const parsed = parse(query as Record<string, string>);
    expect(parsed.success).toBe(false);
    const issue = parsed.error?.issues[0];
    expect(`${issue?.path.join(".")}: ${issue?.message}`).toMatch(message);
  });
});

describe("the catalogue entry", () => {
  it("documents an example matching what the endpoint gives (images abridged)", async () => {
    const { data, ...options } = qr.input.parse(qr.example.input);
    const { svg, png_base64, data_uri, ...rest } = await renderQr(data, options);
    const { svg: exSvg, png_base64: exPng, data_uri: exUri, ...exRest } = qr.example.output;
    expect(rest).toEqual(exRest);
    expect(svg.startsWith(exSvg.replace("...</svg>", ""))).toBe(true);
    expect(png_base64.startsWith(exPng.replace("...", ""))).toBe(true);
    expect(data_uri.startsWith(exUri.replace("...", ""))).toBe(true);
  });
});
