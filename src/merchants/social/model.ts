/**
 * The social-data merchant's one model of X's data, what every provider (X's web GraphQL API, the paid
 * REST provider, the PostgreSQL archive) normalises its answers into, and what `render.ts` turns into the
 * answers' X API v2 shapes. Field names follow X API v2 where X has one, in camelCase.
 *
 * IDs are decimal strings (X's are up to 19 digits, past 2^53): never numbers. Times are ISO 8601 strings
 * in UTC (`2026-07-19T15:48:00.000Z`); the answers write them in X's legacy format.
 */

export interface PublicUserMetrics {
  followersCount: number;
  followingCount: number;
  tweetCount: number;
  listedCount: number;
  /** Likes the user gave, when the provider says. */
  likeCount?: number;
}

export interface SocialUser {
  id: string;
  /** Display name. */
  name: string;
  /** Screen name, without `@`. */
  username: string;
  createdAt: string;
  description: string;
  location: string | null;
  /** The profile's link, expanded when the provider expands it. */
  url: string | null;
  profileImageUrl: string | null;
  profileBannerUrl: string | null;
  protected: boolean;
  verified: boolean;
  /** X's `verified_type`: `blue`, `business`, `government`, or `none`. */
  verifiedType: "blue" | "business" | "government" | "none";
  pinnedTweetId: string | null;
  metrics: PublicUserMetrics;
}

export interface PublicTweetMetrics {
  retweetCount: number;
  replyCount: number;
  likeCount: number;
  quoteCount: number;
  bookmarkCount: number;
  /** Views; 0 when the provider does not say. */
  impressionCount: number;
}

export interface ReferencedTweet {
  type: "quoted" | "replied_to" | "retweeted";
  id: string;
}

/** Offsets are in Unicode code points of `text`, end exclusive, as X API v2 counts them. */
export interface TweetEntities {
  hashtags: { start: number; end: number; tag: string }[];
  mentions: { start: number; end: number; username: string; id?: string }[];
  urls: { start: number; end: number; url: string; expandedUrl: string; displayUrl: string }[];
  cashtags?: { start: number; end: number; tag: string }[];
}

export interface SocialTweet {
  id: string;
  /** The full text (a long post's whole note text, not its truncated first 280 characters). */
  text: string;
  authorId: string;
  createdAt: string;
  conversationId: string;
  /** BCP 47 as X detects it, or `und`. */
  lang: string;
  inReplyToUserId: string | null;
  metrics: PublicTweetMetrics;
  referencedTweets: ReferencedTweet[];
  entities: TweetEntities;
  /** Keys into the page's `media`. */
  mediaKeys: string[];
  possiblySensitive: boolean;
  /** The id of the article this tweet hosts, if it hosts one (`/articles/by/id`). */
  articleId?: string | null;
  /** The community it was posted in, if any. */
  communityId?: string | null;
}

export interface SocialMedia {
  /** X's media key, e.g. `3_1234567890123456789`. */
  mediaKey: string;
  type: "photo" | "video" | "animated_gif";
  /** The image (a photo) or the preview image (a video). */
  url: string;
  width: number | null;
  height: number | null;
  altText: string | null;
  /** Video length, when it is one. */
  durationMs?: number | null;
}

export interface SocialList {
  id: string;
  name: string;
  description: string;
  mode: "public" | "private";
  memberCount: number;
  /** X's `follower_count`: what docs/social.md calls the "subscriber count". */
  followerCount: number;
  createdAt: string;
  bannerUrl: string | null;
  ownerId: string;
}

/** An article (X's long-form post) hosted by a tweet. */
export interface SocialArticle {
  id: string;
  /** The tweet that hosts it: what `/articles/by/id` is asked with. */
  tweetId: string;
  authorId: string;
  title: string;
  previewText: string;
  coverImageUrl: string | null;
  publishedAt: string;
  /**
   * Its body: X's own Draft.js content state (the web API's and the archive's), rendered to Markdown by
   * `article-markdown.ts`, or Markdown already (a provider that gives nothing else).
   */
  content: { format: "draftjs"; state: DraftContentState } | { format: "markdown"; markdown: string };
}

/** Draft.js's raw content state, as X stores an article's body. */
export interface DraftContentState {
  blocks: DraftBlock[];
  /** Keyed by the decimal strings `entityRanges[].key` names. */
  entityMap: Record<string, DraftEntity>;
}

export interface DraftBlock {
  key: string;
  /** `unstyled`, `header-one`..`header-six`, `unordered-list-item`, `ordered-list-item`, `blockquote`, `code-block`, `atomic`. */
  type: string;
  text: string;
  depth?: number;
  /** Offsets in UTF-16 code units of `text`, as Draft.js counts them. */
  inlineStyleRanges: { offset: number; length: number; style: string }[];
  entityRanges: { offset: number; length: number; key: number | string }[];
}

export interface DraftEntity {
  /** `LINK`, `MEDIA`, `IMAGE`, `TWEET`, `DIVIDER`, ...: X's own names vary in case. */
  type: string;
  mutability?: string;
  data: Record<string, unknown>;
}

/**
 * What a page or a lookup brings with its main objects: the users, tweets (quoted, replied to) and
 * media they refer to, as X API v2's `includes`.
 */
export interface Includes {
  users: SocialUser[];
  tweets: SocialTweet[];
  media: SocialMedia[];
}

export const emptyIncludes = (): Includes => ({ users: [], tweets: [], media: [] });
