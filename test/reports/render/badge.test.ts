import { describe, expect, it } from "vitest";
import { renderBadge } from "../../../src/reports/render/badge.ts";
import { expectWellFormedXml, makeEmptyReport, makeReport } from "../fixtures.ts";

// badge-maker 6's named colours, as hex in the SVG.
const COLORS = {
  brightgreen: "#4b0",
  green: "#67ac09",
  yellow: "#d8b800",
  orange: "#ea7233",
  lightgrey: "#939393",
};

const withShare = (real_usd: number, usd = 100) => makeReport({ usd, real_usd });

describe("renderBadge", () => {
  it("is an SVG with the label and the message", () => {
    const svg = renderBadge(makeReport({ usd: 1450.7, real_usd: 1234.56 }));
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(svg).toContain("<title>x402 real revenue: $1234.56/7d · 85% (methodology 1.11.0)</title>");
    expectWellFormedXml(svg);
  });

  it("names the methodology its figures were built under", () => {
    const methodology = { version: "1.3.0", url: "https://r.test/screens#changelog" };
    const svg = renderBadge(makeReport({ methodology }));
    expect(svg).toMatch(
      /^<svg [^>]* data-methodology="1\.3\.0"><title>[^<]* \(methodology 1\.3\.0\)<\/title>/,
    );
    expectWellFormedXml(svg);
  });

  it.each([
    [100, "brightgreen"],
    [90, "brightgreen"],
    [89.4, "green"],
    [60, "green"],
    [59, "yellow"],
    [30, "yellow"],
    [29, "orange"],
    [0.3, "orange"], // rounds to 0%, but some revenue is real
    [0, "lightgrey"],
  ] as const)("colours real_usd %s of usd 100 %s", (real, color) => {
    const svg = renderBadge(withShare(real));
    expect(svg).toContain(`fill="${COLORS[color]}"`);
    for (const [other, hex] of Object.entries(COLORS))
      if (other !== color) expect(svg).not.toContain(`fill="${hex}"`);
  });

  it("shows $0.00 without a percent when nothing was reported", () => {
    const svg = renderBadge(makeEmptyReport());
    expect(svg).toContain("<title>x402 real revenue: $0.00/7d (methodology 1.11.0)</title>");
    expect(svg).not.toContain("·");
    expect(svg).toContain(`fill="${COLORS.lightgrey}"`);
  });

  it("says held instead of figures for a merchant the operator holds", () => {
    const svg = renderBadge(makeReport({ held: true, rank_by_real_revenue: null }));
    expect(svg).toContain("<title>x402 real revenue: held (methodology 1.11.0)</title>");
    expect(svg).not.toContain("$");
  });

  it("shows the figures of a report of an attested (frozen) week", () => {
    expect(renderBadge(makeReport({ frozen: true }))).toContain(
      "<title>x402 real revenue: $10.00/7d · 83% (methodology 1.11.0)</title>",
    );
  });

  it("is deterministic", () => {
    expect(renderBadge(makeReport())).toBe(renderBadge(makeReport()));
  });
});
