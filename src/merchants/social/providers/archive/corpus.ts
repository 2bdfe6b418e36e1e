/**
 * A synthetic X, for the demo, the tests and the benchmarks: users who follow each other, tweets with
 * hashtags, mentions, links, replies, quotes, reposts and photos, lists, a community and a few articles,
 * all as archive records (`records.ts`) ready for `importArchive`.
 *
 * Deterministic: the same options give the same records, byte for byte (a seeded PRNG, no clock). Streaming:
 * a generator that keeps per-user counters and a window of recent tweets, never the tweets themselves, so
 * a million tweets cost a few megabytes. What a user record must say before its tweets exist (its tweet
 * and follower counts) is counted by running the same seeded streams once ahead.
 *
 * Popularity is skewed the way social data is: a few accounts write, are followed and are mentioned much
 * more than the rest; a few words are very common and most are rare.
 */
import { createHash } from "node:crypto";
import type { DraftContentState, TweetEntities } from "../../model.ts";
import type { ArchiveRecord, ArchiveRecordOf } from "./records.ts";

export interface CorpusOptions {
  tweets: number;
  /** Default: one per 25 tweets, at least 20, at most 100,000. */
  users?: number;
  seed: number | string;
  /** The first tweet's time; the tweets span about 300 days from it. Default 2026-01-01T00:00:00Z. */
  start?: string;
}

/** The auth_token of the corpus's session, as the user with the most followers (the first user). */
export const corpusSessionToken = (seed: number | string): string =>
  createHash("sha256").update(`x402m-corpus-session:${seed}`).digest("hex").slice(0, 40);

/** sfc32 seeded from sha256(seed, stream): independent, reproducible streams of floats in [0, 1). */
function prng(seed: number | string, stream: string): () => number {
  const h = createHash("sha256").update(`${seed}/${stream}`).digest();
  let a = h.readUInt32LE(0);
  let b = h.readUInt32LE(4);
  let c = h.readUInt32LE(8);
  let d = h.readUInt32LE(12);
  return () => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
}

type Rng = () => number;
/** An index in [0, n) skewed toward 0 (the popular end); `power` 1 is uniform. */
const skewed = (rng: Rng, n: number, power = 2) => Math.min(n - 1, Math.floor(n * rng() ** power));
const pick = <T>(rng: Rng, items: readonly T[], power = 1): T => items[skewed(rng, items.length, power)] as T;
const chance = (rng: Rng, p: number) => rng() < p;

// A small vocabulary about what this project serves: payments, agents, Base.
const WORDS = (
  "the a to of and for is on with we our agent agents payment payments pay API request per onchain " +
  "wallet USDC Base x402 merchant merchants facilitator settle settlement protocol HTTP 402 price cents " +
  "fee gas block chain stablecoin invoice receipt metered usage model inference data crawler scraper " +
  "endpoint call calls money stream budget limit balance signed signature permit transfer account " +
  "machine buyer seller market open build shipping shipped today new fast cheap small micro tiny " +
  "every why how what works working launch launched demo docs feedback builders developers tool tools " +
  "report weekly revenue volume growth latency cache search archive tweet thread post reply quote " +
  "bazaar listing discovery resource access paywall subscription credit card rails internet native " +
  "trust proof verify verified ledger audit honest simple clear future think love great hard easy"
).split(" ");
const TAGS =
  "x402 Base USDC agents AI payments onchain buildonbase stablecoins micropayments API crypto".split(" ");
const FIRST =
  "Ada Alan Grace Linus Margaret Satoshi Vitalik Hal Nick Wei Dana Omar Priya Kenji Lena Sam".split(" ");
const LAST = "Builder Payments Agent Onchain Labs Ledger Stack Relay Node Signal Vault Bridge".split(" ");
const PLACES = [null, null, "Lisbon", "Berlin", "New York", "Singapore", "Lagos", "Buenos Aires", "onchain"];

/** Twitter's snowflake epoch: ids made from times look and sort like X's. */
const EPOCH = 1_288_834_974_657n;
const DAY = 86_400_000;
/** User, list and community ids: 19 digits, past 2^53 on purpose. */
const userId = (i: number) => (1_600_000_000_000_000_000n + BigInt(i) * 7919n).toString();
const listId = (i: number) => (1_700_000_000_000_000_000n + BigInt(i)).toString();

/** Who user `i` follows, skewed to popular accounts; the same pairs on every run of a seed. */
function* followsOf(seed: number | string, users: number): Generator<[number, number]> {
  const rng = prng(seed, "follows");
  for (let i = 0; i < users; i++) {
    const wanted = 1 + Math.floor(rng() ** 3 * Math.min(150, users - 1));
    const seen = new Set<number>();
    for (let k = 0; k < wanted; k++) {
      const j = skewed(rng, users, 2.5);
      if (j === i || seen.has(j)) continue;
      seen.add(j);
      yield [i, j];
    }
  }
}

interface Plan {
  author: number;
}

/** The author of each tweet, in order: the one stream counted ahead and replayed. */
function* authorsOf(seed: number | string, users: number, tweets: number): Generator<Plan> {
  const rng = prng(seed, "authors");
  for (let i = 0; i < tweets; i++) yield { author: skewed(rng, users, 2) };
}

export function* generateCorpus(options: CorpusOptions): Generator<ArchiveRecord> {
  const { seed } = options;
  const tweets = Math.max(0, Math.trunc(options.tweets));
  const users = Math.max(
    2,
    Math.trunc(options.users ?? Math.min(100_000, Math.max(20, Math.round(tweets / 25)))),
  );
  const start = Date.parse(options.start ?? "2026-01-01T00:00:00.000Z");
  const step = Math.max(1000, Math.floor((300 * DAY) / Math.max(1, tweets)));

  // Counted ahead: what the user records say.
  const tweetCount = new Int32Array(users);
  for (const { author } of authorsOf(seed, users, tweets)) tweetCount[author] = (tweetCount[author] ?? 0) + 1;
  const followers = new Int32Array(users);
  const followingCount = new Int32Array(users);
  for (const [a, b] of followsOf(seed, users)) {
    followingCount[a] = (followingCount[a] ?? 0) + 1;
    followers[b] = (followers[b] ?? 0) + 1;
  }
  const lists = makeLists(seed, users);
  const listed = new Int32Array(users);
  for (const list of lists) for (const m of list.members) listed[m] = (listed[m] ?? 0) + 1;

  const names = prng(seed, "users");
  const usernames: string[] = [];
  for (let i = 0; i < users; i++) {
    const first = pick(names, FIRST);
    const last = pick(names, LAST);
    const username = `${first}${last}${i}`.toLowerCase().slice(0, 15);
    usernames.push(username.length < 15 ? username : `u${i}`);
    const id = userId(i);
    yield {
      kind: "user",
      id,
      name: `${first} ${last}`,
      username: usernames[i] as string,
      createdAt: new Date(start - DAY * (30 + Math.floor(names() * 2000))).toISOString(),
      description: sentence(names, 6 + Math.floor(names() * 10)),
      location: pick(names, PLACES),
      url: chance(names, 0.3) ? `https://example.com/${usernames[i]}` : null,
      profileImageUrl: `https://pbs.twimg.com/profile_images/${id}/photo_normal.jpg`,
      profileBannerUrl: null,
      protected: false,
      verified: i < users / 10,
      verifiedType: i < users / 10 ? "blue" : "none",
      pinnedTweetId: null,
      metrics: {
        followersCount: followers[i] ?? 0,
        followingCount: followingCount[i] ?? 0,
        tweetCount: tweetCount[i] ?? 0,
        listedCount: listed[i] ?? 0,
      },
    };
  }
  for (const [a, b] of followsOf(seed, users)) {
    yield { kind: "follow", followerId: userId(a), followedId: userId(b) };
  }
  for (const list of lists) {
    yield {
      kind: "list",
      id: list.id,
      name: list.name,
      description: `Accounts about ${list.name.toLowerCase()}`,
      mode: "public",
      memberCount: list.members.length,
      followerCount: list.followers.length,
      createdAt: new Date(start - DAY * 10).toISOString(),
      bannerUrl: null,
      ownerId: userId(list.owner),
    };
    for (const m of list.members) yield { kind: "list_member", listId: list.id, userId: userId(m) };
    for (const f of list.followers) yield { kind: "list_follower", listId: list.id, userId: userId(f) };
  }
  const communityId = "1750000000000000001";
  yield {
    kind: "community",
    id: communityId,
    name: "x402 Builders",
    description: "People building paid APIs and agents on x402",
    createdAt: new Date(start - DAY * 60).toISOString(),
    memberCount: Math.min(users, 500),
  };
  yield { kind: "session", authToken: corpusSessionToken(seed), userId: userId(0) };

  yield* tweetsOf({ seed, users, tweets, start, step, usernames, communityId });
}

interface ListPlan {
  id: string;
  name: string;
  owner: number;
  members: number[];
  followers: number[];
}

function makeLists(seed: number | string, users: number): ListPlan[] {
  const rng = prng(seed, "lists");
  const count = Math.max(2, Math.floor(users / 400));
  return Array.from({ length: count }, (_, i) => {
    const members = new Set<number>();
    const wanted = 5 + Math.floor(rng() * 35);
    for (let k = 0; k < wanted; k++) members.add(skewed(rng, users, 1.5));
    const subscribers = new Set<number>();
    const wantedFollowers = 1 + Math.floor(rng() * 20);
    for (let k = 0; k < wantedFollowers; k++) subscribers.add(skewed(rng, users, 1));
    return {
      id: listId(i),
      name: `${pick(rng, TAGS)} ${pick(rng, ["builders", "people", "watch", "research", "news"])} ${i + 1}`,
      owner: skewed(rng, users, 2),
      members: [...members],
      followers: [...subscribers],
    };
  });
}

/** `n` words of the vocabulary, Zipf-like (the first words are the common ones). */
function sentence(rng: Rng, n: number): string {
  const words: string[] = [];
  for (let i = 0; i < n; i++) words.push(pick(rng, WORDS, 2.2));
  return words.join(" ");
}

interface Recent {
  id: string;
  author: number;
  conversationId: string;
}

interface TweetsPlan {
  seed: number | string;
  users: number;
  tweets: number;
  start: number;
  step: number;
  usernames: string[];
  communityId: string;
}

function* tweetsOf(plan: TweetsPlan): Generator<ArchiveRecord> {
  const { seed, users, usernames } = plan;
  const rng = prng(seed, "tweets");
  const authors = authorsOf(seed, users, plan.tweets);
  // A window of recent tweets to reply to and quote: replies come soon after what they answer.
  const recent: Recent[] = [];
  const articleEvery = Math.max(50, Math.floor(plan.tweets / 5));
  for (let i = 0; i < plan.tweets; i++) {
    const author = (authors.next().value as Plan).author;
    const ms = plan.start + i * plan.step + Math.floor(rng() * (plan.step - 1));
    const id = (((BigInt(ms) - EPOCH) << 22n) | BigInt(i & 0x3fffff)).toString();
    const createdAt = new Date(ms).toISOString();

    // The text, piece by piece, so entity offsets are exact (the vocabulary is ASCII: one code point a char).
    let text = "";
    const entities: TweetEntities = { hashtags: [], mentions: [], urls: [] };
    const mention = (who: number) => {
      const username = usernames[who] as string;
      entities.mentions.push({
        start: text.length,
        end: text.length + 1 + username.length,
        username,
        id: userId(who),
      });
      text += `@${username} `;
    };

    let parent: Recent | undefined;
    let quoted: Recent | undefined;
    if (recent.length > 0 && chance(rng, 0.2)) parent = pick(rng, recent);
    else if (recent.length > 0 && chance(rng, 0.06)) quoted = pick(rng, recent);
    if (parent) mention(parent.author);
    if (chance(rng, 0.15)) mention(skewed(rng, users, 2.5));
    text += sentence(rng, 5 + Math.floor(rng() * 18));
    const tagCount = chance(rng, 0.3) ? 1 + Math.floor(rng() * 2) : 0;
    for (let k = 0; k < tagCount; k++) {
      const tag = pick(rng, TAGS, 1.8);
      if (entities.hashtags.some((h) => h.tag === tag)) continue;
      text += " ";
      entities.hashtags.push({ start: text.length, end: text.length + 1 + tag.length, tag });
      text += `#${tag}`;
    }
    if (chance(rng, 0.08)) {
      const url = `https://t.co/${id.slice(-10)}`;
      text += " ";
      entities.urls.push({
        start: text.length,
        end: text.length + url.length,
        url,
        expandedUrl: `https://example.com/post/${i}`,
        displayUrl: `example.com/post/${i}`,
      });
      text += url;
    }

    const likes = Math.floor(Math.exp(rng() ** 3 * 8)) - 1;
    const retweets = Math.floor(likes / (2 + rng() * 8));
    const mediaKeys: string[] = [];
    if (chance(rng, 0.08)) {
      const mediaId = (BigInt(id) + 1n).toString();
      const mediaKey = `3_${mediaId}`;
      mediaKeys.push(mediaKey);
      yield {
        kind: "media",
        mediaKey,
        type: "photo",
        url: `https://pbs.twimg.com/media/${mediaId}.jpg`,
        width: 1200,
        height: 675,
        altText: chance(rng, 0.5) ? sentence(rng, 5) : null,
      };
    }
    const articleId = i % articleEvery === articleEvery - 1 ? (BigInt(id) + 2n).toString() : null;
    const tweet: ArchiveRecordOf<"tweet"> = {
      kind: "tweet",
      id,
      text,
      authorId: userId(author),
      createdAt,
      conversationId: parent ? parent.conversationId : id,
      lang: "en",
      inReplyToUserId: parent ? userId(parent.author) : null,
      metrics: {
        retweetCount: retweets,
        replyCount: Math.floor(rng() ** 3 * 12),
        likeCount: likes,
        quoteCount: Math.floor(rng() ** 4 * 4),
        bookmarkCount: Math.floor(likes / 10),
        impressionCount: likes * 40 + Math.floor(rng() * 500),
      },
      referencedTweets: parent
        ? [{ type: "replied_to", id: parent.id }]
        : quoted
          ? [{ type: "quoted", id: quoted.id }]
          : [],
      entities,
      mediaKeys,
      possiblySensitive: false,
      articleId,
      communityId: !parent && chance(rng, 0.03) ? plan.communityId : null,
    };
    yield tweet;
    if (articleId) yield article(rng, articleId, tweet);
    // Up to three reposters by name; the count says more, as X's does.
    const reposters = new Set<number>();
    for (let k = 0; k < Math.min(retweets, 3); k++) reposters.add(skewed(rng, users, 1.5));
    reposters.delete(author);
    for (const r of reposters) yield { kind: "retweet", userId: userId(r), tweetId: id };

    recent.push({ id, author, conversationId: tweet.conversationId });
    if (recent.length > 500) recent.shift();
  }
}

/** An article in X's Draft.js form: a title, paragraphs with bold, a list, a quote and a link. */
function article(rng: Rng, id: string, tweet: ArchiveRecordOf<"tweet">): ArchiveRecordOf<"article"> {
  const title = `On ${sentence(rng, 3)}`;
  const paragraph = sentence(rng, 25);
  const state: DraftContentState = {
    blocks: [
      { key: "h1", type: "header-one", text: title, inlineStyleRanges: [], entityRanges: [] },
      {
        key: "p1",
        type: "unstyled",
        text: paragraph,
        inlineStyleRanges: [{ offset: 0, length: Math.min(10, paragraph.length), style: "BOLD" }],
        entityRanges: [],
      },
      { key: "h2", type: "header-two", text: "What it takes", inlineStyleRanges: [], entityRanges: [] },
      {
        key: "l1",
        type: "unordered-list-item",
        text: sentence(rng, 6),
        inlineStyleRanges: [],
        entityRanges: [],
      },
      {
        key: "l2",
        type: "unordered-list-item",
        text: sentence(rng, 6),
        inlineStyleRanges: [],
        entityRanges: [],
      },
      { key: "q1", type: "blockquote", text: sentence(rng, 10), inlineStyleRanges: [], entityRanges: [] },
      {
        key: "p2",
        type: "unstyled",
        text: "Read the x402 spec for more.",
        inlineStyleRanges: [],
        entityRanges: [{ offset: 9, length: 10, key: 0 }],
      },
    ],
    entityMap: { "0": { type: "LINK", mutability: "MUTABLE", data: { url: "https://x402.org" } } },
  };
  return {
    kind: "article",
    id,
    tweetId: tweet.id,
    authorId: tweet.authorId,
    title,
    previewText: paragraph.slice(0, 140),
    coverImageUrl: null,
    publishedAt: tweet.createdAt,
    content: { format: "draftjs", state },
  };
}
