/** X's `TweetResultsByRestIds` answer (`data.tweetResult[].result`) as the tweets asked for. */
import type { SocialTweet } from "../../model.ts";
import type { TweetLookup } from "../../provider.ts";
import { arr, at } from "./json.ts";
import { Collected, parseTweet } from "./parse-tweet.ts";

/** The tweets in the order of `ids`, each once, leaving out those X did not answer. */
export function parseLookup(results: unknown, ids: readonly string[]): TweetLookup {
  const into = new Collected();
  const byId = new Map<string, SocialTweet>();
  for (const entry of arr(results)) {
    const t = parseTweet(at(entry, "result"), into);
    if (t) byId.set(t.id, t);
  }
  const tweets = [...new Set(ids)].flatMap((id) => byId.get(id) ?? []);
  return { tweets, includes: into.includes(tweets) };
}
