/**
 * The social provider over X's web GraphQL API (`x-web`): each method is one or two GraphQL operations
 * (`operations.ts`, their variables in `queries.ts`) through the client (`client.ts`), read by `reads.ts`
 * and the parsers into pages (`pages.ts`). What X's web app has no operation for is composed: quote tweets
 * are the search `quoted_tweet_id:<id>`, replies the conversation of `TweetDetail` after the focal tweet,
 * mentions the search `@<screen_name>` as the caller (found with `Viewer`), user search the search with
 * product `People`.
 */
import type { SocialProvider } from "../../provider.ts";
import { type SearchFilters, toXSearchQuery } from "../../search-query.ts";
import { XWebClient, type XWebOptions } from "./client.ts";
import { tweetPage, userPage } from "./pages.ts";
import { parseHostedArticle } from "./parse-article.ts";
import { parseReplies } from "./parse-conversation.ts";
import { Collected, parseTweet } from "./parse-tweet.ts";
import {
  communityPostsQuery,
  connectionsQuery,
  conversationQuery,
  listPeopleQuery,
  listTweetsQuery,
  retweetersQuery,
  userTweetsQuery,
} from "./queries.ts";
import {
  emptyMeansUnknownTweet,
  listById,
  lookup,
  search,
  timeline,
  tweetResult,
  userByUsername,
  viewer,
  withRepliedTo,
} from "./reads.ts";
import { uploadMedia } from "./upload.ts";

export function xWebProvider(options: XWebOptions): SocialProvider {
  const client = new XWebClient(options);

  return {
    name: "x-web",

    async tweet(id, signal) {
      const result = await tweetResult(client, id, signal);
      const into = new Collected();
      const t = result && parseTweet(result, into);
      return t ? withRepliedTo(client, { tweets: [t], includes: into.includes([t]) }, signal) : null;
    },

    async tweets(ids, signal) {
      return withRepliedTo(client, await lookup(client, ids, signal), signal);
    },

    userByUsername: (username, signal) => userByUsername(client, username, signal),

    list: (id, signal) => listById(client, id, signal),

    async article(tweetId, signal) {
      const result = await tweetResult(client, tweetId, signal);
      return result && parseHostedArticle(result);
    },

    async searchTweets(filters: SearchFilters, page, signal) {
      const found = await search(client, toXSearchQuery(filters), "Latest", page, signal);
      return withRepliedTo(client, tweetPage(found, page), signal);
    },

    async mentions(session, page, signal) {
      const me = await viewer(client, session, signal);
      const found = await search(client, `@${me.username}`, "Latest", page, signal, session);
      return withRepliedTo(client, tweetPage(found, page), signal);
    },

    async userTweets(username, page, signal) {
      const user = await userByUsername(client, username, signal);
      if (!user) return null;
      const found = await timeline(client, userTweetsQuery(user.id, page), signal);
      // Conversation modules can bring others' tweets a reply of the user's answers: only the user's own.
      return (
        found &&
        withRepliedTo(
          client,
          tweetPage(found, page, (t) => t.authorId === user.id),
          signal,
        )
      );
    },

    async quoteTweets(tweetId, page, signal) {
      const found = await search(client, `quoted_tweet_id:${tweetId}`, "Latest", page, signal);
      const known = await emptyMeansUnknownTweet(client, tweetId, tweetPage(found, page), page, signal);
      return known && withRepliedTo(client, known, signal);
    },

    async replies(tweetId, page, signal) {
      const found = await timeline(client, conversationQuery(tweetId, page), signal);
      const replies = found && parseReplies(found, tweetId, page);
      return replies && withRepliedTo(client, replies, signal);
    },

    async listTweets(listId, page, signal) {
      const found = await timeline(client, listTweetsQuery(listId, page), signal);
      return found && withRepliedTo(client, tweetPage(found, page), signal);
    },

    async communityPosts(communityId, page, signal) {
      const found = await timeline(client, communityPostsQuery(communityId, page), signal);
      return found && withRepliedTo(client, tweetPage(found, page), signal);
    },

    async searchUsers(query, page, signal) {
      return userPage(await search(client, query, "People", page, signal), page);
    },

    async followers(userId, page, signal) {
      const found = await timeline(client, connectionsQuery("Followers", userId, page), signal);
      return found && userPage(found, page);
    },

    async following(userId, page, signal) {
      const found = await timeline(client, connectionsQuery("Following", userId, page), signal);
      return found && userPage(found, page);
    },

    async retweetedBy(tweetId, page, signal) {
      const found = await timeline(client, retweetersQuery(tweetId, page), signal);
      return found && emptyMeansUnknownTweet(client, tweetId, userPage(found, page), page, signal);
    },

    async listMembers(listId, page, signal) {
      const found = await timeline(client, listPeopleQuery("ListMembers", listId, page), signal);
      return found && userPage(found, page);
    },

    async listFollowers(listId, page, signal) {
      const found = await timeline(client, listPeopleQuery("ListSubscribers", listId, page), signal);
      return found && userPage(found, page);
    },

    uploadMedia: (session, file, signal) => uploadMedia(client, session, file, signal),
  };
}
