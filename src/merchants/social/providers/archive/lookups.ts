/**
 * The archive's single lookups: a tweet, several tweets, a user, a list, an article. Not found (an id
 * never imported, a private list, an owner or author missing from the archive) is null, never an error.
 */
import type { Queryable } from "../../../../common/db/index.ts";
import type { SocialArticle, SocialList, SocialUser } from "../../model.ts";
import type { ListLookup, TweetLookup } from "../../provider.ts";
import { includesOf, inOrder, tweetsByIds } from "./includes.ts";
import { isId } from "./sql.ts";

export async function lookupTweets(q: Queryable, ids: readonly string[]): Promise<TweetLookup> {
  const wanted = [...new Set(ids.filter(isId))];
  const tweets = inOrder(await tweetsByIds(q, wanted), wanted, (t) => t.id);
  return { tweets, includes: await includesOf(q, tweets) };
}

export async function lookupTweet(q: Queryable, id: string): Promise<TweetLookup | null> {
  const found = await lookupTweets(q, [id]);
  return found.tweets.length === 0 ? null : found;
}

export async function userByUsername(q: Queryable, username: string): Promise<SocialUser | null> {
  const { rows } = await q.query<{ doc: SocialUser }>(
    "SELECT doc FROM social_archive_users WHERE lower(username) = lower($1)",
    [username.replace(/^@/, "")],
  );
  return rows[0]?.doc ?? null;
}

export async function lookupList(q: Queryable, id: string): Promise<ListLookup | null> {
  if (!isId(id)) return null;
  const { rows } = await q.query<{ list: SocialList; owner: SocialUser }>(
    `SELECT l.doc AS list, u.doc AS owner
       FROM social_archive_lists l JOIN social_archive_users u ON u.id = l.owner_id
      WHERE l.id = $1::bigint AND l.public`,
    [id],
  );
  return rows[0] ?? null;
}

export async function lookupArticle(
  q: Queryable,
  tweetId: string,
): Promise<{ article: SocialArticle; author: SocialUser } | null> {
  if (!isId(tweetId)) return null;
  const { rows } = await q.query<{ article: SocialArticle; author: SocialUser }>(
    `SELECT a.doc AS article, u.doc AS author
       FROM social_archive_articles a JOIN social_archive_users u ON u.id = a.author_id
      WHERE a.tweet_id = $1::bigint`,
    [tweetId],
  );
  return rows[0] ?? null;
}
