import { describe, expect, it } from "vitest";
import { CHART_COLORS, dailyChartSvg } from "../../../src/reports/render/chart.ts";
import { expectWellFormedXml, makeEmptyReport, makeReport } from "../fixtures.ts";

const groups = (svg: string) => [...svg.matchAll(/<g class="day" data-date="([^"]*)">(.*?)<\/g>/g)];
const bar = (group: string, cls: "usd" | "real") => {
  const m = new RegExp(`<rect class="${cls}" x="[^"]+" y="([^"]+)" width="[^"]+" height="([^"]+)"`).exec(
    group,
  );
  if (!m) throw new Error(`no ${cls} bar in ${group}`);
  return { y: Number(m[1]), height: Number(m[2]) };
};

describe("dailyChartSvg", () => {
  it("draws one bar group per date, in order, with MM-DD labels", () => {
    const { daily } = makeReport();
    const svg = dailyChartSvg(daily);
    const found = groups(svg);
    expect(found.map((g) => g[1])).toEqual(daily.map((d) => d.date));
    for (const [i, g] of found.entries()) {
      expect(g[2]).toContain(`>${daily[i]?.date.slice(5)}</text>`);
      expect(g[2]).toContain(`fill="${CHART_COLORS.usd}"`);
      expect(g[2]).toContain(`fill="${CHART_COLORS.real_usd}"`);
    }
    expectWellFormedXml(svg);
  });

  it("scales bars to the largest day and labels the maximum on the y axis", () => {
    const { daily } = makeReport();
    const svg = dailyChartSvg(daily);
    const found = groups(svg).map((g) => g[2] ?? "");
    const tallest = bar(found[5] ?? "", "usd"); // 2025-06-06, $3.00
    expect(svg).toContain(">$3.00</text>");
    for (const g of found) expect(bar(g, "usd").height).toBeLessThanOrEqual(tallest.height);
    // $1.50 is half of $3.00; the real bar of the same day is shorter than the reported one.
    expect(bar(found[1] ?? "", "usd").height).toBeCloseTo(tallest.height / 2, 1);
    expect(bar(found[1] ?? "", "real").height).toBeLessThan(bar(found[1] ?? "", "usd").height);
    // The zero day has no bar height at all.
    expect(bar(found[3] ?? "", "usd").height).toBe(0);
  });

  it("keeps a day of a few cents visible beside a large day", () => {
    const svg = dailyChartSvg([
      { date: "2025-06-01", tx: 1, usd: 0.01, real_usd: 0.01 },
      { date: "2025-06-02", tx: 9999, usd: 99999.99, real_usd: 0 },
    ]);
    expect(bar(groups(svg)[0]?.[2] ?? "", "usd").height).toBeGreaterThanOrEqual(1);
  });

  it("draws an empty baseline for all-zero data without NaN or Infinity", () => {
    const { daily } = makeEmptyReport();
    const svg = dailyChartSvg(daily);
    expect(svg).not.toMatch(/NaN|Infinity/);
    expect(groups(svg)).toHaveLength(daily.length);
    for (const g of groups(svg)) expect(bar(g[2] ?? "", "usd").height).toBe(0);
    expect(svg).toContain('class="baseline"');
    expect(svg).toContain(">$0.00</text>");
    expectWellFormedXml(svg);
  });

  it("copes with no dates at all", () => {
    const svg = dailyChartSvg([]);
    expect(svg).not.toMatch(/NaN|Infinity/);
    expect(groups(svg)).toHaveLength(0);
    expect(svg).toContain('class="baseline"');
    expectWellFormedXml(svg);
  });

  it("is an accessible image with a summary in its title and aria-label", () => {
    const svg = dailyChartSvg(makeReport().daily);
    expect(svg).toMatch(/^<svg [^>]*role="img"/);
    const label = /aria-label="([^"]*)"/.exec(svg)?.[1];
    expect(label).toContain("2025-06-01 to 2025-06-08");
    expect(label).toContain("$12.00 reported");
    expect(label).toContain("$10.00 real");
    expect(svg).toContain(`<title>${label}</title>`);
  });

  it("escapes text", () => {
    const svg = dailyChartSvg([{ date: '<b>"&', tx: 1, usd: 1, real_usd: 1 }]);
    expect(svg).not.toContain("<b>");
    expect(svg).toContain("&lt;b&gt;&quot;&amp;");
    expectWellFormedXml(svg);
  });
});
