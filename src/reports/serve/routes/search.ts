/** The search of merchants and listings (src/reports/week/search.ts) as JSON. */
import type { Hono } from "hono";
import { endBlockParam } from "../params.ts";
import type { ReportService } from "../service.ts";

/** The search path of the report service's API. */
export const SEARCH_PATH = "/v1/search/base";

export function searchRoutes(app: Hono, reports: ReportService): void {
  app.get(SEARCH_PATH, async (c) => {
    const found = await reports.search(c.req.query("q") ?? "", endBlockParam(c.req.query("end_block")));
    c.header("Cache-Control", "public, max-age=300");
    return c.json(found);
  });
}
