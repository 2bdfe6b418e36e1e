/** twitterapi.io's tweets by ids (`/twitter/tweets`'s `tweets`) as the tweets asked for. */
import type { TweetLookup } from "../../provider.ts";
import { IncludesBuilder, parseTweet } from "./parse-tweet.ts";

/** The tweets in the order of `ids`, leaving out those not answered. */
export function parseLookup(raw: readonly unknown[], ids: readonly string[]): TweetLookup {
  const builder = new IncludesBuilder();
  const byId = new Map(raw.map((t) => parseTweet(t, builder)).map((t) => [t.id, t]));
  const found = ids.flatMap((id) => byId.get(id) ?? []);
  // Includes are gathered from every tweet answered; those the caller did not ask for are not in `found`.
  return { tweets: found, includes: builder.build(new Set(found.map((t) => t.id))) };
}
