/** The search of merchants and listings (src/reports/week/search.ts) as JSON. */
import type { Hono } from "hono";
import { endBlockParam } from "../params.ts";
import type { ReportService } from "../service.ts";

/** The search path of a chain's (its slug's) reports. */
export const searchPath = (chain: string): string => `/v1/search/${chain}`;

/** Base's. */
export const SEARCH_PATH = searchPath("base");

export function searchRoutes(app: Hono, reports: ReportService): void {
  app.get(searchPath(reports.chain.slug), async (c) => {
    const found = await reports.search(c.req.query("q") ?? "", endBlockParam(c.req.query("end_block")));
    c.header("Cache-Control", "public, max-age=300");
    return c.json(found);
  });
}
