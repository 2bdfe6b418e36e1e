/**
 * axe-core on a page parsed by jsdom. Each audit gets its own jsdom window, and axe's source runs inside that
 * window's script context (compiled once per thread): nothing of one page's axe, DOM or caches is visible to
 * another, and no global of this thread is touched. No page script runs (see `parseForAudit`).
 *
 * The run: axe's rules tagged with the requested WCAG level and below, plus its best practices (as a default
 * axe run has), minus the rules that need rendering (`NOT_RUN`), plus the hand-written inline-contrast rules
 * (`CUSTOM_RULES`). One adjustment: axe passes "one main landmark" and "one level-1 heading" when a modal
 * dialog covers the page, which it detects by probing points of the layout (`elementsFromPoint`, absent from
 * jsdom: both rules would always fail with an error). On a page with no dialog element at all
 * (`dialog, [role=dialog], [aria-modal=true]`) that probe is skipped and the rules judge the page as it is;
 * on a page with one, axe's own logic runs, and if it needs the probe the rule is reported as not checked.
 */
import { createRequire } from "node:module";
import { Script } from "node:vm";
import type { AxeResults, RunOptions } from "axe-core";
import { onFirstUse } from "../lazy.ts";
import { type A11yReport, buildReport, type RuleInfo } from "./a11y-report.ts";
import { CUSTOM_RULES, type Level, NOT_RUN, tagsUpTo } from "./a11y-rules.ts";
import { parseForAudit } from "./dom.ts";

/** What a worker is asked: the page as fetched, and the level to check. */
export interface AuditJob {
  html: string;
  url: string;
  level: Level;
}

interface AxeInWindow {
  version: string;
  configure(spec: { checks: unknown[]; rules: unknown[] }): void;
  getRules(tags?: string[]): RuleInfo[];
  run(context: unknown, options: RunOptions & { checks?: Record<string, unknown> }): Promise<AxeResults>;
  /** axe's loaded audit: read for the default options of the two modal-aware checks. */
  _audit: { checks: Record<string, { options: Record<string, unknown> } | undefined> };
}

/** axe-core's source, compiled once per thread and run in each page's window. */
const axeSource = onFirstUse(() => {
  const axe = createRequire(import.meta.url)("axe-core") as { source: string };
  return new Script(axe.source, { filename: "axe-core/axe.js" });
});

/** The checks behind landmark-one-main and page-has-heading-one that skip a page a modal covers. */
const MODAL_AWARE_CHECKS = ["page-has-main", "page-has-heading-one"];
/** axe's definite modals (`isModalOpen`). */
const DIALOGS = "dialog, [role=dialog], [aria-modal=true]";

/** Audits `job.html` as served from `job.url`. */
export async function auditHtml(job: AuditJob): Promise<A11yReport> {
  const page = parseForAudit(job.html, job.url);
  try {
    axeSource().runInContext(page.context);
    const axe = page.global.axe as AxeInWindow;
    axe.configure({
      checks: CUSTOM_RULES.map((r) => r.check),
      rules: CUSTOM_RULES.map((r) => r.rule),
    });
    const tags = tagsUpTo(job.level);
    const results = await axe.run(page.document, {
      runOnly: { type: "tag", values: tags },
      rules: Object.fromEntries(Object.keys(NOT_RUN).map((id) => [id, { enabled: false }])),
      ...(page.document.querySelector(DIALOGS) === null && { checks: withoutModalProbe(axe) }),
      resultTypes: ["violations", "incomplete"],
      // Frames' documents are not loaded; preloading would fetch stylesheets (no rule run here needs them).
      iframes: false,
      preload: false,
    });
    return buildReport(results, { url: job.url, level: job.level, version: axe.version }, axe.getRules(tags));
  } finally {
    page.close();
  }
}

function withoutModalProbe(axe: AxeInWindow): Record<string, unknown> {
  return Object.fromEntries(
    MODAL_AWARE_CHECKS.map((id) => {
      const defaults = axe._audit.checks[id]?.options;
      if (!defaults) throw new Error(`axe-core has no check ${id}: review a11y-engine.ts`);
      return [id, { options: { ...defaults, passForModal: false } }];
    }),
  );
}
