/**
 * The replied-to tweets a page's items name and X did not bring: a timeline carries the quoted tweet, not
 * the replied-to one, so they are looked up afterwards and merged into the page's includes.
 */
import type { Includes, SocialTweet } from "../../model.ts";

/** The ids of the replied-to tweets neither among the tweets nor in their includes, each once. */
export function missingRepliedTo(found: { tweets: SocialTweet[]; includes: Includes }): string[] {
  const have = new Set([...found.tweets, ...found.includes.tweets].map((t) => t.id));
  return [
    ...new Set(
      found.tweets.flatMap((t) =>
        t.referencedTweets.filter((r) => r.type === "replied_to" && !have.has(r.id)).map((r) => r.id),
      ),
    ),
  ];
}

/** Adds `extra` to `includes`, each object once. */
export function mergeIncludes(includes: Includes, extra: Includes): void {
  const add = <T>(list: T[], more: T[], key: (x: T) => string) => {
    const have = new Set(list.map(key));
    for (const x of more) {
      if (have.has(key(x))) continue;
      have.add(key(x));
      list.push(x);
    }
  };
  add(includes.users, extra.users, (u) => u.id);
  add(includes.tweets, extra.tweets, (t) => t.id);
  add(includes.media, extra.media, (m) => m.mediaKey);
}
