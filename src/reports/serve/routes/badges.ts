/** A merchant's badge (src/reports/render/badge.ts) as an SVG file. */
import type { Hono } from "hono";
import { onNotFound } from "../../../common/http.ts";
import { renderBadge } from "../../render/badge.ts";
import { endBlockParam } from "../params.ts";
import type { ReportService } from "../service.ts";

export function badgeRoutes(app: Hono, reports: ReportService): void {
  app.get("/badges/base/:file", async (c) => {
    const match = /^(.+)\.svg$/.exec(c.req.param("file"));
    if (!match) return onNotFound(c);
    const { report } = await reports.report(match[1] ?? "", endBlockParam(c.req.query("end_block")));
    c.header("Content-Type", "image/svg+xml; charset=utf-8");
    c.header("Cache-Control", "public, max-age=300");
    return c.body(renderBadge(report));
  });
}
