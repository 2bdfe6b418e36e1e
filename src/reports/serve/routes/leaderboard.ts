/** The leaderboard's JSON, page by page: where each page is, and what it states. */
import type { Context, Hono } from "hono";
import type { Leaderboard, LeaderboardDocument } from "../../model.ts";
import type { Answers } from "../answers.ts";
import { endBlockParam, pageParam } from "../params.ts";
import { answerCached } from "../respond.ts";
import type { ReportService } from "../service.ts";

/** A chain's (its slug's) leaderboard JSON: page 1 here, page N at `/pages/N`. */
export const leaderboardRoot = (chain: string): string => `/v1/leaderboard/${chain}`;

/** Base's. */
export const LEADERBOARD_PATH = leaderboardRoot("base");

/** Where page `n` of a chain's leaderboard JSON is. */
export const leaderboardPath = (n: number, chain = "base"): string =>
  n === 1 ? leaderboardRoot(chain) : `${leaderboardRoot(chain)}/pages/${n}`;

/**
 * A page of the leaderboard as its JSON states it: with the URLs of the pages before and after it, kept to
 * its window (the latest moves on with every block indexed).
 */
export function leaderboardDocument(board: Leaderboard, publicUrl: string): LeaderboardDocument {
  const { number, pages } = board.page;
  const link = (n: number) =>
    `${publicUrl}${leaderboardPath(n, board.chain)}?end_block=${board.window.end_block}`;
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
  const chain = reports.chain.slug;
  const leaderboard = async (c: Context, page: number) => {
    const endBlock = endBlockParam(c.req.query("end_block"));
    return answerCached(c, answers, reports, leaderboardPath(page, chain), endBlock, async (end) => {
      const board = await reports.leaderboard(end, { page });
      const body = JSON.stringify(leaderboardDocument(board, reports.publicUrl));
      return { body, type: "application/json", builtAt: board.generated_at };
    });
  };
  app.get(leaderboardRoot(chain), (c) => leaderboard(c, 1));
  app.get(`${leaderboardRoot(chain)}/pages/:page`, (c) => leaderboard(c, pageParam(c.req.param("page"))));
}
