/**
 * The social-data API's answers as zod schemas (for the OpenAPI document and the Bazaar extension) and
 * the examples every endpoint shows, rendered from one example model by `render.ts`, so the examples are
 * what the API really answers.
 */
import { z } from "zod";
import type { SocialList, SocialTweet, SocialUser } from "./model.ts";
import { renderList, renderTweet, renderUser } from "./render.ts";

const Metrics = z.record(z.string(), z.number());

export const User = z
  .object({
    id: z.string(),
    name: z.string(),
    username: z.string(),
    created_at: z.string().describe('X\'s legacy format: "Sun Jul 19 15:48:00 +0000 2026".'),
    description: z.string(),
    location: z.string().nullable(),
    url: z.string().nullable(),
    profile_image_url: z.string().nullable(),
    profile_banner_url: z.string().nullable(),
    protected: z.boolean(),
    verified: z.boolean(),
    verified_type: z.string(),
    pinned_tweet_id: z.string().nullable(),
    public_metrics: Metrics,
  })
  .describe("A user, in X API v2's fields.");

export const Tweet = z
  .object({
    id: z.string(),
    text: z.string(),
    author_id: z.string(),
    created_at: z.string(),
    conversation_id: z.string(),
    lang: z.string(),
    in_reply_to_user_id: z.string().optional(),
    possibly_sensitive: z.boolean(),
    public_metrics: Metrics,
    referenced_tweets: z.array(z.object({ type: z.string(), id: z.string() })).optional(),
    entities: z.record(z.string(), z.array(z.record(z.string(), z.unknown()))).optional(),
    attachments: z.object({ media_keys: z.array(z.string()) }).optional(),
    edit_history_tweet_ids: z.array(z.string()),
    article: z.object({ id: z.string() }).optional(),
    community_id: z.string().optional(),
  })
  .describe("A post, in X API v2's fields.");

export const Media = z.object({
  media_key: z.string(),
  type: z.string(),
  url: z.string().optional(),
  preview_image_url: z.string().optional(),
  width: z.number().nullable(),
  height: z.number().nullable(),
  alt_text: z.string().optional(),
  duration_ms: z.number().optional(),
});

export const Includes = z
  .object({
    users: z.array(User).optional(),
    tweets: z.array(Tweet).optional(),
    media: z.array(Media).optional(),
  })
  .optional()
  .describe("The users, posts and media the answer refers to (authors, quoted and replied-to posts).");

export const Meta = z.object({
  result_count: z.number().int(),
  newest_id: z.string().optional(),
  oldest_id: z.string().optional(),
  next_token: z
    .string()
    .optional()
    .describe("Pass as next_token for the next page; absent on the last page."),
});

export const List = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  private: z.boolean(),
  mode: z.string(),
  member_count: z.number().int(),
  follower_count: z.number().int().describe("Subscribers."),
  created_at: z.string(),
  banner_url: z.string().nullable(),
  owner_id: z.string(),
});

export const NotFoundError = z.object({
  value: z.string(),
  detail: z.string(),
  title: z.string(),
  resource_type: z.string(),
  parameter: z.string(),
  resource_id: z.string(),
  type: z.string(),
});

export const TweetAnswer = z.object({ data: Tweet, includes: Includes });
export const TweetsAnswer = z.object({
  data: z.array(Tweet),
  includes: Includes,
  errors: z.array(NotFoundError).optional(),
});
export const TweetPageAnswer = z.object({ data: z.array(Tweet), includes: Includes, meta: Meta });
export const UserAnswer = z.object({ data: User });
export const UserPageAnswer = z.object({ data: z.array(User), meta: Meta });
export const ListAnswer = z.object({ data: List, includes: Includes });
export const ArticleAnswer = z.object({
  data: z.object({
    tweet_id: z.string(),
    article_id: z.string(),
    title: z.string(),
    preview_text: z.string(),
    cover_image_url: z.string().nullable(),
    published_at: z.string(),
    article_content: z
      .string()
      .describe("The body as Markdown: headings, bold, italic, lists, links, images."),
    author_id: z.string(),
  }),
  includes: Includes,
});
export const UploadAnswer = z.object({
  media_id: z.string().describe("A decimal string (X's ids pass 2^53)."),
  media_id_string: z.string(),
  media_key: z.string().nullable(),
  size: z.number().int(),
  expires_after_secs: z.number().int().nullable(),
  image: z.object({ image_type: z.string(), w: z.number().int(), h: z.number().int() }).nullable(),
});

/** The example model every endpoint's example is rendered from. */
export const EXAMPLE_USER: SocialUser = {
  id: "1790000000000000001",
  name: "Alice Liddell",
  username: "alice",
  createdAt: "2020-01-01T10:00:00.000Z",
  description: "Builds paid APIs for agents.",
  location: "Oxford",
  url: null,
  profileImageUrl: "https://pbs.twimg.com/profile_images/1790000000000000001/photo_normal.jpg",
  profileBannerUrl: null,
  protected: false,
  verified: true,
  verifiedType: "blue",
  pinnedTweetId: null,
  metrics: { followersCount: 1520, followingCount: 310, tweetCount: 4210, listedCount: 12 },
};

export const EXAMPLE_TWEET: SocialTweet = {
  id: "1790000000000001001",
  text: "Hello #x402 world",
  authorId: EXAMPLE_USER.id,
  createdAt: "2026-11-01T12:00:00.000Z",
  conversationId: "1790000000000001001",
  lang: "en",
  inReplyToUserId: null,
  metrics: {
    retweetCount: 2,
    replyCount: 1,
    likeCount: 42,
    quoteCount: 1,
    bookmarkCount: 3,
    impressionCount: 1800,
  },
  referencedTweets: [],
  entities: { hashtags: [{ start: 6, end: 11, tag: "x402" }], mentions: [], urls: [] },
  mediaKeys: [],
  possiblySensitive: false,
};

export const EXAMPLE_LIST: SocialList = {
  id: "1790000000000008000",
  name: "Payment builders",
  description: "People building x402 merchants",
  mode: "public",
  memberCount: 2,
  followerCount: 1,
  createdAt: "2025-06-01T09:00:00.000Z",
  bannerUrl: null,
  ownerId: EXAMPLE_USER.id,
};

export const exampleUser = renderUser(EXAMPLE_USER);
export const exampleTweet = renderTweet(EXAMPLE_TWEET);
export const exampleList = renderList(EXAMPLE_LIST);
export const exampleTweetPage = {
  data: [exampleTweet],
  includes: { users: [exampleUser] },
  meta: {
    result_count: 1,
    newest_id: exampleTweet.id,
    oldest_id: exampleTweet.id,
    next_token: "WyIvdHdlZXRzL3VzZXIiXQ.c2lnbmF0dXJl",
  },
};
export const exampleUserPage = { data: [exampleUser], meta: { result_count: 1 } };
