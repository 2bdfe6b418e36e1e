import { Hono } from "hono";
import { type CheckFn, healthRoutes } from "../../common/health.ts";
import { corsAnswers, onError, onNotFound } from "../../common/http.ts";
import { answerEveryMethod } from "../../common/methods.ts";
import { limitUnpaid, type UnpaidLimit } from "../../common/rate-limit.ts";
import { REQUEST_ID_HEADER, requestLog } from "../../common/request-log.ts";
import { renderErrorPage } from "../render/page-states.ts";
import { chainsWithData } from "./across.ts";
import { Answers } from "./answers.ts";
import type { ServiceHealth } from "./readiness.ts";
import { acrossRoutes } from "./routes/across.ts";
import { badgeRoutes } from "./routes/badges.ts";
import { datasetRoutes } from "./routes/datasets.ts";
import { flagRoutes } from "./routes/flags.ts";
import { leaderboardRoutes } from "./routes/leaderboard.ts";
import { mcpRoutes } from "./routes/mcp.ts";
import { pageRoutes, screensPageRoute } from "./routes/pages.ts";
import { reportJsonRoutes, reportSchemaRoute } from "./routes/reports.ts";
import { searchRoutes } from "./routes/search.ts";
import type { ReportService } from "./service.ts";

export interface ReportRoutesOptions {
  /** A banner for every page when the data is not the real chain's (the sample week, the devnet demo). */
  notice?: () => Promise<string | undefined>;
  /** What `/healthz` says beside `ok`; default `{status: "ok"}`. */
  health?: () => ServiceHealth;
  /** The process's limit on unpaid requests (src/common/rate-limit.ts): every request here is one. */
  limit?: UnpaidLimit;
  /** What `/readyz` asks (`reportReadiness`); none: ready whenever it answers. */
  ready?: Record<string, CheckFn>;
  /**
   * No request log: the routes answer this process's own reads (`report`, `publish` rendering its site
   * through them), not a reader's request; default false.
   */
  unlogged?: boolean;
}

/**
 * The report service over HTTP: JSON reports and their evidence, the leaderboard, the flag feed and wallet
 * histories, the report's JSON Schema, the human pages, the badges and the weekly datasets. A method a path does not take is a 405
 * with `Allow`; with `limit`, a client over its limit gets a 429 before any work. `/healthz`, `/livez` and
 * `/readyz` (`ready`: src/common/health.ts); each request has its id and its line in the log
 * (src/common/request-log.ts).
 */
export function reportRoutes(
  services: ReportService | readonly ReportService[],
  options: ReportRoutesOptions = {},
): Hono {
  // One service a chain (each its routes under its slug); the first (Base's) answers the agents' MCP.
  const chains: readonly ReportService[] = Array.isArray(services) ? services : [services];
  const [reports] = chains;
  if (!reports) throw new Error("internal: the report routes need a chain's service");
  const app = new Hono();
  app.onError(onError);
  // Machine paths answer JSON; any other path is one a person typed or followed, so a page says it is not there.
  app.notFound(async (c) => {
    if (/^\/(v1|badges)\/|^\/healthz$/.test(c.req.path)) return onNotFound(c);
    const message = `there is no page at ${c.req.path}`;
    return c.html(renderErrorPage(404, message, { notice: await options.notice?.() }), 404);
  });
  // First: every request's id, line and count (src/common/request-log.ts); then the health checks, which
  // the unpaid limit never refuses.
  if (!options.unlogged) app.use("*", requestLog({ service: "reports", limit: options.limit }));
  healthRoutes(app, options.ready ?? {});
  if (options.limit) {
    const headers = { "Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": "Retry-After" };
    app.use("*", limitUnpaid(options.limit, { headers }));
  }
  app.use(
    "/v1/*",
    corsAnswers({ allowMethods: ["GET", "HEAD", "OPTIONS"], exposeHeaders: [REQUEST_ID_HEADER] }),
  );

  app.get("/healthz", (c) => {
    c.header("Cache-Control", "no-store");
    return c.json({ ok: true, ...(options.health?.() ?? { status: "ok" }) });
  });

  const held = () => chainsWithData(reports);
  for (const chain of chains) {
    // What readers see most, kept as rendered until a write reaches it (answers.ts): per chain, whose
    // latest window moves with its own blocks.
    const answers = new Answers(chain.changes, { chain: chain.chain.slug });
    chain.onLatestBuilt((from: number, to: number) => answers.warm(from, to));
    reportJsonRoutes(app, chain, answers);
    leaderboardRoutes(app, chain, answers);
    flagRoutes(app, chain, answers);
    searchRoutes(app, chain);
    datasetRoutes(app, chain);
    pageRoutes(app, chain, answers, options.notice, held);
    badgeRoutes(app, chain, answers);
  }
  // A merchant across the chains: each chain's latest week side by side, their sum and its badge.
  acrossRoutes(app, chains, options.notice);
  reportSchemaRoute(app);
  screensPageRoute(app, options.notice);
  mcpRoutes(app, chains);

  answerEveryMethod(app);
  return app;
}
