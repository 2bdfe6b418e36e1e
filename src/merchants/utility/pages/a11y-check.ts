import { z } from "zod";
import type { FetchPolicy } from "../../../merchant-kit/index.ts";
import { defineEndpoint } from "../../../merchant-kit/index.ts";
import { onFirstUse } from "../lazy.ts";
import { PRICES } from "../prices.ts";
import type { AuditJob } from "./a11y-engine.ts";
import type { A11yReport } from "./a11y-report.ts";
import { fetchPage, PAGE_ERRORS, PageUrl } from "./page.ts";
import { PageError } from "./parse.ts";
import { DEFAULT_PAGE_BUDGET, type PageBudget, PageWorker } from "./work.ts";

/**
 * Largest page audited, in elements (start tags). axe-core on jsdom costs 2-3 ms of CPU an element (jsdom
 * matches each element against its whole default stylesheet to compute its style; measured in
 * pages/README.md): 3,300 elements took 7-9 s of CPU, 8,200 took 18 s, 10,700 took 37 s, and on a loaded
 * host 7,990 took 28 s (npm run bench:worst-case), past the 20 CPU-s its price buys. 5,000 elements stay
 * inside that budget, which is enforced too (`work.ts`): a larger page is refused (422, not charged)
 * before any work, one that costs more all the same is stopped at its budget.
 */
export const MAX_ELEMENTS = 5_000;

/** Time budget of a call, fetch (at most 10 s) and audit together: past it, a 504, not charged. */
const TIMEOUT_MS = 45_000;

/** Heap of the audit's thread at most: a page past it ends the thread (then refused as too complex), not the host. */
const WORKER_HEAP_MB = 768;

/** An audit thread's start (jsdom and axe-core) costs about 2.5 s of CPU: kept two minutes between audits. */
const AUDIT_IDLE_MS = 120_000;

const Level = z.enum(["A", "AA", "AAA"]);
const Impact = z.enum(["minor", "moderate", "serious", "critical"]);
const Count = z.number().int();
const Criteria = z
  .array(z.string())
  .describe("WCAG success criteria, e.g. `1.4.3`; empty for a best practice.");
const Nodes = {
  nodes_total: Count.describe("Every element concerned; `nodes` shows the first 20."),
  nodes: z.array(
    z.object({
      selector: z.string().describe("axe-core's CSS selector of the element."),
      snippet: z.string().describe("The element's HTML, cut at 200 characters."),
      message: z.string().describe("What to fix, or what to review, cut at 300 characters."),
    }),
  ),
};

const A11yOutput = z.object({
  url: z.string().describe("The final URL, after redirects."),
  standard: z.literal("WCAG 2.2"),
  level: Level.describe("The conformance level checked: rules of this level and below, and best practices."),
  engine: z.object({ name: z.literal("axe-core"), version: z.string() }),
  findings: z
    .array(
      z.object({
        rule: z.string().describe("axe-core's rule id (or `color-contrast-inline`, checked here)."),
        criteria: Criteria,
        level: Level.nullable().describe("The rule's WCAG level; null for an axe best practice."),
        impact: Impact,
        help: z.string(),
        help_url: z.string(),
        ...Nodes,
      }),
    )
    .describe("One per violated rule, in axe-core's order."),
  counts: z.object({
    total: Count.describe("Failing elements, over all rules."),
    rules: Count.describe("Rules with at least one failing element."),
    by_level: z.object({ A: Count, AA: Count, AAA: Count, best_practice: Count }),
    by_impact: z.object({ minor: Count, moderate: Count, serious: Count, critical: Count }),
    by_criterion: z.record(z.string(), Count),
  }),
  rules_checked: z.array(
    z.object({
      rule: z.string(),
      criteria: Criteria,
      level: Level.nullable(),
      result: z.enum(["violation", "pass", "inapplicable"]),
    }),
  ),
  not_checked: z
    .array(
      z.object({
        rule: z.string().nullable().describe("The axe rule, or null for what no automated rule judges."),
        criteria: Criteria,
        reason: z.string(),
        ...Nodes,
      }),
    )
    .describe(
      "What was not judged, never counted as passed: axe's needs-review results, its rules that need a rendering engine, and what needs a person.",
    ),
});

/** `/api/a11y/check`, fetching under `policy`. */
export function a11yCheckEndpoint(policy: FetchPolicy, budget: PageBudget = DEFAULT_PAGE_BUDGET) {
  const price = PRICES["/api/a11y/check"];
  // The host's audit process, started by the first audit (jsdom and axe-core load there, not here).
  const audit = onFirstUse(
    () =>
      new PageWorker(price, budget, {
        module: new URL("./a11y-worker.ts", import.meta.url),
        idleMs: AUDIT_IDLE_MS,
        maxHeapMb: WORKER_HEAP_MB,
      }),
  );
  return defineEndpoint({
    method: "GET",
    path: "/api/a11y/check",
    price,
    description: `Accessibility audit of a web page with axe-core (query \`url\`, option \`level\` A, AA or AAA, default AA) on the page's HTML, parsed without running its scripts: each violated rule with its WCAG 2.2 success criteria, level, impact, help, and the failing elements' CSS selectors and HTML, with counts by level, impact and criterion. What needs rendering (contrast from stylesheets, layout, target size), interaction or a person is listed under not_checked, with the reason. Pages of up to ${MAX_ELEMENTS.toLocaleString("en")} elements.`,
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
        engine: { name: "axe-core", version: "4.14.1" },
        findings: [
          {
            rule: "image-alt",
            criteria: ["1.1.1"],
            level: "A",
            impact: "critical",
            help: "Images must have alternative text",
            help_url: "https://dequeuniversity.com/rules/axe/4.14/image-alt?application=axeAPI",
            nodes_total: 1,
            nodes: [
              {
                selector: 'img[src$="logo.png"]',
                snippet: '<img src="/logo.png">',
                message:
                  "Fix any of the following: Element does not have an alt attribute aria-label attribute does not exist or is empty …",
              },
            ],
          },
        ],
        counts: {
          total: 1,
          rules: 1,
          by_level: { A: 1, AA: 0, AAA: 0, best_practice: 0 },
          by_impact: { minor: 0, moderate: 0, serious: 0, critical: 1 },
          by_criterion: { "1.1.1": 1 },
        },
        rules_checked: [
          { rule: "document-title", criteria: ["2.4.2"], level: "A", result: "pass" },
          { rule: "image-alt", criteria: ["1.1.1"], level: "A", result: "violation" },
        ],
        not_checked: [
          {
            rule: "color-contrast",
            criteria: ["1.4.3"],
            reason:
              "Elements must meet minimum color contrast ratio thresholds: not run, needs the painted background behind the text (layout and painting, which jsdom lacks); only colours set in the element's own inline style are checked (color-contrast-inline)",
            nodes_total: 0,
            nodes: [],
          },
          {
            rule: null,
            criteria: ["2.1.1", "2.1.2"],
            reason: "keyboard operability and keyboard traps need interaction",
            nodes_total: 0,
            nodes: [],
          },
        ],
      },
    },
    timeoutMs: TIMEOUT_MS,
    errors: {
      ...PAGE_ERRORS,
      422: `${PAGE_ERRORS[422]} Or the page is too large for the audit (too_complex): over ${MAX_ELEMENTS} elements, or more CPU or memory than its price buys.`,
    },
    handler: async (input, ctx) => {
      const page = await fetchPage(input.url, policy, ctx.signal);
      const elements = countElements(page.html);
      if (elements > MAX_ELEMENTS) {
        throw new PageError(
          `the page has about ${elements} elements; the audit takes pages of up to ${MAX_ELEMENTS}`,
          "too_complex",
        );
      }
      const job: AuditJob = { html: page.html, url: page.url, level: input.level };
      return await audit().runJob<A11yReport>(job, ctx.signal);
    },
  });
}

/** Start tags: the elements the parser will make, give or take a few it implies (tbody, head). */
function countElements(html: string): number {
  return html.match(/<[a-zA-Z]/g)?.length ?? 0;
}
