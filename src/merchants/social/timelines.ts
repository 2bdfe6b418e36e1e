/**
 * The social-data API's pages of tweets (docs/social.md): search, the caller's mentions, a user's tweets, a
 * tweet's quotes and replies, a list's tweets, a community's posts. Newest first, `next_token` to go on,
 * each endpoint's page size (docs/social.md). An unknown subject (user, tweet, list, community) is a 404, never charged.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { socialEndpoint } from "./endpoint.ts";
import { NO_USER } from "./lookups.ts";
import { type PagedByIdSpec, pagedById } from "./paged-by-id.ts";
import { cookie, day, minCount, nextToken, username, wordList } from "./params.ts";
import type { TweetPage } from "./provider.ts";
import { renderIncludes, renderMeta, renderTweet } from "./render.ts";
import { PAGE_SIZES, type PageScope, pageOf, type SocialSetup, type socialRuntime } from "./runtime.ts";
import { EXAMPLE_TWEET, EXAMPLE_USER, exampleTweetPage, TweetPageAnswer } from "./schemas.ts";
import { hasFilter, type SearchFilters } from "./search-query.ts";

/** A page of tweets as X API v2 answers it. */
function answer(page: TweetPage, nextToken: string | undefined) {
  return {
    data: page.tweets.map(renderTweet),
    includes: renderIncludes(page.includes, { tweets: page.tweets }),
    meta: renderMeta(page.tweets, nextToken, true),
  };
}

const FILTER_NAMES =
  "words, phrase, anyWords, noneWords, hashtags, from, to, mentioning, minReplies, minLikes, minReposts, since, until";

const SearchInput = z
  .object({
    words: wordList("Every one of these words (space separated)."),
    phrase: z.string().max(512).optional().describe("This exact phrase."),
    anyWords: wordList("At least one of these words (space separated)."),
    noneWords: wordList("None of these words (space separated)."),
    hashtags: wordList("Every one of these hashtags (space separated, # optional).", /^#/),
    from: username("from").optional().describe("Posted by this screen name."),
    to: username("to").optional().describe("In reply to this screen name."),
    mentioning: username("mentioning").optional().describe("Mentioning this screen name."),
    minReplies: minCount("replies"),
    minLikes: minCount("likes"),
    minReposts: minCount("reposts"),
    since: day("On or after this UTC date (YYYY-MM-DD)."),
    until: day("Before this UTC date (YYYY-MM-DD)."),
    next_token: nextToken,
  })
  .refine(({ next_token: _token, ...filters }) => hasFilter(filters), {
    message: `at least one filter is required: ${FILTER_NAMES}`,
  });

/** A search's `next_token` is bound to its filters, in a fixed form. */
function searchScope({ next_token: _token, ...filters }: SearchFilters & { next_token?: string }): PageScope {
  const subject = JSON.stringify(
    Object.entries(filters)
      .filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0))
      .sort(([a], [b]) => a.localeCompare(b)),
  );
  return { route: "/tweets/search", subject };
}

/** The caller's mentions: bound to the session without carrying it (a hash names whose they are). */
const mentionsScope = ({ auth_token }: { auth_token: string }): PageScope => ({
  route: "/tweets/mentions",
  subject: createHash("sha256").update(auth_token).digest("base64url"),
});

const userTweetsScope = ({ username }: { username: string }): PageScope => ({
  route: "/tweets/user",
  subject: username.toLowerCase(),
});

export function timelineEndpoints(setup: SocialSetup, runtimeOf: ReturnType<typeof socialRuntime>) {
  const byId = (
    spec: Omit<PagedByIdSpec<TweetPage, typeof TweetPageAnswer>, "output" | "exampleOutput" | "render">,
  ) =>
    pagedById(setup, runtimeOf, {
      ...spec,
      output: TweetPageAnswer,
      exampleOutput: exampleTweetPage,
      render: answer,
    });

  const search = socialEndpoint(setup, runtimeOf, {
    path: "/tweets/search",
    price: "0.006",
    description: `Tweets matching the filters (${FILTER_NAMES}; at least one), most recent first, ${PAGE_SIZES.search} a page.`,
    input: SearchInput,
    output: TweetPageAnswer,
    example: { input: { words: "x402 payments", minLikes: 10 }, output: exampleTweetPage },
    pageScope: searchScope,
    handler: async ({ next_token, ...filters }, rt, ctx) => {
      const { page, nextToken: next } = await pageOf(
        rt,
        searchScope(filters),
        next_token,
        PAGE_SIZES.search,
        (req) => rt.provider.searchTweets(filters, req, ctx.signal),
        "nothing to search",
      );
      return answer(page, next);
    },
  });

  const mentions = socialEndpoint(setup, runtimeOf, {
    path: "/tweets/mentions",
    price: "0.006",
    description: `Latest tweets that mention the authenticated user (your X session's auth_token), most recent first, ${PAGE_SIZES.mentions} a page.`,
    input: z.object({
      auth_token: cookie("auth_token", "auth_token"),
      ct0: cookie("ct0", "ct0").optional(),
      next_token: nextToken,
    }),
    output: TweetPageAnswer,
    secretParams: ["auth_token", "ct0"],
    example: { input: { auth_token: "a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2" }, output: exampleTweetPage },
    pageScope: mentionsScope,
    handler: async ({ auth_token, ct0, next_token }, rt, ctx) => {
      const session = { authToken: auth_token, ...(ct0 !== undefined && { ct0 }) };
      const { page, nextToken: next } = await pageOf(
        rt,
        mentionsScope({ auth_token }),
        next_token,
        PAGE_SIZES.mentions,
        (req) => rt.provider.mentions(session, req, ctx.signal),
        "no session",
      );
      return answer(page, next);
    },
  });

  const userTweets = socialEndpoint(setup, runtimeOf, {
    path: "/tweets/user",
    price: "0.01",
    description: `Latest tweets of the user, most recent first, ${PAGE_SIZES.userTweets} a page.`,
    input: z.object({ username: username(), next_token: nextToken }),
    output: TweetPageAnswer,
    errors: NO_USER,
    example: { input: { username: EXAMPLE_USER.username }, output: exampleTweetPage },
    pageScope: userTweetsScope,
    handler: async (input, rt, ctx) => {
      const { page, nextToken: next } = await pageOf(
        rt,
        userTweetsScope(input),
        input.next_token,
        PAGE_SIZES.userTweets,
        (req) => rt.provider.userTweets(input.username, req, ctx.signal),
        `no user @${input.username}: unknown, suspended or deactivated`,
      );
      return answer(page, next);
    },
  });

  const quoteTweets = byId({
    path: "/tweets/quote_tweets",
    description: `Quote tweets of the tweet, with author profiles, ${PAGE_SIZES.quoteTweets} a page.`,
    what: "tweet",
    exampleId: EXAMPLE_TWEET.id,
    size: PAGE_SIZES.quoteTweets,
    call: (rt, id, req, signal) => rt.provider.quoteTweets(id, req, signal),
    missing: (id) => `no tweet ${id}: it does not exist, was deleted, or is not visible`,
  });
  const replies = byId({
    path: "/tweets/replies",
    description: `Reply tweets of the tweet, with author profiles, ${PAGE_SIZES.replies} a page.`,
    what: "tweet",
    exampleId: EXAMPLE_TWEET.id,
    size: PAGE_SIZES.replies,
    call: (rt, id, req, signal) => rt.provider.replies(id, req, signal),
    missing: (id) => `no tweet ${id}: it does not exist, was deleted, or is not visible`,
  });
  const listTweets = byId({
    path: "/lists/tweets",
    description: `Latest tweets of the List's members, most recent first, ${PAGE_SIZES.listTweets} a page.`,
    what: "List",
    exampleId: "1790000000000008000",
    size: PAGE_SIZES.listTweets,
    call: (rt, id, req, signal) => rt.provider.listTweets(id, req, signal),
    missing: (id) => `no list ${id}: unknown or private`,
  });
  const communityPosts = byId({
    path: "/communities/posts",
    description: `Latest posts of the community with author profiles, ${PAGE_SIZES.communityPosts} a page.`,
    what: "community",
    exampleId: "1790000000000007000",
    size: PAGE_SIZES.communityPosts,
    call: (rt, id, req, signal) => rt.provider.communityPosts(id, req, signal),
    missing: (id) => `no community ${id}: unknown or private`,
  });

  return { search, mentions, userTweets, quoteTweets, replies, listTweets, communityPosts };
}
