/**
 * One merchant's five URLs rendered from its documents, as the report service's routes render them
 * (src/reports/serve/routes/): the same functions, the same content types. `publish` uses this instead of five
 * requests a merchant when it has the store; the test compares every file with the route's answer.
 */

import type { MerchantDocuments } from "../model.ts";
import { renderBadge } from "../render/badge.ts";
import { renderEvidencePage } from "../render/evidence-page.ts";
import { renderReportPage } from "../render/report-page.ts";

/** What Hono's `c.json` and `c.html` send, and the badge route's type. */
const JSON_TYPE = "application/json";
const HTML_TYPE = "text/html; charset=UTF-8";
const SVG_TYPE = "image/svg+xml; charset=utf-8";

export interface RenderedFile {
  path: string;
  contentType: string;
  body: string;
}

export function merchantFiles(
  m: MerchantDocuments,
  notice: string | undefined,
  chains: readonly string[] = [],
): RenderedFile[] {
  const a = m.report.address;
  const c = m.report.chain;
  return [
    { path: `/v1/reports/${c}/${a}`, contentType: JSON_TYPE, body: JSON.stringify(m.report) },
    { path: `/v1/reports/${c}/${a}/evidence`, contentType: JSON_TYPE, body: JSON.stringify(m.evidence) },
    {
      path: `/reports/${c}/${a}`,
      contentType: HTML_TYPE,
      body: renderReportPage(m.report, m.details, { notice, chains }),
    },
    {
      path: `/reports/${c}/${a}/evidence`,
      contentType: HTML_TYPE,
      body: renderEvidencePage(m.evidence, { notice }),
    },
    { path: `/badges/${c}/${a}.svg`, contentType: SVG_TYPE, body: renderBadge(m.report) },
  ];
}
