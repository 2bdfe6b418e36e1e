/**
 * A small X in the social model, the same for every provider's contract tests: the archive loads it into
 * its tables, the fake upstreams (X's web GraphQL API, twitterapi.io) serve it in their own wire formats.
 * IDs are past 2^53 on purpose: a provider that parses one as a number loses its last digits.
 */
import type {
  DraftContentState,
  SocialArticle,
  SocialList,
  SocialMedia,
  SocialTweet,
  SocialUser,
} from "../../../src/merchants/social/model.ts";
import type { ArchiveRecordInput } from "../../../src/merchants/social/providers/archive/records.ts";

const id = (n: number) => (1_790_000_000_000_000_000n + BigInt(n)).toString();

function user(n: number, username: string, name: string, extra: Partial<SocialUser> = {}): SocialUser {
  return {
    id: id(n),
    name,
    username,
    createdAt: `2020-01-0${n}T10:00:00.000Z`,
    description: `${name} writes about payments and agents.`,
    location: null,
    url: null,
    profileImageUrl: `https://pbs.twimg.com/profile_images/${id(n)}/photo_normal.jpg`,
    profileBannerUrl: null,
    protected: false,
    verified: false,
    verifiedType: "none",
    pinnedTweetId: null,
    metrics: { followersCount: 0, followingCount: 0, tweetCount: 0, listedCount: 0 },
    ...extra,
  };
}

const counts = (followersCount: number, followingCount: number, tweetCount: number, listedCount = 0) => ({
  metrics: { followersCount, followingCount, tweetCount, listedCount },
});
export const ALICE = user(1, "alice", "Alice Liddell", {
  verified: true,
  verifiedType: "blue",
  location: "Oxford",
  ...counts(3, 1, 28),
});
export const BOB = user(2, "bob", "Bob Builder", counts(1, 1, 2, 1));
export const CAROL = user(3, "carol", "Carol Danvers", counts(0, 1, 2, 1));
export const DAVE = user(4, "dave", "Dave Grohl", counts(0, 1, 1));
export const USERS: readonly SocialUser[] = [ALICE, BOB, CAROL, DAVE];

/** Who follows whom: [follower, followed]. */
export const FOLLOWS: readonly [SocialUser, SocialUser][] = [
  [BOB, ALICE],
  [CAROL, ALICE],
  [DAVE, ALICE],
  [ALICE, BOB],
];

const minute = (m: number) => new Date(Date.UTC(2026, 10, 1, 12, 0) + m * 60_000).toISOString();
const metrics = (likes = 0, replies = 0, retweets = 0, quotes = 0) => ({
  retweetCount: retweets,
  replyCount: replies,
  likeCount: likes,
  quoteCount: quotes,
  bookmarkCount: 0,
  impressionCount: 0,
});

function tweet(
  n: number,
  author: SocialUser,
  at: number,
  text: string,
  extra: Partial<SocialTweet> = {},
): SocialTweet {
  return {
    id: id(1000 + n),
    text,
    authorId: author.id,
    createdAt: minute(at),
    conversationId: id(1000 + n),
    lang: "en",
    inReplyToUserId: null,
    metrics: metrics(),
    referencedTweets: [],
    entities: { hashtags: [], mentions: [], urls: [] },
    mediaKeys: [],
    possiblySensitive: false,
    ...extra,
  };
}

export const PHOTO: SocialMedia = {
  mediaKey: `3_${id(5000)}`,
  type: "photo",
  url: `https://pbs.twimg.com/media/${id(5000)}.jpg`,
  width: 1200,
  height: 800,
  altText: "A diagram of an x402 payment",
};

/** Alice's first post: a hashtag and a mention, the most liked. */
export const HELLO = tweet(1, ALICE, 0, "Hello #x402 world, @bob look", {
  metrics: metrics(42, 1, 2, 1),
  entities: {
    hashtags: [{ start: 6, end: 11, tag: "x402" }],
    mentions: [{ start: 19, end: 23, username: "bob", id: BOB.id }],
    urls: [],
  },
});
/** Bob's reply to it. */
export const REPLY = tweet(2, BOB, 5, "@alice agreed, payments per request are the way", {
  conversationId: HELLO.id,
  inReplyToUserId: ALICE.id,
  referencedTweets: [{ type: "replied_to", id: HELLO.id }],
  entities: { hashtags: [], mentions: [{ start: 0, end: 6, username: "alice", id: ALICE.id }], urls: [] },
  metrics: metrics(3),
});
/** Carol's quote of it. */
export const QUOTE = tweet(3, CAROL, 10, "This is the best thread on agent payments", {
  referencedTweets: [{ type: "quoted", id: HELLO.id }],
  metrics: metrics(7),
});
/** Alice's photo, retweeted by Bob and Carol. */
export const PICTURE = tweet(4, ALICE, 15, "Our diagram of the flow", {
  mediaKeys: [PHOTO.mediaKey],
  metrics: metrics(5, 0, 2),
});
/** Alice's article. */
export const ARTICLE_TWEET = tweet(5, ALICE, 20, "I wrote an article on metered payments", {
  articleId: id(6000),
  metrics: metrics(9),
});
/** Community posts by Bob and Carol. */
export const COMMUNITY_ID = id(7000);
export const COMMUNITY_POSTS = [
  tweet(6, BOB, 25, "First post in the builders community", { communityId: COMMUNITY_ID }),
  tweet(7, CAROL, 30, "Welcome, builders", { communityId: COMMUNITY_ID }),
];
/** 25 more posts by Alice, a minute apart (for pages), the newest last. */
export const ALICE_SERIES = Array.from({ length: 25 }, (_, i) =>
  tweet(100 + i, ALICE, 60 + i, `Daily note number ${i + 1} on the payments ledger`),
);
/** Dave mentions Alice. */
export const MENTION = tweet(8, DAVE, 40, "@alice can you review my merchant?", {
  entities: { hashtags: [], mentions: [{ start: 0, end: 6, username: "alice", id: ALICE.id }], urls: [] },
});

export const TWEETS: readonly SocialTweet[] = [
  HELLO,
  REPLY,
  QUOTE,
  PICTURE,
  ARTICLE_TWEET,
  ...COMMUNITY_POSTS,
  MENTION,
  ...ALICE_SERIES,
];
export const MEDIA: readonly SocialMedia[] = [PHOTO];

/** Who reposted what: [user, tweet]. */
export const RETWEETS: readonly [SocialUser, SocialTweet][] = [
  [BOB, PICTURE],
  [CAROL, PICTURE],
];

export const LIST: SocialList = {
  id: id(8000),
  name: "Payment builders",
  description: "People building x402 merchants",
  mode: "public",
  memberCount: 2,
  followerCount: 1,
  createdAt: "2025-06-01T09:00:00.000Z",
  bannerUrl: null,
  ownerId: ALICE.id,
};
export const LIST_MEMBERS: readonly SocialUser[] = [BOB, CAROL];
export const LIST_FOLLOWERS: readonly SocialUser[] = [DAVE];

const ARTICLE_STATE: DraftContentState = {
  blocks: [
    { key: "a", type: "header-one", text: "Metered payments", inlineStyleRanges: [], entityRanges: [] },
    {
      key: "b",
      type: "unstyled",
      text: "Pay for what you use, and nothing more.",
      inlineStyleRanges: [{ offset: 0, length: 3, style: "BOLD" }],
      entityRanges: [],
    },
    { key: "c", type: "unordered-list-item", text: "exact", inlineStyleRanges: [], entityRanges: [] },
    { key: "d", type: "unordered-list-item", text: "upto", inlineStyleRanges: [], entityRanges: [] },
  ],
  entityMap: {},
};

export const ARTICLE: SocialArticle = {
  id: id(6000),
  tweetId: ARTICLE_TWEET.id,
  authorId: ALICE.id,
  title: "Metered payments",
  previewText: "Pay for what you use, and nothing more.",
  coverImageUrl: `https://pbs.twimg.com/media/${id(6001)}.jpg`,
  publishedAt: ARTICLE_TWEET.createdAt,
  content: { format: "draftjs", state: ARTICLE_STATE },
};

/** Alice's web session: the caller's cookies for `/tweets/mentions` and `/tweets/mediaUpload`. */
export const ALICE_SESSION = {
  authToken: "a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2",
  ct0: "c0ffee".repeat(8),
};

/** IDs no provider knows. */
export const UNKNOWN_ID = id(999_999);

/**
 * The world as archive records (the archive provider's import format), with Alice's session, in an order
 * that does not matter: the archive imports edges before what they join.
 */
export function worldArchiveRecords(): ArchiveRecordInput[] {
  return [
    ...FOLLOWS.map(([a, b]) => ({ kind: "follow" as const, followerId: a.id, followedId: b.id })),
    ...USERS.map((u) => ({ kind: "user" as const, ...u })),
    ...MEDIA.map((m) => ({ kind: "media" as const, ...m })),
    ...TWEETS.map((t) => ({ kind: "tweet" as const, ...t })),
    ...RETWEETS.map(([u, t]) => ({ kind: "retweet" as const, userId: u.id, tweetId: t.id })),
    { kind: "list", ...LIST },
    ...LIST_MEMBERS.map((u) => ({ kind: "list_member" as const, listId: LIST.id, userId: u.id })),
    ...LIST_FOLLOWERS.map((u) => ({ kind: "list_follower" as const, listId: LIST.id, userId: u.id })),
    { kind: "community", id: COMMUNITY_ID, name: "Builders", createdAt: "2025-01-01T00:00:00.000Z" },
    { kind: "article", ...ARTICLE },
    { kind: "session", authToken: ALICE_SESSION.authToken, userId: ALICE.id },
  ];
}
