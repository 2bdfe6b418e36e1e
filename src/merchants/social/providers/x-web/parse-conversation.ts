/** The replies to a tweet from its conversation (`TweetDetail`): the items after the focal tweet. */
import type { PageRequest, TweetPage } from "../../provider.ts";
import { tweetPage } from "./pages.ts";
import type { Timeline } from "./parse-timeline.ts";
import { Collected, parseTweet } from "./parse-tweet.ts";

/** The page of replies, or null when a first page does not hold the tweet (it is not there). */
export function parseReplies(found: Timeline, tweetId: string, page: PageRequest): TweetPage | null {
  // The first page holds the tweets above the focal one and the focal one: the replies come after.
  const focal = found.items.findIndex((item) => item.entryId === `tweet-${tweetId}`);
  if (page.cursor === undefined && focal < 0) return null;
  // The focal tweet and those above it are what the replies reply to: includes.
  const into = new Collected();
  for (const item of found.items.slice(0, focal + 1)) {
    const t = item.kind === "tweet" ? parseTweet(item.result, into) : null;
    if (t) into.tweets.set(t.id, t);
  }
  const after = { ...found, items: found.items.slice(focal + 1) };
  return tweetPage(after, page, (t) => t.id !== tweetId, into);
}
