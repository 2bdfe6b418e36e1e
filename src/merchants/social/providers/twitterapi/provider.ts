/**
 * The social provider over twitterapi.io, the paid REST provider (`https://api.twitterapi.io`, header
 * `x-api-key`). What it can and cannot do, from their documentation:
 * - lookups: tweets by ids (`/twitter/tweets?tweet_ids=`), users by username (`/twitter/user/info`) and by id
 *   (`/twitter/user/batch_info_by_ids`, to find the username the followers endpoints want), articles
 *   (`/twitter/article?tweet_id=`), communities (`/twitter/community/info`). It has **no list lookup**: `list`
 *   answers 501 `unsupported` (the list's pages work).
 * - pages: search (`/twitter/tweet/advanced_search`, X's search syntax, `queryType=Latest`), timelines,
 *   quotes, replies, reposters, followers, followings, list and community pages, user search; fixed page sizes
 *   cut to the route's size by `paging.ts`.
 * - sessions: its mentions endpoint reads anyone's mentions by username and cannot say whose a cookie is, so
 *   `mentions` answers 501 `unsupported`. Its upload (`/twitter/upload_media_v2`) acts with the caller's
 *   cookies through a proxy: with `proxy` configured, `uploadMedia` sends them for that one call (never kept or
 *   logged); without one it answers 501 (`upload.ts`).
 */
import type { SocialProvider } from "../../provider.ts";
import { type SearchFilters, toXSearchQuery } from "../../search-query.ts";
import { TwitterApiClient, type TwitterApiClientOptions } from "./client.ts";
import { communityExists, connections, lookupTweets, tweetExists, userByUsername } from "./lookups.ts";
import { tweetPage, userPage } from "./pages.ts";
import { parseArticle } from "./parse-article.ts";
import { unsupported } from "./unsupported.ts";
import { uploadMedia } from "./upload.ts";

export interface TwitterApiProviderOptions extends TwitterApiClientOptions {
  /**
   * The proxy twitterapi.io's write endpoints require (`http://user:pass@host:port`); without one the media
   * upload answers 501.
   */
  proxy?: string;
}

export function twitterApiProvider(options: TwitterApiProviderOptions): SocialProvider {
  const client = new TwitterApiClient(options);

  return {
    name: "twitterapi",

    async tweet(id, signal) {
      const found = await lookupTweets(client, [id], signal);
      return found.tweets.length > 0 ? found : null;
    },

    tweets: (ids, signal) => lookupTweets(client, ids, signal),
    userByUsername: (username, signal) => userByUsername(client, username, signal),

    async list() {
      throw unsupported("look a list up: twitterapi.io has no list lookup (its list pages work)");
    },

    async article(tweetId, signal) {
      const body = await client.get("/twitter/article", { tweet_id: tweetId }, signal);
      return parseArticle(body?.article, tweetId);
    },

    async searchTweets(filters: SearchFilters, page, signal) {
      const query = toXSearchQuery(filters);
      const get = (cursor?: string) =>
        client.get("/twitter/tweet/advanced_search", { query, queryType: "Latest", cursor }, signal);
      const found = await tweetPage(get, ["tweets"], page);
      return found ?? { tweets: [], includes: { users: [], tweets: [], media: [] } };
    },

    async mentions() {
      throw unsupported(
        "act as a caller's session for mentions: twitterapi.io reads mentions by username and cannot tell whose a cookie is",
      );
    },

    userTweets(username, page, signal) {
      const get = (cursor?: string) =>
        client.get("/twitter/user/last_tweets", { userName: username, cursor }, signal);
      const exists = async (s: AbortSignal) => (await userByUsername(client, username, s)) !== null;
      return tweetPage(get, ["tweets"], page, exists, signal);
    },

    quoteTweets(tweetId, page, signal) {
      const get = (cursor?: string) => client.get("/twitter/tweet/quotes", { tweetId, cursor }, signal);
      return tweetPage(get, ["tweets"], page, tweetExists(client, tweetId), signal);
    },

    replies(tweetId, page, signal) {
      const get = (cursor?: string) => client.get("/twitter/tweet/replies", { tweetId, cursor }, signal);
      return tweetPage(get, ["replies", "tweets"], page, tweetExists(client, tweetId), signal);
    },

    listTweets(listId, page, signal) {
      const get = (cursor?: string) => client.get("/twitter/list/tweets", { listId, cursor }, signal);
      return tweetPage(get, ["tweets"], page);
    },

    communityPosts(communityId, page, signal) {
      const get = (cursor?: string) =>
        client.get("/twitter/community/tweets", { community_id: communityId, cursor }, signal);
      return tweetPage(get, ["tweets"], page, communityExists(client, communityId), signal);
    },

    async searchUsers(query, page, signal) {
      const get = (cursor?: string) => client.get("/twitter/user/search", { query, cursor }, signal);
      return (await userPage(get, ["users"], page)) ?? { users: [] };
    },

    followers: (userId, page, signal) =>
      connections(client, "/twitter/user/followers", "followers", userId, page, signal),
    following: (userId, page, signal) =>
      connections(client, "/twitter/user/followings", "followings", userId, page, signal),

    retweetedBy(tweetId, page, signal) {
      const get = (cursor?: string) => client.get("/twitter/tweet/retweeters", { tweetId, cursor }, signal);
      return userPage(get, ["users"], page, tweetExists(client, tweetId), signal);
    },

    listMembers(listId, page, signal) {
      const get = (cursor?: string) =>
        client.get("/twitter/list/members", { list_id: listId, cursor }, signal);
      return userPage(get, ["members", "users"], page);
    },

    listFollowers(listId, page, signal) {
      const get = (cursor?: string) =>
        client.get("/twitter/list/followers", { list_id: listId, cursor }, signal);
      return userPage(get, ["followers", "users"], page);
    },

    uploadMedia: (session, file, signal) => uploadMedia(client, options.proxy, session, file, signal),
  };
}
