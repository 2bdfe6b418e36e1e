/**
 * The archive's pages: tweets newest first (a user's, the quotes and replies of a tweet, a list's members',
 * a community's), and users along an edge (followers, following, reposters, list members and followers),
 * most recently imported first. Keyset paging on the cursors of `cursor.ts`; one row more than the page
 * is read to know whether a next page exists, so the last page has no `next`.
 *
 * A page of something not there (an unknown user, tweet, private list, community) is null.
 */
import type { Queryable } from "../../../../common/db/index.ts";
import type { SocialTweet, SocialUser } from "../../model.ts";
import type { PageRequest, TweetPage, UserPage } from "../../provider.ts";
import { edgeCursor, readEdgeCursor, readTweetCursor, tweetCursor } from "./cursor.ts";
import { includesOf } from "./includes.ts";
import { isId, pageLimit } from "./sql.ts";

/**
 * One page of the tweets `t` matching `where` (SQL over alias `t`, with `$1`..`$n` from `params`),
 * newest first.
 */
export async function tweetPage(
  q: Queryable,
  where: string[],
  params: unknown[],
  page: PageRequest,
): Promise<TweetPage> {
  const size = pageLimit(page);
  const conditions = [...where];
  const args = [...params];
  if (page.cursor !== undefined) {
    const key = readTweetCursor(page.cursor);
    args.push(key.createdAt, key.id);
    conditions.push(`(t.created_at, t.id) < ($${args.length - 1}::timestamptz, $${args.length}::bigint)`);
  }
  const { rows } = await q.query<{ doc: SocialTweet }>(
    `SELECT t.doc FROM social_archive_tweets t
      WHERE ${conditions.length > 0 ? conditions.join(" AND ") : "true"}
      ORDER BY t.created_at DESC, t.id DESC
      LIMIT ${size + 1}`,
    args,
  );
  const tweets = rows.slice(0, size).map((r) => r.doc);
  const last = tweets.at(-1);
  return {
    tweets,
    includes: await includesOf(q, tweets),
    ...(rows.length > size && last && { next: tweetCursor({ createdAt: last.createdAt, id: last.id }) }),
  };
}

/** Whether a row of `table` has id `id` (and matches `extra`). */
async function exists(q: Queryable, table: string, id: string, extra = ""): Promise<boolean> {
  if (!isId(id)) return false;
  const { rows } = await q.query(`SELECT 1 FROM ${table} WHERE id = $1::bigint ${extra}`, [id]);
  return rows.length > 0;
}

export const tweetExists = (q: Queryable, id: string) => exists(q, "social_archive_tweets", id);
export const userExists = (q: Queryable, id: string) => exists(q, "social_archive_users", id);
/** Private lists are not there for anyone but their owner, whom the archive does not know. */
export const listExists = (q: Queryable, id: string) => exists(q, "social_archive_lists", id, "AND public");
export const communityExists = (q: Queryable, id: string) => exists(q, "social_archive_communities", id);

export async function userIdOf(q: Queryable, username: string): Promise<string | null> {
  const { rows } = await q.query<{ id: string }>(
    "SELECT id::text AS id FROM social_archive_users WHERE lower(username) = lower($1)",
    [username.replace(/^@/, "")],
  );
  return rows[0]?.id ?? null;
}

export async function userTweets(
  q: Queryable,
  username: string,
  page: PageRequest,
): Promise<TweetPage | null> {
  const id = await userIdOf(q, username);
  return id === null ? null : tweetPage(q, ["t.author_id = $1::bigint"], [id], page);
}

export async function quoteTweets(
  q: Queryable,
  tweetId: string,
  page: PageRequest,
): Promise<TweetPage | null> {
  if (!(await tweetExists(q, tweetId))) return null;
  return tweetPage(q, ["t.quoted_id = $1::bigint"], [tweetId], page);
}

/** The direct replies to a tweet. */
export async function replies(q: Queryable, tweetId: string, page: PageRequest): Promise<TweetPage | null> {
  if (!(await tweetExists(q, tweetId))) return null;
  return tweetPage(q, ["t.replied_to_id = $1::bigint"], [tweetId], page);
}

/** A list's timeline: its members' tweets. */
export async function listTweets(q: Queryable, listId: string, page: PageRequest): Promise<TweetPage | null> {
  if (!(await listExists(q, listId))) return null;
  return tweetPage(
    q,
    ["t.author_id IN (SELECT user_id FROM social_archive_list_members WHERE list_id = $1::bigint)"],
    [listId],
    page,
  );
}

export async function communityPosts(
  q: Queryable,
  communityId: string,
  page: PageRequest,
): Promise<TweetPage | null> {
  if (!(await communityExists(q, communityId))) return null;
  return tweetPage(q, ["t.community_id = $1::bigint"], [communityId], page);
}

/** An edge table read from one end: users at `userColumn` of the rows whose `subjectColumn` is the subject. */
interface Edge {
  table: string;
  subjectColumn: string;
  userColumn: string;
}

async function edgePage(q: Queryable, edge: Edge, subject: string, page: PageRequest): Promise<UserPage> {
  const size = pageLimit(page);
  const args: unknown[] = [subject];
  let after = "";
  if (page.cursor !== undefined) {
    args.push(readEdgeCursor(page.cursor).seq);
    after = "AND e.seq < $2::bigint";
  }
  const { rows } = await q.query<{ doc: SocialUser; seq: string }>(
    `SELECT u.doc, e.seq::text AS seq
       FROM ${edge.table} e JOIN social_archive_users u ON u.id = e.${edge.userColumn}
      WHERE e.${edge.subjectColumn} = $1::bigint ${after}
      ORDER BY e.seq DESC
      LIMIT ${size + 1}`,
    args,
  );
  const last = rows[size - 1];
  return {
    users: rows.slice(0, size).map((r) => r.doc),
    ...(rows.length > size && last && { next: edgeCursor({ seq: last.seq }) }),
  };
}

const FOLLOWERS: Edge = {
  table: "social_archive_follows",
  subjectColumn: "followed_id",
  userColumn: "follower_id",
};
const FOLLOWING: Edge = {
  table: "social_archive_follows",
  subjectColumn: "follower_id",
  userColumn: "followed_id",
};
const RETWEETERS: Edge = {
  table: "social_archive_retweets",
  subjectColumn: "tweet_id",
  userColumn: "user_id",
};
const MEMBERS: Edge = {
  table: "social_archive_list_members",
  subjectColumn: "list_id",
  userColumn: "user_id",
};
const SUBSCRIBERS: Edge = {
  table: "social_archive_list_followers",
  subjectColumn: "list_id",
  userColumn: "user_id",
};

export async function followers(q: Queryable, userId: string, page: PageRequest): Promise<UserPage | null> {
  return (await userExists(q, userId)) ? edgePage(q, FOLLOWERS, userId, page) : null;
}

export async function following(q: Queryable, userId: string, page: PageRequest): Promise<UserPage | null> {
  return (await userExists(q, userId)) ? edgePage(q, FOLLOWING, userId, page) : null;
}

export async function retweetedBy(
  q: Queryable,
  tweetId: string,
  page: PageRequest,
): Promise<UserPage | null> {
  return (await tweetExists(q, tweetId)) ? edgePage(q, RETWEETERS, tweetId, page) : null;
}

export async function listMembers(q: Queryable, listId: string, page: PageRequest): Promise<UserPage | null> {
  return (await listExists(q, listId)) ? edgePage(q, MEMBERS, listId, page) : null;
}

export async function listFollowers(
  q: Queryable,
  listId: string,
  page: PageRequest,
): Promise<UserPage | null> {
  return (await listExists(q, listId)) ? edgePage(q, SUBSCRIBERS, listId, page) : null;
}
