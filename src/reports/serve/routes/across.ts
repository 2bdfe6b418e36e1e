/**
 * Across chains (serve/across.ts): the leaderboard of every chain, a merchant wallet's JSON, its page and the badge
 * of the sum. Not kept once rendered: each chain's latest week moves with its own blocks, and the chains' services keep their reports.
 */
import type { Context, Hono } from "hono";
import { AppError, errorBody } from "../../../common/errors.ts";
import { renderAcrossBoardPage, renderAcrossPage } from "../../render/across-page.ts";
import { renderBadge } from "../../render/badge.ts";
import { RANKING_PAGE_SIZE } from "../../render/home-page.ts";
import { renderErrorPage } from "../../render/page-states.ts";
import { leaderboardAcrossChains, merchantAcrossChains } from "../across.ts";
import { pageParam, parseAddress } from "../params.ts";
import { LATEST_MAX_AGE } from "../respond.ts";
import type { ReportService } from "../service.ts";

export function acrossRoutes(
  app: Hono,
  services: readonly ReportService[],
  noticeOf?: () => Promise<string | undefined>,
): void {
  const fresh = (c: Context) => c.header("Cache-Control", `public, max-age=${LATEST_MAX_AGE}`);
  // A refusal on a page is a page of its own status, as the chains' pages answer it.
  const errorPage = async (c: Context, error: unknown) => {
    if (!(error instanceof AppError)) throw error;
    const notice = await noticeOf?.();
    return c.html(renderErrorPage(error.status, error.message, { notice }), error.status);
  };
  app.get("/v1/leaderboard/all", async (c) => {
    fresh(c);
    return c.json(await leaderboardAcrossChains(services));
  });
  app.get("/v1/leaderboard/all/pages/:page", async (c) => {
    const page = pageParam(c.req.param("page"));
    fresh(c);
    return c.json(await leaderboardAcrossChains(services, { page }));
  });
  const boardPage = (page: (c: Context) => number) => async (c: Context) => {
    try {
      const board = await leaderboardAcrossChains(services, { page: page(c), size: RANKING_PAGE_SIZE });
      fresh(c);
      return c.html(renderAcrossBoardPage(board, { notice: await noticeOf?.() }));
    } catch (error) {
      return errorPage(c, error);
    }
  };
  app.get(
    "/chains/all",
    boardPage(() => 1),
  );
  app.get(
    "/chains/all/ranking/:page",
    boardPage((c) => pageParam(c.req.param("page") ?? "")),
  );
  app.get("/v1/merchants/:address", async (c) => {
    const merchant = await merchantAcrossChains(services, c.req.param("address"));
    fresh(c);
    return c.json(merchant);
  });
  app.get("/merchants/:address", async (c) => {
    try {
      const merchant = await merchantAcrossChains(services, c.req.param("address"));
      fresh(c);
      return c.html(renderAcrossPage(merchant, { notice: await noticeOf?.() }));
    } catch (error) {
      return errorPage(c, error);
    }
  });
  app.get("/badges/all/:file", async (c) => {
    const match = /^(.+)\.svg$/.exec(c.req.param("file"));
    if (!match) return c.json(errorBody("not_found", `there is no badge at ${c.req.path}`), 404);
    const m = await merchantAcrossChains(services, parseAddress(match[1] ?? ""));
    fresh(c);
    c.header("Content-Type", "image/svg+xml; charset=utf-8");
    return c.body(
      renderBadge({
        held: m.held,
        methodology: m.methodology,
        usd: m.sum.usd,
        real_usd: m.sum.real_usd,
        window: { days: m.days },
      }),
    );
  });
}
