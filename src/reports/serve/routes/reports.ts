/**
 * A merchant's report and its evidence as JSON, kept once rendered (answers.ts), the sealed weeks with their
 * attestations, and the report's JSON Schema.
 */
import type { Hono } from "hono";
import { reportJsonSchema } from "../../schema.ts";
import type { Answers } from "../answers.ts";
import { endBlockParam, parseAddress } from "../params.ts";
import { answerCached } from "../respond.ts";
import type { ReportService } from "../service.ts";

const JSON_TYPE = "application/json";

/** One chain's reports, evidence and sealed weeks, under its slug. */
export function reportJsonRoutes(app: Hono, reports: ReportService, answers: Answers): void {
  const chain = reports.chain.slug;
  app.get(`/v1/reports/${chain}/:address`, async (c) => {
    const endBlock = endBlockParam(c.req.query("end_block"));
    const address = parseAddress(c.req.param("address"));
    return answerCached(c, answers, reports, `/v1/reports/${chain}/${address}`, endBlock, async (end) => {
      const { report } = await reports.report(address, end);
      return { body: JSON.stringify(report), type: JSON_TYPE, builtAt: report.generated_at };
    });
  });

  app.get(`/v1/reports/${chain}/:address/evidence`, async (c) => {
    const endBlock = endBlockParam(c.req.query("end_block"));
    const address = parseAddress(c.req.param("address"));
    const what = `/v1/reports/${chain}/${address}/evidence`;
    return answerCached(c, answers, reports, what, endBlock, async (end) => {
      const evidence = await reports.evidence(address, end);
      return { body: JSON.stringify(evidence), type: JSON_TYPE, builtAt: evidence.generated_at };
    });
  });

  // The sealed weeks and their attestations: a week is added when sealed, and its attestation when mined.
  app.get(`/v1/weeks/${chain}`, async (c) => {
    c.header("Cache-Control", "no-cache");
    return c.json(await reports.weeks());
  });
}

/** The report's JSON Schema: one for every chain. */
export function reportSchemaRoute(app: Hono): void {
  app.get("/v1/schema/report.json", (c) => {
    c.header("Content-Type", "application/schema+json");
    return c.body(JSON.stringify(reportJsonSchema(), null, 2));
  });
}
