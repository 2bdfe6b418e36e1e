import { describe, expect, it } from "vitest";
import { markupDepth } from "../../../../src/merchants/utility/pages/depth.ts";

describe("markupDepth", () => {
  it("counts nesting as a parser would build it, skipping comments, raw text and self-closed elements", () => {
    expect(
      markupDepth(
        '<div><div><span><svg><path/><g><rect/></g></svg></span></div></div><script>if (a<b) "<div><div>"</script><!-- <div><div> -->',
      ),
    ).toBe(5);
  });

  it("closes what an end tag's element left open, and passes over an end tag with nothing open", () => {
    expect(markupDepth(`<section>${"<div>".repeat(10)}</section><section><div></div></section>`)).toBe(11);
    expect(markupDepth(`<div>${"</span>".repeat(1000)}<div></div></div>`)).toBe(2);
  });

  it("does not take a page that leaves paragraphs, cells or formatting open for deep", () => {
    expect(markupDepth(`<body>${"<p><b>text<li>item<td>cell".repeat(1000)}</body>`)).toBe(0);
  });

  it("stays linear on issue 69's 200,000 nested divs", () => {
    // Measured against itself, in CPU time, not against a wall clock: a loaded machine slows both runs alike
    // (a 2 s bound failed at 2.45 s on a busy 2-core VM, where the 200,000 take about 0.8 s unloaded). Noise
    // only ever adds time (a collection, another thread's share of the process's CPU): the least of a few
    // runs is the work itself. One run each failed a clean clone at 31.9 for ten times the divs (11-12
    // usual), so the sizes are twenty apart: about 20-30 times the work when linear, 400 when quadratic.
    const cpuMs = (n: number) => {
      const page = `${"<div>".repeat(n)}deep${"</div>".repeat(n)}`;
      const before = process.cpuUsage();
      expect(markupDepth(page)).toBe(n);
      const used = process.cpuUsage(before);
      return (used.user + used.system) / 1000;
    };
    const least = (n: number, runs: number) => Math.min(...Array.from({ length: runs }, () => cpuMs(n)));
    cpuMs(10_000); // compiled before it is timed
    const small = least(10_000, 5);
    const large = least(200_000, 2);
    expect(large / small).toBeLessThan(100);
  });
});
