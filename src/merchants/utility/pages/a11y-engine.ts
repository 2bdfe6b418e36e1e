/**
 * Runs the rules of `a11y-rules.ts` on a page and reports findings at or below the requested WCAG
 * conformance level (A < AA < AAA), with counts by level, impact and criterion.
 */
import { type Impact, type Level, NOT_CHECKED, RULES } from "./a11y-rules.ts";
import { selectorOf, snippetOf } from "./element.ts";
import type { Page } from "./page.ts";

export const LEVELS: readonly Level[] = ["A", "AA", "AAA"];

export interface Finding {
  rule: string;
  criterion: string;
  criterion_name: string;
  level: Level;
  impact: Impact;
  message: string;
  selector: string;
  snippet: string;
}

export interface A11yReport {
  url: string;
  standard: "WCAG 2.2";
  level: Level;
  findings: Finding[];
  counts: {
    total: number;
    by_level: Record<Level, number>;
    by_impact: Record<Impact, number>;
    by_criterion: Record<string, number>;
  };
  rules_checked: { rule: string; criterion: string; level: Level; description: string; passed: boolean }[];
  not_checked: string[];
}

export function checkAccessibility(page: Page, level: Level = "AA"): A11yReport {
  const rules = RULES.filter((r) => LEVELS.indexOf(r.level) <= LEVELS.indexOf(level));
  const findings: Finding[] = [];
  const rulesChecked: A11yReport["rules_checked"] = [];
  for (const rule of rules) {
    const hits = rule.check(page.document);
    rulesChecked.push({
      rule: rule.id,
      criterion: rule.criterion,
      level: rule.level,
      description: rule.description,
      passed: hits.length === 0,
    });
    for (const hit of hits) {
      findings.push({
        rule: rule.id,
        criterion: rule.criterion,
        criterion_name: rule.criterion_name,
        level: rule.level,
        impact: rule.impact,
        message: hit.message,
        selector: selectorOf(hit.element),
        snippet: snippetOf(hit.element),
      });
    }
  }
  const byLevel: Record<Level, number> = { A: 0, AA: 0, AAA: 0 };
  const byImpact: Record<Impact, number> = { minor: 0, moderate: 0, serious: 0, critical: 0 };
  const byCriterion: Record<string, number> = {};
  for (const f of findings) {
    byLevel[f.level] += 1;
    byImpact[f.impact] += 1;
    byCriterion[f.criterion] = (byCriterion[f.criterion] ?? 0) + 1;
  }
  return {
    url: page.url,
    standard: "WCAG 2.2",
    level,
    findings,
    counts: { total: findings.length, by_level: byLevel, by_impact: byImpact, by_criterion: byCriterion },
    rules_checked: rulesChecked,
    not_checked: [...NOT_CHECKED],
  };
}
