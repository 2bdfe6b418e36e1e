/** The leaderboard's JSON, page by page: where each page is, and what it states. */
import type { Context, Hono } from "hono";
import type { Leaderboard, LeaderboardDocument } from "../../model.ts";
import type { Answers } from "../answers.ts";
import { endBlockParam, pageParam } from "../params.ts";
import { answerCached } from "../respond.ts";
import type { ReportService } from "../service.ts";

/** The leaderboard's JSON: page 1 here, page N at `/pages/N`. */
export const LEADERBOARD_PATH = "/v1/leaderboard/base";

/** Where page `n` of the leaderboard's JSON is. */
export const leaderboardPath = (n: number): string =>
  n === 1 ? LEADERBOARD_PATH : `${LEADERBOARD_PATH}/pages/${n}`;

/**
 * A page of the leaderboard as its JSON states it: with the URLs of the pages before and after it, kept to
 * its window (the latest moves on with every block indexed).
 */
export function leaderboardDocument(board: Leaderboard, publicUrl: string): LeaderboardDocument {
  const { number, pages } = board.page;
  const link = (n: number) => `${publicUrl}${leaderboardPath(n)}?end_block=${board.window.end_block}`;
  return {
    ...board,
    page: {
      ...board.page,
      previous: number > 1 ? link(number - 1) : null,
      next: number < pages ? link(number + 1) : null,
    },
  };
}

export function leaderboardRoutes(app: Hono, reports: ReportService, answers: Answers): void {
  // The leaderboard in pages of LEADERBOARD_PAGE_SIZE, by path so that a static copy serves every page;
  // each kept once rendered (answers.ts).
  const leaderboard = async (c: Context, page: number) => {
    const endBlock = endBlockParam(c.req.query("end_block"));
    return answerCached(c, answers, reports, leaderboardPath(page), endBlock, async (end) => {
      const board = await reports.leaderboard(end, { page });
      const body = JSON.stringify(leaderboardDocument(board, reports.publicUrl));
      return { body, type: "application/json", builtAt: board.generated_at };
    });
  };
  app.get(LEADERBOARD_PATH, (c) => leaderboard(c, 1));
  app.get(`${LEADERBOARD_PATH}/pages/:page`, (c) => leaderboard(c, pageParam(c.req.param("page"))));
}
