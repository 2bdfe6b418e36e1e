/**
 * The flag feed's JSON, page by page, whole or one merchant's, and one wallet's flags across the stored
 * windows (src/reports/week/flags.ts).
 */
import type { Context, Hono } from "hono";
import type { FlagFeed, FlagFeedDocument } from "../../model.ts";
import { flagsPath, flagsRoot } from "../../week/flags.ts";
import type { Answers } from "../answers.ts";
import { endBlockParam, pageParam, parseAddress } from "../params.ts";
import { answerCached, LATEST_MAX_AGE } from "../respond.ts";
import type { ReportService } from "../service.ts";

/** One wallet's flags across a chain's stored windows: this, then its address. */
export const walletsRoot = (chain: string): string => `/v1/wallets/${chain}`;

/** Base's. */
export const WALLETS_PATH = walletsRoot("base");

/**
 * A page of the feed as its JSON states it: with the URLs of the pages before and after it, kept to its
 * window and its merchant.
 */
export function flagFeedDocument(feed: FlagFeed, publicUrl: string): FlagFeedDocument {
  const { number, pages } = feed.page;
  const link = (n: number) =>
    `${publicUrl}${flagsPath(n, feed.merchant, feed.chain)}?end_block=${feed.window.end_block}`;
  return {
    ...feed,
    page: {
      ...feed.page,
      previous: number > 1 ? link(number - 1) : null,
      next: number < pages ? link(number + 1) : null,
    },
  };
}

export function flagRoutes(app: Hono, reports: ReportService, answers: Answers): void {
  const chain = reports.chain.slug;
  const root = flagsRoot(chain);
  // Kept once rendered, as the leaderboard's pages are (answers.ts).
  const feed = async (c: Context, page: number, merchantParam: string | undefined) => {
    const endBlock = endBlockParam(c.req.query("end_block"));
    const merchant = merchantParam === undefined || merchantParam === "" ? null : parseAddress(merchantParam);
    return answerCached(c, answers, reports, flagsPath(page, merchant, chain), endBlock, async (end) => {
      const flags = await reports.flags(end, { page, merchant: merchant ?? undefined });
      const body = JSON.stringify(flagFeedDocument(flags, reports.publicUrl));
      return { body, type: "application/json", builtAt: flags.generated_at };
    });
  };
  const merchantQuery = (c: Context) => c.req.query("merchant");
  app.get(root, (c) => feed(c, 1, merchantQuery(c)));
  app.get(`${root}/pages/:page`, (c) => feed(c, pageParam(c.req.param("page")), merchantQuery(c)));
  app.get(`${root}/merchants/:address`, (c) => feed(c, 1, c.req.param("address")));
  app.get(`${root}/merchants/:address/pages/:page`, (c) =>
    feed(c, pageParam(c.req.param("page")), c.req.param("address")),
  );

  // Not kept: a window built for a reader of an older week adds to a history without any write to the store.
  app.get(`${walletsRoot(chain)}/:address`, async (c) => {
    const history = await reports.wallet(c.req.param("address"));
    c.header("Cache-Control", `public, max-age=${LATEST_MAX_AGE}`);
    return c.json(history);
  });
}
