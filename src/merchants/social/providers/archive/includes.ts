/**
 * A page's `includes`: every user, tweet and medium its tweets refer to, in three queries whatever the
 * page's size (the referenced tweets, then the users, then the media), never one per tweet.
 */
import type { Queryable } from "../../../../common/db/index.ts";
import type { Includes, SocialMedia, SocialTweet, SocialUser } from "../../model.ts";
import { idSet, idsParam } from "./sql.ts";

export async function tweetsByIds(q: Queryable, ids: Iterable<string>): Promise<SocialTweet[]> {
  const { rows } = await q.query<{ doc: SocialTweet }>(
    `SELECT doc FROM social_archive_tweets WHERE id IN ${idSet(1)}`,
    [idsParam(ids)],
  );
  return rows.map((r) => r.doc);
}

export async function usersByIds(q: Queryable, ids: Iterable<string>): Promise<SocialUser[]> {
  const { rows } = await q.query<{ doc: SocialUser }>(
    `SELECT doc FROM social_archive_users WHERE id IN ${idSet(1)}`,
    [idsParam(ids)],
  );
  return rows.map((r) => r.doc);
}

async function mediaByKeys(q: Queryable, keys: Set<string>): Promise<SocialMedia[]> {
  if (keys.size === 0) return [];
  const { rows } = await q.query<{ doc: SocialMedia }>(
    `SELECT doc FROM social_archive_media
      WHERE media_key IN (SELECT value FROM jsonb_array_elements_text($1::jsonb))`,
    [JSON.stringify([...keys])],
  );
  return rows.map((r) => r.doc);
}

/**
 * The includes of `tweets`: the quoted, replied-to and reposted tweets; the authors of both, and the users
 * they reply to; the media of both. Each in the order first referred to.
 */
export async function includesOf(q: Queryable, tweets: readonly SocialTweet[]): Promise<Includes> {
  if (tweets.length === 0) return { users: [], tweets: [], media: [] };
  const refIds = [...new Set(tweets.flatMap((t) => t.referencedTweets.map((r) => r.id)))];
  const found = new Map((await tweetsByIds(q, refIds)).map((t) => [t.id, t]));
  const referenced = refIds.flatMap((id) => found.get(id) ?? []);
  const all = [...tweets, ...referenced];

  const userIds = [
    ...new Set(all.flatMap((t) => [t.authorId, ...(t.inReplyToUserId ? [t.inReplyToUserId] : [])])),
  ];
  const mediaKeys = [...new Set(all.flatMap((t) => t.mediaKeys))];
  const [users, media] = await Promise.all([usersByIds(q, userIds), mediaByKeys(q, new Set(mediaKeys))]);
  return {
    users: inOrder(users, userIds, (u) => u.id),
    tweets: referenced,
    media: inOrder(media, mediaKeys, (m) => m.mediaKey),
  };
}

/** `items` in the order of `keys`, those not found left out. */
export function inOrder<T>(items: readonly T[], keys: readonly string[], key: (item: T) => string): T[] {
  const byKey = new Map(items.map((item) => [key(item), item]));
  return keys.flatMap((k) => byKey.get(k) ?? []);
}
