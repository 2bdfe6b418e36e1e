/** `/api/a11y/check` on the saved pages: each rule's hits, exactly, and level filtering. */
import { describe, expect, it } from "vitest";
import { checkAccessibility } from "../../../../src/merchants/utility/pages/a11y-engine.ts";
import { RULES } from "../../../../src/merchants/utility/pages/a11y-rules.ts";
import { parsePage } from "../../../../src/merchants/utility/pages/page.ts";
import { fixturePage } from "./fixtures.ts";

const wcag = () => fixturePage("wcag", "https://shop.example.com/contact");
const brief = (report: ReturnType<typeof checkAccessibility>) =>
  report.findings.map((f) => `${f.criterion} ${f.rule} ${f.selector}`);

describe("checkAccessibility", () => {
  it("finds every planted problem at AAA, mapped to its criterion", () => {
    const report = checkAccessibility(wcag(), "AAA");
    expect(brief(report)).toEqual([
      "1.1.1 image-alt html > body > div:nth-of-type(1) > a:nth-of-type(1) > img",
      "1.3.1 label #name",
      "1.3.1 label #topic",
      "1.3.1 table-headers html > body > table",
      "1.3.1 heading-order html > body > h3",
      "1.4.3 color-contrast html > body > p:nth-of-type(1)",
      "1.4.6 color-contrast-enhanced html > body > p:nth-of-type(2)",
      "1.4.4 meta-viewport html > head > meta:nth-of-type(2)",
      "2.2.1 meta-refresh html > head > meta:nth-of-type(3)",
      "2.4.2 document-title html > head > title",
      "2.4.4 link-name html > body > div:nth-of-type(1) > a:nth-of-type(1)",
      "2.4.4 link-name html > body > div:nth-of-type(1) > a:nth-of-type(2)",
      "2.4.6 empty-heading html > body > h2",
      "3.1.1 html-has-lang html",
      "3.1.2 valid-lang html > body > p:nth-of-type(4)",
      "4.1.1 duplicate-id html > body > div:nth-of-type(3)",
      "4.1.1 duplicate-id html > body > div:nth-of-type(4)",
      "4.1.2 button-name html > body > form > button:nth-of-type(1)",
      "4.1.2 button-name html > body > form > input:nth-of-type(5)",
      "4.1.2 button-name html > body > form > div",
      "4.1.2 frame-title html > body > iframe:nth-of-type(1)",
    ]);
    expect(report.counts).toEqual({
      total: 21,
      by_level: { A: 16, AA: 4, AAA: 1 },
      by_impact: { minor: 3, moderate: 2, serious: 8, critical: 8 },
      by_criterion: {
        "1.1.1": 1,
        "1.3.1": 4,
        "1.4.3": 1,
        "1.4.6": 1,
        "1.4.4": 1,
        "2.2.1": 1,
        "2.4.2": 1,
        "2.4.4": 2,
        "2.4.6": 1,
        "3.1.1": 1,
        "3.1.2": 1,
        "4.1.1": 2,
        "4.1.2": 4,
      },
    });
  });

  it("says why, with numbers where it can", () => {
    const report = checkAccessibility(wcag(), "AAA");
    const message = (rule: string) => report.findings.filter((f) => f.rule === rule).map((f) => f.message);
    expect(message("color-contrast")).toEqual(["Contrast 2.85:1, below 4.5:1."]);
    expect(message("color-contrast-enhanced")).toEqual(["Contrast 4.54:1, below 7:1."]);
    expect(message("heading-order")).toEqual(["Heading level skipped: h1 followed by h3."]);
    expect(message("duplicate-id")).toEqual([
      'id="dup" is used more than once.',
      'id="email" is used more than once and is referenced by a label or ARIA attribute.',
    ]);
    expect(report.findings[0]).toMatchObject({
      level: "A",
      impact: "critical",
      criterion_name: "Non-text Content",
      snippet: '<img src="/logo.png">',
    });
  });

  it("checks up to the requested level only", () => {
    const a = checkAccessibility(wcag(), "A");
    expect(a.counts.by_level).toEqual({ A: 16, AA: 0, AAA: 0 });
    expect(a.rules_checked.every((r) => r.level === "A")).toBe(true);
    const aa = checkAccessibility(wcag(), "AA");
    expect(aa.counts.by_level).toEqual({ A: 16, AA: 4, AAA: 0 });
    expect(aa.rules_checked).toHaveLength(RULES.filter((r) => r.level !== "AAA").length);
  });

  it("passes a well-built page and still says what it could not check", () => {
    const report = checkAccessibility(
      fixturePage("article", "https://shore.example.com/guides/tide-pools"),
      "AAA",
    );
    expect(report.findings).toEqual([]);
    expect(report.rules_checked.every((r) => r.passed)).toBe(true);
    expect(report.not_checked.length).toBeGreaterThan(0);
  });

  it("knows what labels, names and large text are", () => {
    const page = parsePage(
      `<html lang="en"><head><title>ok</title></head><body><main>
        <label>Name <input id="a"></label>
        <input id="b" aria-labelledby="lb"><span id="lb">Town</span>
        <input id="c" title="Postcode">
        <input id="d" aria-labelledby="missing">
        <a href="/x"><img src="x.png" alt="Home"></a>
        <a href="/y" aria-label="Basket"><svg aria-hidden="true"></svg></a>
        <button><svg role="img"><title>Close</title></svg></button>
        <p style="color:#777;background-color:#fff;font-size:24px">Large grey text passes at 3:1.</p>
        <p style="color:#777;background:url(x.png)">Unknown background: not judged.</p>
        <table role="presentation"><tr><td>a</td></tr><tr><td>b</td></tr></table>
        <h2>Fine</h2><h3>Also fine</h3><h2>Back up</h2>
      </main></body></html>`,
      "https://example.com/",
    );
    expect(brief(checkAccessibility(page, "AA"))).toEqual(["1.3.1 label #d"]);
  });
});
