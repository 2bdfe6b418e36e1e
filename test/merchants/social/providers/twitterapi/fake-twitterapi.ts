/**
 * A fake twitterapi.io on 127.0.0.1 serving the contract's world (`world.ts`) in twitterapi.io's wire format
 * as their docs show it: users `{type: "user", userName, id, isBlueVerified, followers, following, createdAt
 * (X's legacy format), ...}`, tweets `{type: "tweet", id, text, author, entities{hashtags[{indices, text}],
 * user_mentions[{id_str, name, screen_name}]}, quoted_tweet, ...}`, pages `{tweets|users|followers|...,
 * has_next_page, next_cursor}` of their fixed sizes (20 tweets, 200 followers, 100 reposters, 20 members), and
 * errors as HTTP 200 `{"status": "error", "msg"}`. It checks `x-api-key` (HTTP 401 without the right one).
 *
 * `override` lets a test answer a request its own way (a 429, garbage, a hang).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { SocialMedia, SocialTweet, SocialUser } from "../../../../../src/merchants/social/model.ts";
import { legacyDate } from "../../../../../src/merchants/social/render.ts";
import {
  ALICE_SESSION,
  ARTICLE,
  ARTICLE_TWEET,
  COMMUNITY_ID,
  FOLLOWS,
  LIST,
  LIST_FOLLOWERS,
  LIST_MEMBERS,
  MEDIA,
  RETWEETS,
  TWEETS,
  USERS,
} from "../../world.ts";

export const FAKE_API_KEY = "test-key-0123456789abcdef";

export interface FakeRequest {
  method: string;
  path: string;
  params: Record<string, string>;
}

/** A test's own answer: a status, headers and a raw body; "hang" never answers. */
export type Override = (
  req: FakeRequest,
) => { status?: number; headers?: Record<string, string>; body: string } | "hang" | undefined;

export interface FakeTwitterApi {
  url: string;
  requests: FakeRequest[];
  override: Override | undefined;
  close: () => Promise<void>;
}

const PAGE = {
  tweets: 20,
  followers: 200,
  retweeters: 100,
  members: 20,
  users: 20,
} as const;

const byId = new Map(USERS.map((u) => [u.id, u]));
const byName = new Map(USERS.map((u) => [u.username.toLowerCase(), u]));
const newestFirst = (a: SocialTweet, b: SocialTweet) => b.createdAt.localeCompare(a.createdAt);

export function wireUser(u: SocialUser) {
  return {
    type: "user",
    userName: u.username,
    url: `https://x.com/${u.username}`,
    id: u.id,
    name: u.name,
    isBlueVerified: u.verifiedType === "blue",
    verifiedType: u.verifiedType === "business" || u.verifiedType === "government" ? u.verifiedType : "",
    profilePicture: u.profileImageUrl ?? "",
    coverPicture: u.profileBannerUrl ?? "",
    description: u.description,
    location: u.location ?? "",
    followers: u.metrics.followersCount,
    following: u.metrics.followingCount,
    canDm: false,
    createdAt: legacyDate(u.createdAt),
    favouritesCount: 0,
    hasCustomTimelines: false,
    isTranslator: false,
    mediaCount: 0,
    statusesCount: u.metrics.tweetCount,
    withheldInCountries: [],
    affiliatesHighlightedLabel: {},
    possiblySensitive: false,
    pinnedTweetIds: u.pinnedTweetId ? [u.pinnedTweetId] : [],
    isAutomated: false,
    unavailable: false,
    profile_bio: { description: u.description, entities: {} },
  };
}

function wireMedia(m: SocialMedia) {
  const id = m.mediaKey.split("_")[1];
  return {
    id_str: id,
    media_key: m.mediaKey,
    type: m.type,
    media_url_https: m.url,
    url: "https://t.co/abc",
    display_url: "pic.x.com/abc",
    expanded_url: "https://x.com/i/photo/1",
    indices: [0, 0],
    original_info: { width: m.width, height: m.height },
    ext_alt_text: m.altText,
  };
}

export function wireTweet(t: SocialTweet): Record<string, unknown> {
  const author = byId.get(t.authorId) as SocialUser;
  const repliedTo = t.referencedTweets.find((r) => r.type === "replied_to")?.id ?? null;
  const quoted = t.referencedTweets.find((r) => r.type === "quoted")?.id;
  const quotedTweet = quoted ? TWEETS.find((x) => x.id === quoted) : undefined;
  const media = MEDIA.filter((m) => t.mediaKeys.includes(m.mediaKey));
  return {
    type: "tweet",
    id: t.id,
    url: `https://x.com/${author.username}/status/${t.id}`,
    text: t.text,
    source: "Twitter Web App",
    retweetCount: t.metrics.retweetCount,
    replyCount: t.metrics.replyCount,
    likeCount: t.metrics.likeCount,
    quoteCount: t.metrics.quoteCount,
    viewCount: t.metrics.impressionCount,
    createdAt: legacyDate(t.createdAt),
    lang: t.lang,
    bookmarkCount: t.metrics.bookmarkCount,
    isReply: repliedTo !== null,
    inReplyToId: repliedTo,
    conversationId: t.conversationId,
    displayTextRange: [0, [...t.text].length],
    inReplyToUserId: t.inReplyToUserId,
    inReplyToUsername: t.inReplyToUserId ? byId.get(t.inReplyToUserId)?.username : null,
    author: wireUser(author),
    entities: {
      hashtags: t.entities.hashtags.map((h) => ({ indices: [h.start, h.end], text: h.tag })),
      urls: t.entities.urls.map((u) => ({
        display_url: u.displayUrl,
        expanded_url: u.expandedUrl,
        indices: [u.start, u.end],
        url: u.url,
      })),
      // As their docs show them: no indices.
      user_mentions: t.entities.mentions.map((m) => ({
        id_str: m.id ?? byName.get(m.username)?.id,
        name: byName.get(m.username)?.name ?? m.username,
        screen_name: m.username,
      })),
    },
    ...(media.length > 0 && { extendedEntities: { media: media.map(wireMedia) } }),
    quoted_tweet: quotedTweet ? wireTweet(quotedTweet) : null,
    retweeted_tweet: null,
    isLimitedReply: false,
  };
}

/** Their cursors are opaque strings; these encode the offset. */
const cursorOf = (offset: number) => `DAAC${Buffer.from(`offset:${offset}`).toString("base64")}`;
function offsetOf(cursor: string | undefined): number {
  if (!cursor) return 0;
  const m = /^offset:(\d+)$/.exec(Buffer.from(cursor.slice(4), "base64").toString("utf8"));
  return m ? Number(m[1]) : 0;
}

function page<T>(all: readonly T[], size: number, cursor: string | undefined) {
  const at = offsetOf(cursor);
  const items = all.slice(at, at + size);
  const more = at + size < all.length;
  return { items, has_next_page: more, next_cursor: more ? cursorOf(at + size) : "" };
}

const words = (s: string): string[] => s.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
const unquote = (s: string) => s.replace(/^"|"$/g, "").toLowerCase();

/** X's search syntax, as much of it as `toXSearchQuery` writes. */
export function matches(t: SocialTweet, query: string): boolean {
  const author = byId.get(t.authorId) as SocialUser;
  const tokens = query.match(/-?"[^"]*"|\([^)]*\)|\S+/g) ?? [];
  const has = (term: string) =>
    term.startsWith('"')
      ? t.text.toLowerCase().includes(unquote(term))
      : words(t.text).includes(term.toLowerCase());
  return tokens.every((token) => {
    if (token.startsWith("(")) return token.slice(1, -1).split(" OR ").some(has);
    if (token.startsWith("-")) return !has(token.slice(1));
    if (token.startsWith("#"))
      return t.entities.hashtags.some((h) => h.tag.toLowerCase() === token.slice(1).toLowerCase());
    if (token.startsWith("@"))
      return t.entities.mentions.some((m) => m.username === token.slice(1).toLowerCase());
    const [op, value = ""] = token.split(/:(.*)/s);
    switch (op) {
      case "from":
        return author.username === value.toLowerCase();
      case "to":
        return t.inReplyToUserId === byName.get(value.toLowerCase())?.id;
      case "min_replies":
        return t.metrics.replyCount >= Number(value);
      case "min_faves":
        return t.metrics.likeCount >= Number(value);
      case "min_retweets":
        return t.metrics.retweetCount >= Number(value);
      case "since":
        return t.createdAt >= `${value}T00:00:00.000Z`;
      case "until":
        return t.createdAt < `${value}T00:00:00.000Z`;
      default:
        return has(token);
    }
  });
}

const ok = (body: Record<string, unknown>) => ({ status: "success", msg: "success", ...body });
const error = (msg: string) => ({ status: "error", msg });

function tweetsPage(all: SocialTweet[], key: string, cursor: string | undefined, envelope = true) {
  const p = page([...all].sort(newestFirst), PAGE.tweets, cursor);
  const body = { [key]: p.items.map(wireTweet), has_next_page: p.has_next_page, next_cursor: p.next_cursor };
  return envelope ? ok(body) : body;
}

function usersPage(all: readonly SocialUser[], key: string, size: number, cursor: string | undefined) {
  const p = page(all, size, cursor);
  return ok({ [key]: p.items.map(wireUser), has_next_page: p.has_next_page, next_cursor: p.next_cursor });
}

/** twitterapi.io's answer to a GET, as JSON. */
function answer(path: string, q: Record<string, string>): unknown {
  const cursor = q.cursor;
  switch (path) {
    case "/twitter/user/info": {
      const u = byName.get((q.userName ?? "").toLowerCase());
      return u ? ok({ data: wireUser(u) }) : error("User not found");
    }
    case "/twitter/user/batch_info_by_ids": {
      const ids = (q.userIds ?? "").split(",");
      return ok({ users: USERS.filter((u) => ids.includes(u.id)).map(wireUser) });
    }
    case "/twitter/tweets": {
      const ids = (q.tweet_ids ?? "").split(",");
      // In their own order, not the order asked.
      return ok({ tweets: TWEETS.filter((t) => ids.includes(t.id)).map(wireTweet) });
    }
    case "/twitter/article": {
      if (q.tweet_id !== ARTICLE_TWEET.id) return { status: "error", message: "Article not found" };
      const author = byId.get(ARTICLE.authorId) as SocialUser;
      return {
        article: {
          author: wireUser(author),
          replyCount: 0,
          likeCount: ARTICLE_TWEET.metrics.likeCount,
          quoteCount: 0,
          viewCount: 0,
          createdAt: legacyDate(ARTICLE.publishedAt),
          title: ARTICLE.title,
          preview_text: ARTICLE.previewText,
          cover_media_img_url: ARTICLE.coverImageUrl,
          contents:
            ARTICLE.content.format === "draftjs"
              ? ARTICLE.content.state.blocks.map((b) => ({ text: b.text }))
              : [],
        },
        status: "success",
        message: "success",
      };
    }
    case "/twitter/tweet/advanced_search":
      if (q.queryType !== "Latest") return error("queryType must be Latest or Top");
      return tweetsPage(
        TWEETS.filter((t) => matches(t, q.query ?? "")),
        "tweets",
        cursor,
        false,
      );
    case "/twitter/user/last_tweets": {
      const u = byName.get((q.userName ?? "").toLowerCase());
      return tweetsPage(
        u ? TWEETS.filter((t) => t.authorId === u.id && t.inReplyToUserId === null) : [],
        "tweets",
        cursor,
      );
    }
    case "/twitter/tweet/quotes":
      return tweetsPage(
        TWEETS.filter((t) => t.referencedTweets.some((r) => r.type === "quoted" && r.id === q.tweetId)),
        "tweets",
        cursor,
      );
    case "/twitter/tweet/replies":
      return tweetsPage(
        TWEETS.filter((t) => t.referencedTweets.some((r) => r.type === "replied_to" && r.id === q.tweetId)),
        "replies",
        cursor,
      );
    case "/twitter/tweet/retweeters":
      return usersPage(
        RETWEETS.filter(([, t]) => t.id === q.tweetId).map(([u]) => u),
        "users",
        PAGE.retweeters,
        cursor,
      );
    case "/twitter/user/followers":
    case "/twitter/user/followings": {
      const u = byName.get((q.userName ?? "").toLowerCase());
      if (!u) return error("User not found");
      const followers = path.endsWith("followers");
      const list = FOLLOWS.filter(([a, b]) => (followers ? b.id === u.id : a.id === u.id)).map(([a, b]) =>
        followers ? a : b,
      );
      return usersPage(list, followers ? "followers" : "followings", PAGE.followers, cursor);
    }
    case "/twitter/user/search": {
      const needle = (q.query ?? "").toLowerCase();
      const found = USERS.filter((u) => u.username.includes(needle) || u.name.toLowerCase().includes(needle));
      return usersPage(found, "users", PAGE.users, cursor);
    }
    case "/twitter/list/members":
      return usersPage(q.list_id === LIST.id ? LIST_MEMBERS : [], "members", PAGE.members, cursor);
    case "/twitter/list/followers":
      return usersPage(q.list_id === LIST.id ? LIST_FOLLOWERS : [], "followers", PAGE.members, cursor);
    case "/twitter/list/tweets": {
      const members = q.listId === LIST.id ? LIST_MEMBERS.map((u) => u.id) : [];
      return tweetsPage(
        TWEETS.filter((t) => members.includes(t.authorId)),
        "tweets",
        cursor,
      );
    }
    case "/twitter/community/info":
      if (q.community_id !== COMMUNITY_ID) return error("Community not found");
      return ok({ community_info: { id: COMMUNITY_ID, name: "Builders", description: "", member_count: 2 } });
    case "/twitter/community/tweets":
      return tweetsPage(
        TWEETS.filter((t) => t.communityId === q.community_id),
        "tweets",
        cursor,
      );
    default:
      return undefined;
  }
}

async function upload(req: IncomingMessage, body: Buffer): Promise<unknown> {
  const form = await new Response(new Uint8Array(body), {
    headers: { "content-type": req.headers["content-type"] ?? "" },
  }).formData();
  const file = form.get("file");
  if (!(file instanceof Blob)) return error("file is required");
  if (!form.get("proxy")) return error("proxy is required");
  let cookies: Record<string, unknown> = {};
  try {
    cookies = JSON.parse(Buffer.from(String(form.get("login_cookies") ?? ""), "base64").toString("utf8"));
  } catch {
    // not cookies at all
  }
  if (cookies.auth_token !== ALICE_SESSION.authToken || cookies.ct0 !== ALICE_SESSION.ct0) {
    return error("login_cookies is invalid or expired, please login again");
  }
  return { media_id: "1790000000000009001", status: "success", msg: "success" };
}

export async function startFakeTwitterApi(apiKey = FAKE_API_KEY): Promise<FakeTwitterApi> {
  const fake: FakeTwitterApi = { url: "", requests: [], override: undefined, close: async () => {} };
  const send = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(body);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      const request = {
        method: req.method ?? "GET",
        path: url.pathname,
        params: Object.fromEntries(url.searchParams),
      };
      fake.requests.push(request);
      const own = fake.override?.(request);
      if (own === "hang") return;
      if (own) return send(res, own.status ?? 200, own.body, own.headers);
      if (req.headers["x-api-key"] !== apiKey)
        return send(res, 401, JSON.stringify({ detail: "Unauthorized" }));
      const body =
        request.method === "POST" && url.pathname === "/twitter/upload_media_v2"
          ? await upload(req, Buffer.concat(chunks))
          : request.method === "GET"
            ? answer(url.pathname, request.params)
            : undefined;
      if (body === undefined) return send(res, 404, JSON.stringify({ detail: "Not Found" }));
      send(res, 200, JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}
