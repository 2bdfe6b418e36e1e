/**
 * A caller's page from one of X's timelines. Cursors are X's own `Bottom` cursors. X gives one even on the
 * last page, so a page without items, or whose cursor did not move, is the last.
 */
import type { SocialTweet, SocialUser } from "../../model.ts";
import type { PageRequest, TweetPage, UserPage } from "../../provider.ts";
import type { Timeline } from "./parse-timeline.ts";
import { Collected, parseTweet } from "./parse-tweet.ts";
import { parseUser } from "./parse-user.ts";

/** The next page's cursor: X's `Bottom` cursor, unless this page was empty or the cursor did not move. */
export const nextOf = (timeline: Timeline, found: number, page: PageRequest) =>
  found > 0 && timeline.bottom && timeline.bottom !== page.cursor ? { next: timeline.bottom } : {};

/** The timeline's tweets that `keep` keeps, each once, what they refer to in `into` as includes. */
export function tweetPage(
  timeline: Timeline,
  page: PageRequest,
  keep: (t: SocialTweet) => boolean = () => true,
  into = new Collected(),
): TweetPage {
  const tweets: SocialTweet[] = [];
  const seen = new Set<string>();
  for (const item of timeline.items) {
    if (item.kind !== "tweet") continue;
    const t = parseTweet(item.result, into);
    if (t && keep(t) && !seen.has(t.id)) {
      seen.add(t.id);
      tweets.push(t);
    }
  }
  return { tweets, includes: into.includes(tweets), ...nextOf(timeline, timeline.items.length, page) };
}

export function userPage(timeline: Timeline, page: PageRequest): UserPage {
  const users: SocialUser[] = [];
  const seen = new Set<string>();
  for (const item of timeline.items) {
    if (item.kind !== "user") continue;
    const u = parseUser(item.result);
    if (u && !seen.has(u.id)) {
      seen.add(u.id);
      users.push(u);
    }
  }
  return { users, ...nextOf(timeline, timeline.items.length, page) };
}
