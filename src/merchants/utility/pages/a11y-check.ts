import { z } from "zod";
import { defineEndpoint } from "../../../merchant-kit/catalogue.ts";
import type { FetchPolicy } from "../../../merchant-kit/fetch/index.ts";
import { checkAccessibility } from "./a11y-engine.ts";
import { RULES } from "./a11y-rules.ts";
import { loadPage, PAGE_ERRORS, PageUrl } from "./page.ts";

const Level = z.enum(["A", "AA", "AAA"]);
const Impact = z.enum(["minor", "moderate", "serious", "critical"]);
const Count = z.number().int();

const A11yOutput = z.object({
  url: z.string().describe("The final URL, after redirects."),
  standard: z.literal("WCAG 2.2"),
  level: Level.describe("The conformance level checked: rules of this level and below."),
  findings: z.array(
    z.object({
      rule: z.string(),
      criterion: z.string().describe("WCAG success criterion, e.g. `1.1.1`."),
      criterion_name: z.string(),
      level: Level,
      impact: Impact,
      message: z.string(),
      selector: z.string().describe("CSS selector of the element."),
      snippet: z.string().describe("The element's HTML, cut at 200 characters."),
    }),
  ),
  counts: z.object({
    total: Count,
    by_level: z.object({ A: Count, AA: Count, AAA: Count }),
    by_impact: z.object({ minor: Count, moderate: Count, serious: Count, critical: Count }),
    by_criterion: z.record(z.string(), Count),
  }),
  rules_checked: z.array(
    z.object({
      rule: z.string(),
      criterion: z.string(),
      level: Level,
      description: z.string(),
      passed: z.boolean(),
    }),
  ),
  not_checked: z.array(z.string()).describe("What a static check cannot judge."),
});

const RULE_LIST = RULES.map((r) => `${r.criterion} ${r.id}`).join(", ");

/** `/api/a11y/check`, fetching under `policy`. */
export function a11yCheckEndpoint(policy: FetchPolicy) {
  return defineEndpoint({
    method: "GET",
    path: "/api/a11y/check",
    price: "0.01",
    description: `Static accessibility audit of a web page (query \`url\`, option \`level\` A, AA or AAA, default AA): WCAG 2.2 findings mapped to success criteria and levels, with impact, CSS selector and HTML snippet of each element, and counts by level, impact and criterion. Rules: ${RULE_LIST}. What needs rendering or interaction is listed under not_checked.`,
    input: z.object({
      url: PageUrl,
      level: Level.default("AA").describe("Check rules up to this WCAG level: A, AA (default) or AAA."),
    }),
    output: A11yOutput,
    example: {
      input: { url: "https://example.com/", level: "AA" },
      output: {
        url: "https://example.com/",
        standard: "WCAG 2.2",
        level: "AA",
        findings: [
          {
            rule: "html-has-lang",
            criterion: "3.1.1",
            criterion_name: "Language of Page",
            level: "A",
            impact: "serious",
            message: "<html> has no lang attribute.",
            selector: "html",
            snippet: "<html><head><title>Example</title></head>…",
          },
        ],
        counts: {
          total: 1,
          by_level: { A: 1, AA: 0, AAA: 0 },
          by_impact: { minor: 0, moderate: 0, serious: 1, critical: 0 },
          by_criterion: { "3.1.1": 1 },
        },
        rules_checked: [
          {
            rule: "html-has-lang",
            criterion: "3.1.1",
            level: "A",
            description: "<html> without a lang attribute, or with one that is not a valid BCP 47 tag.",
            passed: false,
          },
        ],
        not_checked: ["2.1.1 keyboard operability and 2.1.2 keyboard traps (needs interaction)"],
      },
    },
    timeoutMs: 20_000,
    errors: PAGE_ERRORS,
    handler: async (input, ctx) =>
      checkAccessibility(await loadPage(input.url, policy, ctx.signal), input.level),
  });
}
