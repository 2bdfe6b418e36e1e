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
    const started = performance.now();
    expect(markupDepth(`${"<div>".repeat(200_000)}deep${"</div>".repeat(200_000)}`)).toBe(200_000);
    // Linear: tens of ms; the quadratic stack of a parser took 16 s.
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
