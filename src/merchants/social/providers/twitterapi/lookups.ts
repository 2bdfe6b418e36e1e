/** The lookups the provider's methods are made of: tweets, users and communities by id or name. */
import type { SocialUser } from "../../model.ts";
import type { PageRequest, TweetLookup, UserPage } from "../../provider.ts";
import type { TwitterApiClient } from "./client.ts";
import { type Exists, userPage } from "./pages.ts";
import { decodeCursor, upstreamItems } from "./paging.ts";
import { parseLookup } from "./parse-lookup.ts";
import { isObject, parseUser, parseUsers } from "./parse-user.ts";

export async function lookupTweets(
  client: TwitterApiClient,
  ids: readonly string[],
  signal: AbortSignal,
): Promise<TweetLookup> {
  if (ids.length === 0) return { tweets: [], includes: { users: [], tweets: [], media: [] } };
  const body = await client.get("/twitter/tweets", { tweet_ids: ids.join(",") }, signal);
  return parseLookup(body ? upstreamItems(body, ["tweets"]).items : [], ids);
}

export const tweetExists =
  (client: TwitterApiClient, id: string): Exists =>
  async (signal) =>
    (await lookupTweets(client, [id], signal)).tweets.length > 0;

export const communityExists =
  (client: TwitterApiClient, communityId: string): Exists =>
  async (signal) => {
    const info = await client.get("/twitter/community/info", { community_id: communityId }, signal);
    return isObject(info?.community_info) && Object.keys(info.community_info).length > 0;
  };

export async function userByUsername(
  client: TwitterApiClient,
  username: string,
  signal: AbortSignal,
): Promise<SocialUser | null> {
  const body = await client.get("/twitter/user/info", { userName: username }, signal);
  const data = body?.data;
  if (!isObject(data) || Object.keys(data).length === 0) return null;
  return parseUser(data);
}

export async function userById(
  client: TwitterApiClient,
  id: string,
  signal: AbortSignal,
): Promise<SocialUser | null> {
  const body = await client.get("/twitter/user/batch_info_by_ids", { userIds: id }, signal);
  if (!body) return null;
  const users = parseUsers(upstreamItems(body, ["users"]).items);
  return users.find((u) => u.id === id) ?? null;
}

/** The followers or followings of a user id: the username, found on the first page, rides in the cursor. */
export async function connections(
  client: TwitterApiClient,
  path: string,
  key: string,
  userId: string,
  page: PageRequest,
  signal: AbortSignal,
): Promise<UserPage | null> {
  const at = decodeCursor(page.cursor);
  if (at.u === undefined) {
    const user = await userById(client, userId, signal);
    if (!user) return null;
    at.u = user.username;
  }
  const userName = at.u;
  return userPage(
    (cursor) => client.get(path, { userName, cursor }, signal),
    [key],
    page,
    undefined,
    signal,
    at,
  );
}
