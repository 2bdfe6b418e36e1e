import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import type { Analytics } from "../analytics/duckdb.ts";
import { AppError, BadInputError, errorBody } from "../common/errors.ts";
import { type CheckFn, cachedCheck, healthRoutes } from "../common/health.ts";
import { onError, onNotFound } from "../common/http.ts";
import { answerMcp, MCP_PATH } from "../common/mcp/http.ts";
import { answerEveryMethod } from "../common/methods.ts";
import { limitUnpaid, type UnpaidLimit } from "../common/rate-limit.ts";
import { REQUEST_ID_HEADER, requestLog } from "../common/request-log.ts";
import type { Follower } from "../indexer/follower.ts";
import { renderBadge } from "./badge.ts";
import { CSV_HEADER, reportsToCsvRows, reportsToNdjson } from "./dataset.ts";
import { renderEvidencePage } from "./evidence/page.ts";
import { reportMcpServer, serviceAnswers } from "./mcp.ts";
import { RANKING_PAGE_SIZE, renderHomePage, renderReportPage } from "./page.ts";
import { renderEmptyHomePage, renderErrorPage } from "./page-states.ts";
import { LICENSE_URL } from "./report.ts";
import { type Report, reportJsonSchema } from "./schema.ts";
import { SCREENS_PATH } from "./screens/index.ts";
import { renderScreensPage } from "./screens-page.ts";
import { SEARCH_PATH } from "./search.ts";
import { LEADERBOARD_PATH, leaderboardDocument, type ReportService } from "./service.ts";
import { NoDataYetError, type ReportWindow } from "./window.ts";

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
 * The service's health: `degraded` while its data lags (its indexer's RPC fails, or it is behind), with
 * the details under their own names (`indexer`). `/healthz` answers 200 either way: the reports are
 * served from what is stored, each saying the block its window ends at, so a load balancer keeps
 * sending traffic; monitoring reads `status` and the lag.
 */
export interface ServiceHealth {
  status: "ok" | "degraded";
  [detail: string]: unknown;
}

/**
 * What the report service needs to serve: `analytics`, its database answers; with an indexer following
 * the chain (`follower()`, undefined until it has started), `indexer`, always ok: reports are served from
 * what is stored however far it lags, and the body says how far (`lag_blocks`, `lag_seconds`, its RPC's
 * state), as `/healthz` does.
 */
export function reportReadiness(
  analytics: Analytics,
  follower?: () => Follower | undefined,
): Record<string, CheckFn> {
  const checks: Record<string, CheckFn> = {
    analytics: cachedCheck("analytics", async () => {
      await analytics.one("SELECT 1");
    }),
  };
  if (follower) {
    checks.indexer = async () => {
      const following = follower();
      if (!following) return { ok: true, state: "starting" };
      const { state, indexed_block, chain_head, lag_blocks, lag_seconds, rpc } = following.health();
      return {
        ok: true,
        degraded: following.degraded(),
        state,
        indexed_block,
        chain_head,
        lag_blocks,
        lag_seconds,
        rpc_ok: rpc.ok,
      };
    };
  }
  return checks;
}

/** `value` as a whole number of at least `min`, else a 400 saying what it should be. */
function wholeParam(value: string, min: number, error: () => BadInputError): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)) || Number(value) < min) throw error();
  return Number(value);
}

function endBlockParam(value: string | undefined): number | undefined {
  if (value === undefined || value === "") return undefined;
  return wholeParam(
    value,
    0,
    () => new BadInputError(`end_block must be a block number, not "${value}"`, "bad_end_block"),
  );
}

const ndjsonLine = (document: unknown) => `${JSON.stringify(document)}\n`;

/**
 * A body rendered batch by batch as its reader takes it: a batch is read only when the one before is sent,
 * and a reader that leaves stops the reading. A batch that fails ends the body short, which the reader sees
 * as a broken transfer, never as a complete file.
 */
function streamed<T>(
  batches: AsyncIterable<T[]>,
  render: (batch: T[]) => string,
  head = "",
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const iterator = batches[Symbol.asyncIterator]();
  let pending = head;
  return new ReadableStream({
    async pull(controller) {
      if (pending !== "") {
        controller.enqueue(encoder.encode(pending));
        pending = "";
        return;
      }
      const next = await iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(render(next.value)));
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}

const pageParam = (value: string): number =>
  wholeParam(value, 1, () => new BadInputError(`a page is a number from 1, not "${value}"`, "bad_page"));

/**
 * The report service over HTTP: JSON reports and their evidence, the leaderboard, the report's JSON
 * Schema, the human pages, the badges and the weekly datasets. A method a path does not take is a 405
 * with `Allow`; with `limit`, a client over its limit gets a 429 before any work. `/healthz`, `/livez` and
 * `/readyz` (`ready`: src/common/health.ts); each request has its id and its line in the log
 * (src/common/request-log.ts).
 */
export function reportRoutes(reports: ReportService, options: ReportRoutesOptions = {}): Hono {
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
    cors({ origin: "*", allowMethods: ["GET", "HEAD", "OPTIONS"], exposeHeaders: [REQUEST_ID_HEADER] }),
  );

  app.get("/healthz", (c) => {
    c.header("Cache-Control", "no-store");
    return c.json({ ok: true, ...(options.health?.() ?? { status: "ok" }) });
  });

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

  // The leaderboard in pages of LEADERBOARD_PAGE_SIZE, by path so that a static copy serves every page.
  const leaderboard = async (c: Context, page: number) => {
    const board = await reports.leaderboard(endBlockParam(c.req.query("end_block")), { page });
    c.header("Cache-Control", "public, max-age=300");
    return c.json(leaderboardDocument(board, reports.publicUrl));
  };
  app.get(LEADERBOARD_PATH, (c) => leaderboard(c, 1));
  app.get(`${LEADERBOARD_PATH}/pages/:page`, (c) => leaderboard(c, pageParam(c.req.param("page"))));

  app.get(SEARCH_PATH, async (c) => {
    const found = await reports.search(c.req.query("q") ?? "", endBlockParam(c.req.query("end_block")));
    c.header("Cache-Control", "public, max-age=300");
    return c.json(found);
  });

  app.get("/v1/schema/report.json", (c) => {
    c.header("Content-Type", "application/schema+json");
    return c.body(JSON.stringify(reportJsonSchema(), null, 2));
  });

  // The datasets are written as they are read, a batch of reports at a time: a window of 500,000 merchants
  // is a gigabyte of JSON, which no process should hold whole (nor its reader's page views wait behind).
  app.get("/v1/datasets/base/:file", async (c) => {
    const endBlock = endBlockParam(c.req.query("end_block"));
    const file = c.req.param("file");
    const download = (window: ReportWindow, kind: string, format: string) => {
      c.header(
        "Content-Type",
        format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8",
      );
      c.header(
        "Content-Disposition",
        `attachment; filename="x402-merchant-${kind}-base-${window.end_block}.${format}"`,
      );
      c.header("Link", `<${LICENSE_URL}>; rel="license"`);
    };
    if (file === "evidence.ndjson") {
      const { window, batches } = await reports.readEvidence(endBlock);
      download(window, "evidence", "ndjson");
      return c.body(streamed(batches, (documents) => documents.map(ndjsonLine).join("")));
    }
    const match = /^reports\.(ndjson|csv)$/.exec(file);
    if (!match) return onNotFound(c);
    const format = match[1] as "ndjson" | "csv";
    const { window, batches } = await reports.readReports(endBlock);
    download(window, "reports", format);
    const parse = (bodies: string[]) => bodies.map((body) => JSON.parse(body) as Report);
    return c.body(
      format === "csv"
        ? streamed(batches, (bodies) => reportsToCsvRows(parse(bodies)), CSV_HEADER)
        : streamed(batches, (bodies) => reportsToNdjson(parse(bodies))),
    );
  });

  // Pages for people: their errors are pages too (the JSON routes above keep their JSON errors).
  const page =
    (render: (c: Context, notice: string | undefined) => Promise<string>) => async (c: Context) => {
      const notice = await options.notice?.();
      try {
        return c.html(await render(c, notice));
      } catch (error) {
        // Before the first block is stored the home page explains that instead of failing.
        if (error instanceof NoDataYetError && c.req.path === "/")
          return c.html(renderEmptyHomePage({ notice }));
        if (error instanceof AppError)
          return c.html(renderErrorPage(error.status, error.message, { notice }), error.status);
        throw error;
      }
    };

  const ranking = (c: Context, page: number) =>
    reports.leaderboard(endBlockParam(c.req.query("end_block")), { page, size: RANKING_PAGE_SIZE });
  app.get(
    "/",
    page(async (c, notice) => renderHomePage(await ranking(c, 1), { notice })),
  );
  app.get(
    "/ranking/:page",
    page(async (c, notice) =>
      renderHomePage(await ranking(c, pageParam(c.req.param("page") ?? "")), { notice }),
    ),
  );

  app.get(
    "/reports/base/:address",
    page(async (c, notice) => {
      const { report, details } = await reports.report(
        c.req.param("address") ?? "",
        endBlockParam(c.req.query("end_block")),
      );
      return renderReportPage(report, details, { notice });
    }),
  );

  app.get(
    "/reports/base/:address/evidence",
    page(async (c, notice) => {
      const evidence = await reports.evidence(
        c.req.param("address") ?? "",
        endBlockParam(c.req.query("end_block")),
      );
      return renderEvidencePage(evidence, { notice });
    }),
  );

  app.get(
    SCREENS_PATH,
    page(async (_c, notice) => renderScreensPage({ notice })),
  );

  app.get("/badges/base/:file", async (c) => {
    const match = /^(.+)\.svg$/.exec(c.req.param("file"));
    if (!match) return onNotFound(c);
    const { report } = await reports.report(match[1] ?? "", endBlockParam(c.req.query("end_block")));
    c.header("Content-Type", "image/svg+xml; charset=utf-8");
    c.header("Cache-Control", "public, max-age=300");
    return c.body(renderBadge(report));
  });

  // Agents' face: the answers above as MCP tools (src/reports/mcp.ts), over stateless Streamable HTTP, a
  // server per request. Its 405s for GET and DELETE are the transport's JSON-RPC errors, not the routes'.
  app.use(
    MCP_PATH,
    cors({ origin: "*", allowMethods: ["POST", "OPTIONS"], exposeHeaders: [REQUEST_ID_HEADER] }),
    bodyLimit({
      maxSize: MCP_MAX_BODY_BYTES,
      onError: (c) =>
        c.json(errorBody("payload_too_large", `the body exceeds ${MCP_MAX_BODY_BYTES} bytes`), 413),
    }),
  );
  app.all(MCP_PATH, (c) => answerMcp(c.req.raw, () => reportMcpServer(serviceAnswers(reports))));

  answerEveryMethod(app);
  return app;
}

/** A tool call's arguments are an address, a block and a page: a few hundred bytes. */
const MCP_MAX_BODY_BYTES = 64 * 1024;
