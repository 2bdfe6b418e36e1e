import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { PNG } from "pngjs";
import { describe, expect, it } from "vitest";
import type { AppError } from "../../../../src/common/errors.ts";
import {
  buildIconIndex,
  editDistance,
  findIcon,
  iconIndex,
  scoreIcon,
  searchIcons,
} from "../../../../src/merchants/utility/icons/icon-index.ts";
import { type IconRenderOptions, renderIcon } from "../../../../src/merchants/utility/icons/icon-render.ts";

const require = createRequire(import.meta.url);
const names = (q: string, options = {}) => searchIcons(q, options).icons.map((i) => i.name);
const defaults: IconRenderOptions = {
  style: "solid",
  size: 128,
  color: "#000000",
  background: "transparent",
  format: "svg",
};

function decodePng(base64: string) {
  const png = PNG.sync.read(Buffer.from(base64, "base64"));
  const pixel = (x: number, y: number) => {
    const i = (y * png.width + x) * 4;
    return `#${[...png.data.subarray(i, i + 4)].map((v) => v.toString(16).padStart(2, "0")).join("")}`;
  };
  return { width: png.width, height: png.height, pixel };
}

describe("icon index", () => {
  it("holds every icon of Font Awesome Free 7.3.1 with its free styles", () => {
    const index = iconIndex();
    expect(index.version).toBe("7.3.1");
    // 1,992 icons; counted per style 1,422 solid + 169 regular + 572 brands = 2,163 drawings.
    expect(index.icons).toHaveLength(1992);
    const perStyle = { solid: 0, regular: 0, brands: 0 };
    for (const icon of index.icons) for (const style of icon.styles) perStyle[style]++;
    expect(perStyle).toEqual({ solid: 1422, regular: 169, brands: 572 });
    expect(perStyle.solid + perStyle.regular + perStyle.brands).toBeGreaterThan(2000);
    expect(findIcon("house")).toMatchObject({ label: "House", styles: ["solid", "regular"] });
    expect(findIcon("home")?.name).toBe("house"); // an alias
    expect(findIcon("GitHub")?.styles).toEqual(["brands"]);
    expect(findIcon("no-such-icon")).toBeUndefined();
  });

  it("keeps the licence comment of Font Awesome's own files", () => {
    const file = readFileSync(require.resolve("@fortawesome/fontawesome-free/svgs/solid/house.svg"), "utf8");
    const comment = /<!--![\s\S]*?-->/.exec(file)?.[0];
    expect(comment).toContain("CC BY 4.0");
    expect(iconIndex().licenseComment).toBe(comment);
  });

  it("skips styles that are not free or not one-path", () => {
    const index = buildIconIndex(
      {
        a: {
          unicode: "1",
          label: "A",
          svgs: {
            classic: {
              solid: { viewBox: [0, 0, 512, 512], path: "M0 0h1" },
              light: { viewBox: [0, 0, 512, 512], path: "M0 0h1" },
            },
            duotone: { solid: { viewBox: [0, 0, 512, 512], path: ["M0 0", "M1 1"] } },
          },
          familyStylesByLicense: {
            free: [
              { family: "classic", style: "solid" },
              { family: "duotone", style: "solid" },
            ],
          },
        },
        b: {
          unicode: "2",
          label: "B",
          svgs: { classic: { light: { viewBox: [0, 0, 512, 512], path: "M0 0h1" } } },
          familyStylesByLicense: { free: [] },
        },
      },
      "0.0.0",
    );
    expect(index.icons.map((i) => [i.name, i.styles])).toEqual([["a", ["solid"]]]);
  });
});

describe("icon search ranking", () => {
  it("puts the exact name first, then names starting with the query", () => {
    const result = searchIcons("house", { limit: 5 });
    expect(result.icons[0]).toMatchObject({ name: "house", score: 100 });
    expect(
      result.icons.slice(1).every((i) => i.name.startsWith("house-") && i.score > 80 && i.score < 90),
    ).toBe(true);
    // Equal scores are in name order, and the whole list is deterministic.
    expect(result.icons.slice(1, 5).map((i) => i.name)).toEqual([
      "house-fire",
      "house-flag",
      "house-lock",
      "house-user",
    ]);
    expect(searchIcons("house", { limit: 50 })).toEqual(searchIcons("house", { limit: 50 }));
    expect(result.total).toBeGreaterThan(30);
  });

  it("reads spaces as hyphens and finds aliases, parts of names, terms and typos", () => {
    expect(names("arrow up")[0]).toBe("arrow-up");
    expect(names("Credit  Card")[0]).toBe("credit-card");
    expect(searchIcons("home").icons[0]).toMatchObject({ name: "house", score: 95 });
    // "dollar" is an alias of dollar-sign; other icons have it as a part of their name.
    const dollar = searchIcons("dollar", { limit: 3 }).icons;
    expect(dollar[0]?.name).toBe("dollar-sign");
    expect(dollar[1]?.score).toBeGreaterThanOrEqual(70);
    expect(dollar[1]?.score).toBeLessThan(75);
    // Only a search term: "abode" is a term of house.
    expect(searchIcons("abode").icons[0]).toMatchObject({ name: "house", score: 60 });
    // A typo is still found, below every direct match.
    const typo = searchIcons("calender").icons;
    expect(typo[0]?.name).toBe("calendar");
    expect(typo[0]?.score).toBeLessThanOrEqual(20);
    expect(searchIcons("zzzzqx")).toEqual({ total: 0, icons: [] });
  });

  it("scores every tier in its band", () => {
    const house = findIcon("house");
    const circleArrow = findIcon("circle-arrow-down");
    if (!house || !circleArrow) throw new Error("fixture icons missing");
    expect(scoreIcon(house, "house")).toBe(100);
    expect(scoreIcon(house, "home")).toBe(95);
    expect(scoreIcon(house, "hous")).toBe(88);
    expect(scoreIcon(circleArrow, "arrow")).toBeGreaterThanOrEqual(70);
    expect(scoreIcon(house, "real estate")).toBe(60);
    expect(scoreIcon(house, "real")).toBeGreaterThanOrEqual(50);
    expect(scoreIcon(house, "estate real")).toBeGreaterThanOrEqual(30); // every word matches
    expect(scoreIcon(house, "estate real")).toBeLessThan(35);
    expect(scoreIcon(house, "housr")).toBe(15); // one edit
    expect(scoreIcon(house, "car")).toBe(0);
    expect(editDistance("kitten", "sitting", 5)).toBe(3);
    expect(editDistance("kitten", "sitting", 1)).toBe(2);
  });

  it("filters by style and honours the limit", () => {
    const regular = searchIcons("star", { style: "regular", limit: 50 }).icons;
    expect(regular.length).toBeGreaterThan(1);
    expect(regular.every((i) => i.styles.includes("regular"))).toBe(true);
    expect(names("star", { limit: 50 })).toContain("star-of-david"); // solid only
    expect(regular.map((i) => i.name)).not.toContain("star-of-david");
    const brands = searchIcons("github", { style: "brands" }).icons;
    expect(brands[0]?.name).toBe("github");
    expect(brands.every((i) => i.styles.includes("brands"))).toBe(true);
    expect(searchIcons("github", { style: "solid" }).icons.map((i) => i.name)).not.toContain("github");
    expect(searchIcons("arrow", { limit: 3 }).icons).toHaveLength(3);
  });
});

describe("icon rendering", () => {
  it("writes the Font Awesome path recoloured and sized, keeping the viewBox and the licence", () => {
    const rendered = renderIcon("house", { ...defaults, size: 64, color: "#1D4ED8" });
    const glyph = findIcon("house")?.glyphs.solid;
    expect(rendered).toMatchObject({ name: "house", style: "solid", format: "svg", width: 64, height: 64 });
    expect(rendered.svg).toContain('viewBox="0 0 512 512" width="64" height="64"');
    expect(rendered.svg).toContain(`<path fill="#1d4ed8" d="${glyph?.path}"/>`);
    expect(rendered.svg).toContain(iconIndex().licenseComment);
    expect(rendered.png_base64).toBeUndefined();
    expect(
      Buffer.from(rendered.data_uri.replace("data:image/svg+xml;base64,", ""), "base64").toString(),
    ).toBe(rendered.svg);
  });

  it("answers an alias with the current name and keeps narrow icons' proportions", () => {
    const rendered = renderIcon("home", { ...defaults, size: 100 });
    expect(rendered.name).toBe("house");
    // The exclamation mark is 128 x 512 units: 25 x 100 px.
    const narrow = renderIcon("exclamation", { ...defaults, size: 100 });
    expect(findIcon("exclamation")?.glyphs.solid?.viewBox).toEqual([0, 0, 128, 512]);
    expect([narrow.width, narrow.height]).toEqual([25, 100]);
    expect(narrow.svg).toContain('viewBox="0 0 128 512"');
  });

  it("renders a real PNG of the right size with the fill colour at the centre", () => {
    const rendered = renderIcon("circle", { ...defaults, size: 96, color: "#ff6600", format: "png" });
    expect(rendered.svg).toBeUndefined();
    const bytes = Buffer.from(rendered.png_base64 ?? "", "base64");
    expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(rendered.data_uri).toBe(`data:image/png;base64,${rendered.png_base64}`);
    const png = decodePng(rendered.png_base64 ?? "");
    expect([png.width, png.height]).toEqual([96, 96]);
    expect(png.pixel(48, 48)).toBe("#ff6600ff");
    expect(png.pixel(0, 0)).toBe("#00000000"); // corner outside the circle: transparent
  });

  it("fills the background when asked", () => {
    const rendered = renderIcon("circle", {
      ...defaults,
      size: 32,
      color: "#fff",
      background: "#0000ff",
      format: "png",
    });
    const png = decodePng(rendered.png_base64 ?? "");
    expect(png.pixel(0, 0)).toBe("#0000ffff");
    expect(png.pixel(16, 16)).toBe("#ffffffff");
    expect(rendered.background).toBe("#0000ff");
  });

  it("refuses unknown icons and styles with clear errors", () => {
    const refusal = (name: string, options: Partial<IconRenderOptions>) => {
      try {
        renderIcon(name, { ...defaults, ...options });
      } catch (error) {
        return error as AppError;
      }
      throw new Error("rendered");
    };
    expect(refusal("no-such-icon", {})).toMatchObject({ status: 404, code: "unknown_icon" });
    expect(refusal("no-such-icon", {}).message).toMatch(/GET \/api\/icon\/search/);
    const style = refusal("github", { style: "solid" });
    expect(style).toMatchObject({ status: 400, code: "unknown_style" });
    expect(style.message).toBe('icon "github" has no solid style; it has brands');
    expect(refusal("house", { color: "red" })).toMatchObject({ status: 400, code: "invalid_color" });
    expect(refusal("house", { size: 4096 })).toMatchObject({ status: 400, code: "invalid_size" });
  });
});
