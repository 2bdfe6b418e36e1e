import { describe, expect, it } from "vitest";
import { contrast as contrastEndpoint } from "../../../../src/merchants/utility/data/contrast.ts";
import {
  contrast,
  contrastRatio,
  parseColor,
} from "../../../../src/merchants/utility/data/contrast-engine.ts";

/** WCAG 2.x relative luminance written out independently of the engine, from 8-bit channels. */
function referenceRatio(a: [number, number, number], b: [number, number, number]): number {
  const lum = (rgb: [number, number, number]) => {
    const [r, g, bl] = rgb.map((v) => {
      const c = v / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    }) as [number, number, number];
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

describe("contrast", () => {
  it("black on white is 21:1 and passes everything", () => {
    const r = contrast("#000", "#fff");
    expect(r.contrast_ratio).toBe(21);
    expect(r.contrast_ratio_exact).toBeCloseTo(21, 12);
    expect(r.ratio_string).toBe("21:1");
    expect(r.passes).toEqual({
      normal_text: { AA: true, AAA: true },
      large_text: { AA: true, AAA: true },
      ui_components: true,
    });
  });

  it("#777 on white is 4.48:1: fails AA for normal text, passes large text and UI components", () => {
    const r = contrast("#777", "#ffffff");
    expect(r.contrast_ratio).toBe(4.48);
    expect(r.contrast_ratio_exact).toBeCloseTo(4.478089, 5);
    expect(r.passes).toEqual({
      normal_text: { AA: false, AAA: false },
      large_text: { AA: true, AAA: false },
      ui_components: true,
    });
  });

  it("decides on the exact ratio: #008946 on white shows 4.5 but is 4.49996 and fails AA", () => {
    const r = contrast("#008946", "#fff");
    expect(r.contrast_ratio).toBe(4.5);
    expect(r.contrast_ratio_exact).toBeLessThan(4.5);
    expect(r.contrast_ratio_exact).toBeGreaterThan(4.4999);
    expect(r.passes.normal_text.AA).toBe(false);
    expect(r.passes.large_text.AAA).toBe(false);
  });

  it.each([
    ["#767676", "#ffffff", 4.54, true, false],
    ["#595959", "#ffffff", 7, true, true],
    ["#ffffff", "#767676", 4.54, true, false],
    ["rgb(255, 0, 0)", "white", 4, false, false],
    ["#0000ff", "#ffff00", 8, true, true],
  ] as const)("%s on %s is %s:1", (fg, bg, ratio, aa, aaa) => {
    const r = contrast(fg, bg);
    expect(r.contrast_ratio).toBe(ratio);
    expect(r.passes.normal_text).toEqual({ AA: aa, AAA: aaa });
  });

  it("matches an independent computation for many 8-bit pairs", () => {
    for (let i = 0; i < 500; i++) {
      const a: [number, number, number] = [(i * 37) % 256, (i * 91) % 256, (i * 53) % 256];
      const b: [number, number, number] = [(i * 11) % 256, 255 - ((i * 29) % 256), (i * 7) % 256];
      const hex = (c: number[]) => `#${c.map((v) => v.toString(16).padStart(2, "0")).join("")}`;
      expect(contrast(hex(a), hex(b)).contrast_ratio_exact).toBeCloseTo(referenceRatio(a, b), 10);
    }
  });

  it("composites a semi-transparent foreground over the background, and a background over white", () => {
    const half = contrast("rgba(0, 0, 0, 0.5)", "#fff");
    expect(half.effective_foreground).toBe("#808080");
    expect(half.foreground).toBe("#00000080");
    // 50% black over white is sRGB 0.5 per channel.
    expect(half.contrast_ratio_exact).toBeCloseTo(
      contrastRatio({ r: 0.5, g: 0.5, b: 0.5, alpha: 1 }, parseColor("#fff")),
      12,
    );
    expect(contrast("#000", "rgba(0,0,0,0)").contrast_ratio).toBe(21);
    expect(contrast("transparent", "#123456").contrast_ratio).toBe(1);
    expect(contrast("#00000080", "#ffffff").contrast_ratio).toBe(contrast("#7f7f7f", "#fff").contrast_ratio);
  });

  it("accepts hex without #, #rgba, rgb(), hsl() and names", () => {
    expect(contrast("777777", "fff").contrast_ratio).toBe(4.48);
    expect(contrast("hsl(0 0% 0%)", "rgb(255 255 255)").contrast_ratio).toBe(21);
    expect(contrast("black", "#ffff").contrast_ratio).toBe(21);
  });

  it.each(["#12", "not-a-colour", "#gggggg", "oklch(0.9 0.4 150)", ""])("refuses %j", (bad) => {
    expect(() => contrast(bad, "#fff")).toThrow(
      expect.objectContaining({ status: 400, code: "invalid_color" }),
    );
  });
});

describe("query parameters", () => {
  const parse = (q: Record<string, string>) => contrastEndpoint.input.safeParse(q);

  it("takes fg/bg, foreground/background and WebAIM's fcolor/bcolor", () => {
    expect(parse({ fg: "#000", bg: "#fff" }).success).toBe(true);
    expect(parse({ foreground: "#000", background: "#fff" }).success).toBe(true);
    expect(parse({ fcolor: "000000", bcolor: "FFFFFF" }).success).toBe(true);
  });

  it("refuses a missing, doubled or bad colour before payment", () => {
    expect(parse({ fg: "#000" }).error?.issues[0]?.message).toMatch(/background colour as `bg`/);
    expect(parse({ fg: "#000", foreground: "#111", bg: "#fff" }).error?.issues[0]?.message).toMatch(
      /once, not as fg and foreground/,
    );
    expect(parse({ fg: "#000", bg: "nope" }).error?.issues[0]?.message).toMatch(/not a colour/);
  });
});

describe("the catalogue entry", () => {
  it("documents an example the endpoint really gives", () => {
    const q = contrastEndpoint.input.parse(contrastEndpoint.example.input);
    expect(contrast(q.fg ?? "", q.bg ?? "")).toEqual(contrastEndpoint.example.output);
    expect(contrastEndpoint.output.parse(contrastEndpoint.example.output)).toBeTruthy();
  });
});
