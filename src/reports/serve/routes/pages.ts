/**
 * The pages for people: the home page and the ranking's later pages, a merchant's report page and its
 * evidence, and how the screens work. Their errors are pages too (the JSON routes keep their JSON errors).
 */
import type { Context, Hono } from "hono";
import { AppError } from "../../../common/errors.ts";
import { NoDataYetError } from "../../build/window.ts";
import { renderEvidencePage } from "../../render/evidence-page.ts";
import { RANKING_PAGE_SIZE, renderHomePage } from "../../render/home-page.ts";
import { renderEmptyHomePage, renderErrorPage } from "../../render/page-states.ts";
import { renderReportPage } from "../../render/report-page.ts";
import { renderScreensPage } from "../../render/screens-page.ts";
import { SCREENS_PATH } from "../../screens/index.ts";
import { endBlockParam, pageParam } from "../params.ts";
import type { ReportService } from "../service.ts";

export function pageRoutes(
  app: Hono,
  reports: ReportService,
  noticeOf?: () => Promise<string | undefined>,
): void {
  const page =
    (render: (c: Context, notice: string | undefined) => Promise<string>) => async (c: Context) => {
      const notice = await noticeOf?.();
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
}
