/** A merchant's badge (src/reports/render/badge.ts) as an SVG file, kept once rendered (answers.ts). */
import type { Hono } from "hono";
import { onNotFound } from "../../../common/http.ts";
import { renderBadge } from "../../render/badge.ts";
import type { Answers } from "../answers.ts";
import { endBlockParam, parseAddress } from "../params.ts";
import { answerCached } from "../respond.ts";
import type { ReportService } from "../service.ts";

export function badgeRoutes(app: Hono, reports: ReportService, answers: Answers): void {
  const chain = reports.chain.slug;
  app.get(`/badges/${chain}/:file`, async (c) => {
    const match = /^(.+)\.svg$/.exec(c.req.param("file"));
    if (!match) return onNotFound(c);
    const endBlock = endBlockParam(c.req.query("end_block"));
    const address = parseAddress(match[1] ?? "");
    return answerCached(c, answers, reports, `/badges/${chain}/${address}.svg`, endBlock, async (end) => {
      const { report } = await reports.report(address, end);
      return {
        body: renderBadge(report),
        type: "image/svg+xml; charset=utf-8",
        builtAt: report.generated_at,
      };
    });
  });
}
