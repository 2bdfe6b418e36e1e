/** A merchant's report and its evidence as JSON, and the report's JSON Schema. */
import type { Hono } from "hono";
import { reportJsonSchema } from "../../schema.ts";
import { endBlockParam } from "../params.ts";
import type { ReportService } from "../service.ts";

export function reportJsonRoutes(app: Hono, reports: ReportService): void {
  app.get("/v1/reports/base/:address", async (c) => {
    const { report } = await reports.report(c.req.param("address"), endBlockParam(c.req.query("end_block")));
    c.header("Cache-Control", "public, max-age=300");
    return c.json(report);
  });

  app.get("/v1/reports/base/:address/evidence", async (c) => {
    const evidence = await reports.evidence(c.req.param("address"), endBlockParam(c.req.query("end_block")));
    c.header("Cache-Control", "public, max-age=300");
    return c.json(evidence);
  });

  app.get("/v1/schema/report.json", (c) => {
    c.header("Content-Type", "application/schema+json");
    return c.body(JSON.stringify(reportJsonSchema(), null, 2));
  });
}
