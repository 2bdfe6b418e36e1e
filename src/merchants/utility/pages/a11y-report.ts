/**
 * axe-core's results as `/api/a11y/check` answers them: one finding per violated rule with its WCAG success
 * criteria and level (from axe's tags), impact, help, and the failing elements (at most `MAX_NODES` shown,
 * all counted); counts by level, impact and criterion over the failing elements; every rule run and its
 * outcome; and what was not checked, with the reason: axe's "needs review" results, the rules not run on
 * jsdom (`NOT_RUN`, those the requested level includes) and what no automated rule judges (`NOT_CHECKED`).
 */
import type { AxeResults, CheckResult, NodeResult, Result } from "axe-core";
import { criteriaOf, type Impact, type Level, levelOf, NOT_CHECKED, NOT_RUN } from "./a11y-rules.ts";
import { clean, clip } from "./element.ts";

/** Elements shown per rule: enough to find the pattern, bounded for a page with thousands. */
export const MAX_NODES = 20;
/** Longest message shown per element. */
const MESSAGE_MAX = 300;

export interface A11yNode {
  /** axe's CSS selector of the element. */
  selector: string;
  /** The element's HTML, cut at 200 characters. */
  snippet: string;
  /** What to fix, or what to review. */
  message: string;
}

interface NodeList {
  /** Every element concerned; `nodes` shows the first `MAX_NODES`. */
  nodes_total: number;
  nodes: A11yNode[];
}

export interface A11yFinding extends NodeList {
  rule: string;
  /** WCAG success criteria, e.g. `1.4.3`; empty for a best practice. */
  criteria: string[];
  /** The rule's WCAG level; null for a best practice. */
  level: Level | null;
  impact: Impact;
  help: string;
  help_url: string;
}

export interface A11yNotChecked extends NodeList {
  /** The axe rule, or null for what no rule here judges. */
  rule: string | null;
  criteria: string[];
  reason: string;
}

export type RuleResult = "violation" | "pass" | "inapplicable";

export interface A11yReport {
  url: string;
  standard: "WCAG 2.2";
  level: Level;
  engine: { name: "axe-core"; version: string };
  findings: A11yFinding[];
  counts: {
    /** Failing elements, over all rules. */
    total: number;
    /** Rules with at least one failing element. */
    rules: number;
    by_level: Record<Level | "best_practice", number>;
    by_impact: Record<Impact, number>;
    by_criterion: Record<string, number>;
  };
  rules_checked: { rule: string; criteria: string[]; level: Level | null; result: RuleResult }[];
  not_checked: A11yNotChecked[];
}

/** A rule as `axe.getRules` describes it. */
export interface RuleInfo {
  ruleId: string;
  help: string;
  tags: string[];
}

export function buildReport(
  results: AxeResults,
  meta: { url: string; level: Level; version: string },
  rulesInScope: readonly RuleInfo[],
): A11yReport {
  const findings = results.violations.map(
    (v): A11yFinding => ({
      rule: v.id,
      criteria: criteriaOf(v.tags),
      level: levelOf(v.tags),
      impact: v.impact ?? "minor",
      help: v.help,
      help_url: v.helpUrl,
      ...nodeList(v.nodes),
    }),
  );
  return {
    url: meta.url,
    standard: "WCAG 2.2",
    level: meta.level,
    engine: { name: "axe-core", version: meta.version },
    findings,
    counts: countsOf(findings),
    rules_checked: rulesChecked(results),
    not_checked: [
      ...results.incomplete.map(needsReview),
      ...rulesInScope
        .filter((r) => NOT_RUN[r.ruleId])
        .map((r) => ({
          rule: r.ruleId,
          criteria: criteriaOf(r.tags),
          reason: `${r.help}: not run, ${NOT_RUN[r.ruleId]}`,
          nodes_total: 0,
          nodes: [],
        })),
      ...NOT_CHECKED.map((n) => ({
        rule: null,
        criteria: n.criteria,
        reason: n.reason,
        nodes_total: 0,
        nodes: [],
      })),
    ],
  };
}

function nodeList(nodes: readonly NodeResult[]): NodeList {
  return {
    nodes_total: nodes.length,
    nodes: nodes.slice(0, MAX_NODES).map((n) => ({
      selector: selectorOf(n),
      snippet: clip(clean(n.html)),
      message: clip(summaryOf(n.failureSummary), MESSAGE_MAX),
    })),
  };
}

/**
 * axe's failure summary on one line: "Fix any of the following:\n  a\n  b\n\nFix all of the following:\n  c"
 * becomes "Fix any of the following: a; b. Fix all of the following: c".
 */
function summaryOf(summary = ""): string {
  const groups: { heading: string; items: string[] }[] = [];
  for (const line of summary.split("\n").map(clean).filter(Boolean)) {
    const group = groups.at(-1);
    if (line.endsWith(":") || !group) groups.push({ heading: line, items: [] });
    else group.items.push(line);
  }
  return groups.map((g) => `${g.heading} ${g.items.join("; ")}`.trim()).join(". ");
}

/** axe's target: one selector per frame or shadow root on the way (here one, frames are not entered). */
function selectorOf(node: NodeResult): string {
  return node.target.map((t) => (Array.isArray(t) ? t.join(" >>> ") : String(t))).join(" ");
}

/** An incomplete rule: axe could not decide, or it asks a person by design. */
function needsReview(r: Result): A11yNotChecked {
  const checks = r.nodes.flatMap((n): CheckResult[] => [...n.any, ...n.all, ...n.none]);
  const errors = checks.filter((c) => c.id === "error-occurred");
  const reason =
    errors.length > 0
      ? `axe-core could not evaluate it on jsdom (${clean(String((errors[0]?.data as { message?: unknown })?.message))})`
      : `needs review: ${[...new Set(checks.map((c) => c.message).filter(Boolean))].slice(0, 3).join("; ")}`;
  return {
    rule: r.id,
    criteria: criteriaOf(r.tags),
    reason: clip(`${r.help}: ${reason}`, MESSAGE_MAX),
    ...nodeList(r.nodes),
  };
}

function rulesChecked(results: AxeResults): A11yReport["rules_checked"] {
  const outcomes: [Result[], RuleResult][] = [
    [results.violations, "violation"],
    [results.passes, "pass"],
    [results.inapplicable, "inapplicable"],
  ];
  return outcomes
    .flatMap(([list, result]) =>
      list.map((r) => ({ rule: r.id, criteria: criteriaOf(r.tags), level: levelOf(r.tags), result })),
    )
    .sort((a, b) => a.rule.localeCompare(b.rule));
}

function countsOf(findings: readonly A11yFinding[]): A11yReport["counts"] {
  const byLevel: Record<Level | "best_practice", number> = { A: 0, AA: 0, AAA: 0, best_practice: 0 };
  const byImpact: Record<Impact, number> = { minor: 0, moderate: 0, serious: 0, critical: 0 };
  const byCriterion: Record<string, number> = {};
  let total = 0;
  for (const f of findings) {
    total += f.nodes_total;
    byLevel[f.level ?? "best_practice"] += f.nodes_total;
    byImpact[f.impact] += f.nodes_total;
    for (const c of f.criteria) byCriterion[c] = (byCriterion[c] ?? 0) + f.nodes_total;
  }
  return { total, rules: findings.length, by_level: byLevel, by_impact: byImpact, by_criterion: byCriterion };
}
