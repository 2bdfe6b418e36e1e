/**
 * The social-data API's lookups (docs/social.md): a tweet, several tweets, a user, a list, an article. Not
 * found (deleted, suspended, private, unknown) is a 404, never charged; `/tweets` reports the ids it
 * could not find in X API v2's `errors`, and is a 404 only when it found none.
 */
import { z } from "zod";
import { NotFoundError } from "../../common/errors.ts";
import { articleMarkdown } from "./article-markdown.ts";
import { socialEndpoint } from "./endpoint.ts";
import { emptyIncludes } from "./model.ts";
import { idList, numericId, username } from "./params.ts";
import type { SocialProvider } from "./provider.ts";
import { legacyDate, renderIncludes, renderList, renderTweet, renderUser } from "./render.ts";
import type { SocialSetup, socialRuntime } from "./runtime.ts";
import {
  ArticleAnswer,
  EXAMPLE_TWEET,
  EXAMPLE_USER,
  exampleList,
  exampleTweet,
  exampleUser,
  ListAnswer,
  TweetAnswer,
  TweetsAnswer,
  UserAnswer,
} from "./schemas.ts";

/** The profile of `name` as `/users/by/username` (and the proxy's `/pay/<agent_id>`) answers it. */
/** The 404 of a route about one user. */
export const NO_USER = { 404: "The user is unknown, suspended or deactivated (not_found)." } as const;

export async function userAnswer(provider: SocialProvider, name: string, signal: AbortSignal) {
  const user = await provider.userByUsername(name, signal);
  if (!user) throw new NotFoundError(`no user @${name}: unknown, suspended or deactivated`);
  return { data: renderUser(user) };
}

/** At most this many ids a `/tweets` call (docs/social.md). */
export const MAX_TWEET_IDS = 50;

export function lookupEndpoints(setup: SocialSetup, runtimeOf: ReturnType<typeof socialRuntime>) {
  const tweetById = socialEndpoint(setup, runtimeOf, {
    path: "/tweets/by/id",
    price: "0.0025",
    description:
      "Full tweet: text, author profile, creation date, engagement metrics (likes, retweets, replies, quotes, bookmarks), referenced tweets.",
    input: z.object({ id: numericId("id", "tweet") }),
    output: TweetAnswer,
    errors: { 404: "The tweet does not exist, was deleted or is not visible (not_found)." },
    example: {
      input: { id: EXAMPLE_TWEET.id },
      output: { data: exampleTweet, includes: { users: [exampleUser] } },
    },
    handler: async ({ id }, { provider }, ctx) => {
      const found = await provider.tweet(id, ctx.signal);
      const tweet = found?.tweets[0];
      if (!found || !tweet)
        throw new NotFoundError(`no tweet ${id}: it does not exist, was deleted, or is not visible`);
      return { data: renderTweet(tweet), includes: renderIncludes(found.includes, { tweets: [tweet] }) };
    },
  });

  const tweetsByIds = socialEndpoint(setup, runtimeOf, {
    path: "/tweets",
    price: "0.01",
    description: `Tweets by ID (at most ${MAX_TWEET_IDS}), each with full text, author profile and engagement metrics; IDs not found are listed in errors.`,
    input: z.object({ ids: idList("ids", MAX_TWEET_IDS) }),
    output: TweetsAnswer,
    errors: {
      404: "None of the tweets exists or is visible (not_found); some missing are listed in `errors`.",
    },
    example: {
      input: { ids: `${EXAMPLE_TWEET.id},1790000000000001002` },
      output: { data: [exampleTweet], includes: { users: [exampleUser] } },
    },
    handler: async ({ ids }, { provider }, ctx) => {
      const found = await provider.tweets(ids, ctx.signal);
      if (found.tweets.length === 0)
        throw new NotFoundError(`none of these tweets exists or is visible: ${ids.join(", ")}`);
      const have = new Set(found.tweets.map((t) => t.id));
      const errors = ids
        .filter((id) => !have.has(id))
        .map((id) => ({
          value: id,
          detail: `Could not find tweet with ids: [${id}].`,
          title: "Not Found Error",
          resource_type: "tweet",
          parameter: "ids",
          resource_id: id,
          type: "https://api.twitter.com/2/problems/resource-not-found",
        }));
      return {
        data: found.tweets.map(renderTweet),
        includes: renderIncludes(found.includes, { tweets: found.tweets }),
        ...(errors.length > 0 && { errors }),
      };
    },
  });

  const userByUsername = socialEndpoint(setup, runtimeOf, {
    path: "/users/by/username",
    price: "0.005",
    description:
      "Profile: id, name, username, bio, follower count, following count, tweet count, verification status, profile image URL.",
    input: z.object({ username: username() }),
    output: UserAnswer,
    errors: NO_USER,
    example: { input: { username: EXAMPLE_USER.username }, output: { data: exampleUser } },
    handler: (input, { provider }, ctx) => userAnswer(provider, input.username, ctx.signal),
  });

  const listById = socialEndpoint(setup, runtimeOf, {
    path: "/lists/by/id",
    price: "0.0025",
    description:
      "List: name, description, mode, member count, subscriber count, creation date, banner image, owner profile.",
    input: z.object({ id: numericId("id", "List") }),
    output: ListAnswer,
    errors: { 404: "The List is unknown or private (not_found)." },
    example: {
      input: { id: exampleList.id },
      output: { data: exampleList, includes: { users: [exampleUser] } },
    },
    handler: async ({ id }, { provider }, ctx) => {
      const found = await provider.list(id, ctx.signal);
      if (!found) throw new NotFoundError(`no list ${id}: unknown or private`);
      return {
        data: renderList(found.list),
        includes: renderIncludes({ ...emptyIncludes(), users: [found.owner] }),
      };
    },
  });

  const articleById = socialEndpoint(setup, runtimeOf, {
    path: "/articles/by/id",
    price: "0.01",
    description:
      "The article a tweet hosts: title, preview text, cover image, publish date and article_content as Markdown (headings, bold, italic, lists, links, images).",
    input: z.object({
      id: numericId("id", "tweet").describe("The numeric ID of the tweet that hosts the article."),
    }),
    output: ArticleAnswer,
    errors: { 404: "The tweet hosts no article, or does not exist or is not visible (not_found)." },
    example: {
      input: { id: EXAMPLE_TWEET.id },
      output: {
        data: {
          tweet_id: EXAMPLE_TWEET.id,
          article_id: "1790000000000006000",
          title: "Metered payments",
          preview_text: "Pay for what you use, and nothing more.",
          cover_image_url: "https://pbs.twimg.com/media/1790000000000006001.jpg",
          published_at: legacyDate(EXAMPLE_TWEET.createdAt),
          article_content: "# Metered payments\n\n**Pay** for what you use, and nothing more.\n",
          author_id: EXAMPLE_USER.id,
        },
        includes: { users: [exampleUser] },
      },
    },
    handler: async ({ id }, { provider }, ctx) => {
      const found = await provider.article(id, ctx.signal);
      if (!found)
        throw new NotFoundError(`tweet ${id} hosts no article (or does not exist, or is not visible)`);
      const { article, author } = found;
      return {
        data: {
          tweet_id: article.tweetId,
          article_id: article.id,
          title: article.title,
          preview_text: article.previewText,
          cover_image_url: article.coverImageUrl,
          published_at: legacyDate(article.publishedAt),
          article_content:
            article.content.format === "markdown"
              ? article.content.markdown
              : articleMarkdown(article.content.state),
          author_id: article.authorId,
        },
        includes: renderIncludes({ ...emptyIncludes(), users: [author] }),
      };
    },
  });

  return { tweetById, tweetsByIds, userByUsername, listById, articleById };
}
