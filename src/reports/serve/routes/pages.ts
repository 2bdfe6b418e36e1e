/**
 * The pages for people: the home page and the ranking's later pages, a merchant's report page and its
 * evidence, kept once rendered (answers.ts), and how the screens work. Their errors are pages too (the
 * JSON routes keep their JSON errors).
 */
import type { Context, Hono } from "hono";
import { AppError } from "../../../common/errors.ts";
import { renderEvidencePage } from "../../render/evidence-page.ts";
import { RANKING_PAGE_SIZE, renderHomePage } from "../../render/home-page.ts";
import { rankingPath } from "../../render/page-parts.ts";
import { renderEmptyHomePage, renderErrorPage } from "../../render/page-states.ts";
import { renderReportPage } from "../../render/report-page.ts";
import { renderScreensPage } from "../../render/screens-page.ts";
import { SCREENS_PATH } from "../../screens/index.ts";
import { NoDataYetError } from "../../week/window.ts";
import type { Answers } from "../answers.ts";
import { endBlockParam, pageParam, parseAddress } from "../params.ts";
import { answerCached } from "../respond.ts";
import type { ReportService } from "../service.ts";

const HTML = "text/html; charset=UTF-8";

/** A page rendered for the window ending at `endBlock`, the notice given, with when its figures were built. */
type RenderPage = (
  endBlock: number,
  notice: string | undefined,
) => Promise<{ html: string; builtAt: string }>;

/**
 * One chain's pages: its ranking (Base's is the home page, another's at `/chains/<slug>`), and its merchants'
 * report and evidence pages under its slug.
 */
export function pageRoutes(
  app: Hono,
  reports: ReportService,
  answers: Answers,
  noticeOf?: () => Promise<string | undefined>,
  /** The chains the store holds data of: the pages link theirs (serve/across.ts, `chainsWithData`). */
  held: () => Promise<readonly string[]> = async () => [],
): void {
  const chain = reports.chain.slug;
  const home = rankingPath(1, chain);
  /** Answers the page `what(c)` names (a path), kept; a refusal is an error page, never kept. */
  const page = (what: (c: Context) => string, render: (c: Context) => RenderPage) => async (c: Context) => {
    try {
      const endBlock = endBlockParam(c.req.query("end_block"));
      const rendering = render(c);
      return await answerCached(c, answers, reports, what(c), endBlock, async (end) => {
        const { html, builtAt } = await rendering(end, await noticeOf?.());
        return { body: html, type: HTML, builtAt };
      });
    } catch (error) {
      const notice = await noticeOf?.();
      // Before the first block is stored the home page explains that instead of failing.
      if (error instanceof NoDataYetError && c.req.path === home)
        return c.html(renderEmptyHomePage({ notice, chain, chains: await held() }));
      if (error instanceof AppError)
        return c.html(renderErrorPage(error.status, error.message, { notice }), error.status);
      throw error;
    }
  };

  const ranking =
    (number: (c: Context) => number) =>
    (c: Context): RenderPage => {
      const n = number(c);
      return async (endBlock, notice) => {
        const board = await reports.leaderboard(endBlock, { page: n, size: RANKING_PAGE_SIZE });
        const chains = await held();
        return { html: renderHomePage(board, { notice, chains }), builtAt: board.generated_at };
      };
    };
  app.get(
    home,
    page(
      () => home,
      ranking(() => 1),
    ),
  );
  app.get(
    rankingPath(2, chain).replace(/2$/, ":page"),
    page(
      (c) => rankingPath(pageParam(c.req.param("page") ?? ""), chain),
      ranking((c) => pageParam(c.req.param("page") ?? "")),
    ),
  );

  app.get(
    `/reports/${chain}/:address`,
    page(
      (c) => `/reports/${chain}/${parseAddress(c.req.param("address") ?? "")}`,
      (c) => {
        const address = parseAddress(c.req.param("address") ?? "");
        return async (endBlock, notice) => {
          const { report, details } = await reports.report(address, endBlock);
          const chains = await held();
          return {
            html: renderReportPage(report, details, { notice, chains }),
            builtAt: report.generated_at,
          };
        };
      },
    ),
  );

  app.get(
    `/reports/${chain}/:address/evidence`,
    page(
      (c) => `/reports/${chain}/${parseAddress(c.req.param("address") ?? "")}/evidence`,
      (c) => {
        const address = parseAddress(c.req.param("address") ?? "");
        return async (endBlock, notice) => {
          const evidence = await reports.evidence(address, endBlock);
          return { html: renderEvidencePage(evidence, { notice }), builtAt: evidence.generated_at };
        };
      },
    ),
  );
}

/** How the screens work: the same for every chain, window and reader, rendered on each request (no store read). */
export function screensPageRoute(app: Hono, noticeOf?: () => Promise<string | undefined>): void {
  app.get(SCREENS_PATH, async (c) => c.html(renderScreensPage({ notice: await noticeOf?.() })));
}
