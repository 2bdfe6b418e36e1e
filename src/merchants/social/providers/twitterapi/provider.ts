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
 *   logged); without one it answers 501.
 */
import { AppError, UpstreamError } from "../../../../common/errors.ts";
import type { SocialArticle, SocialUser } from "../../model.ts";
import type {
  CallerSession,
  MediaFile,
  PageRequest,
  SocialProvider,
  TweetLookup,
  TweetPage,
  UploadedMedia,
  UserPage,
} from "../../provider.ts";
import { type SearchFilters, toXSearchQuery } from "../../search-query.ts";
import { type Json, TwitterApiClient, type TwitterApiClientOptions } from "./client.ts";
import { cut, decodeCursor, type Position, upstreamItems } from "./paging.ts";
import { IncludesBuilder, parseTweet, parseTweets } from "./parse-tweet.ts";
import { asArray, idOf, invalid, isObject, isoTime, parseUser, parseUsers, text } from "./parse-user.ts";

export interface TwitterApiProviderOptions extends TwitterApiClientOptions {
  /**
   * The proxy twitterapi.io's write endpoints require (`http://user:pass@host:port`); without one the media
   * upload answers 501.
   */
  proxy?: string;
}

function unsupported(what: string): AppError {
  return new AppError(
    501,
    "unsupported",
    `the twitterapi provider of this server cannot ${what}; nothing was charged`,
  );
}

/** A page fetcher: the upstream body for an upstream cursor, or null when the page's subject is not there. */
type Fetch = (cursor: string | undefined, at: Position) => Promise<Json | null>;

export function twitterApiProvider(options: TwitterApiProviderOptions): SocialProvider {
  const client = new TwitterApiClient(options);

  /** One caller page: the upstream page at the cursor, cut to `size`. */
  async function rawPage(
    fetch: Fetch,
    keys: readonly string[],
    page: PageRequest,
    start?: Position,
  ): Promise<{ items: unknown[]; next?: string; first: boolean } | null> {
    const at = start ?? decodeCursor(page.cursor);
    const body = await fetch(at.c, at);
    if (!body) return null;
    const upstream = upstreamItems(body, keys);
    return { ...cut(upstream.items, at, Math.max(1, page.size), upstream.next), first: at.c === undefined };
  }

  async function tweetPage(
    fetch: Fetch,
    keys: readonly string[],
    page: PageRequest,
    exists?: (signal: AbortSignal) => Promise<boolean>,
    signal?: AbortSignal,
  ): Promise<TweetPage | null> {
    const got = await rawPage(fetch, keys, page);
    if (!got) return null;
    if (got.items.length === 0 && got.first && exists && signal && !(await exists(signal))) return null;
    const { tweets, includes } = parseTweets(got.items);
    return { tweets, includes, ...(got.next && { next: got.next }) };
  }

  async function userPage(
    fetch: Fetch,
    keys: readonly string[],
    page: PageRequest,
    exists?: (signal: AbortSignal) => Promise<boolean>,
    signal?: AbortSignal,
    start?: Position,
  ): Promise<UserPage | null> {
    const got = await rawPage(fetch, keys, page, start);
    if (!got) return null;
    if (got.items.length === 0 && got.first && exists && signal && !(await exists(signal))) return null;
    return { users: parseUsers(got.items), ...(got.next && { next: got.next }) };
  }

  async function tweets(ids: readonly string[], signal: AbortSignal): Promise<TweetLookup> {
    if (ids.length === 0) return { tweets: [], includes: { users: [], tweets: [], media: [] } };
    const body = await client.get("/twitter/tweets", { tweet_ids: ids.join(",") }, signal);
    const raw = body ? upstreamItems(body, ["tweets"]).items : [];
    const builder = new IncludesBuilder();
    const byId = new Map(raw.map((t) => parseTweet(t, builder)).map((t) => [t.id, t]));
    const found = ids.flatMap((id) => byId.get(id) ?? []);
    // Includes are gathered from every tweet answered; those the caller did not ask for are not in `found`.
    return { tweets: found, includes: builder.build(new Set(found.map((t) => t.id))) };
  }

  const tweetExists = (id: string) => async (signal: AbortSignal) =>
    (await tweets([id], signal)).tweets.length > 0;

  async function userByUsername(username: string, signal: AbortSignal): Promise<SocialUser | null> {
    const body = await client.get("/twitter/user/info", { userName: username }, signal);
    const data = body?.data;
    if (!isObject(data) || Object.keys(data).length === 0) return null;
    return parseUser(data);
  }

  async function userById(id: string, signal: AbortSignal): Promise<SocialUser | null> {
    const body = await client.get("/twitter/user/batch_info_by_ids", { userIds: id }, signal);
    if (!body) return null;
    const users = parseUsers(upstreamItems(body, ["users"]).items);
    return users.find((u) => u.id === id) ?? null;
  }

  /** The followers or followings of a user id: the username, found on the first page, rides in the cursor. */
  async function connections(
    path: string,
    key: string,
    userId: string,
    page: PageRequest,
    signal: AbortSignal,
  ): Promise<UserPage | null> {
    const at = decodeCursor(page.cursor);
    if (at.u === undefined) {
      const user = await userById(userId, signal);
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

  return {
    name: "twitterapi",

    async tweet(id, signal) {
      const found = await tweets([id], signal);
      return found.tweets.length > 0 ? found : null;
    },

    tweets,
    userByUsername,

    async list() {
      throw unsupported("look a list up: twitterapi.io has no list lookup (its list pages work)");
    },

    async article(tweetId, signal) {
      const body = await client.get("/twitter/article", { tweet_id: tweetId }, signal);
      const a = body?.article;
      if (!isObject(a) || Object.keys(a).length === 0) return null;
      const author = parseUser(a.author);
      const publishedAt = isoTime(a.createdAt);
      if (!author || !publishedAt) throw invalid("an article without an author or a time");
      const paragraphs = asArray(a.contents)
        .map((c) => (isObject(c) ? text(c.text) : ""))
        .filter((p) => p !== "");
      const article: SocialArticle = {
        id: idOf(a.id) ?? idOf(a.rest_id) ?? tweetId,
        tweetId,
        authorId: author.id,
        title: text(a.title),
        previewText: text(a.preview_text),
        coverImageUrl: text(a.cover_media_img_url) || null,
        publishedAt,
        content: { format: "markdown", markdown: paragraphs.join("\n\n") },
      };
      return { article, author };
    },

    async searchTweets(filters: SearchFilters, page, signal) {
      const query = toXSearchQuery(filters);
      const found = await tweetPage(
        (cursor) =>
          client.get("/twitter/tweet/advanced_search", { query, queryType: "Latest", cursor }, signal),
        ["tweets"],
        page,
      );
      return found ?? { tweets: [], includes: { users: [], tweets: [], media: [] } };
    },

    async mentions() {
      throw unsupported(
        "act as a caller's session for mentions: twitterapi.io reads mentions by username and cannot tell whose a cookie is",
      );
    },

    userTweets(username, page, signal) {
      return tweetPage(
        (cursor) => client.get("/twitter/user/last_tweets", { userName: username, cursor }, signal),
        ["tweets"],
        page,
        async (s) => (await userByUsername(username, s)) !== null,
        signal,
      );
    },

    quoteTweets(tweetId, page, signal) {
      return tweetPage(
        (cursor) => client.get("/twitter/tweet/quotes", { tweetId, cursor }, signal),
        ["tweets"],
        page,
        tweetExists(tweetId),
        signal,
      );
    },

    replies(tweetId, page, signal) {
      return tweetPage(
        (cursor) => client.get("/twitter/tweet/replies", { tweetId, cursor }, signal),
        ["replies", "tweets"],
        page,
        tweetExists(tweetId),
        signal,
      );
    },

    listTweets(listId, page, signal) {
      return tweetPage(
        (cursor) => client.get("/twitter/list/tweets", { listId, cursor }, signal),
        ["tweets"],
        page,
      );
    },

    communityPosts(communityId, page, signal) {
      return tweetPage(
        (cursor) => client.get("/twitter/community/tweets", { community_id: communityId, cursor }, signal),
        ["tweets"],
        page,
        async (s) => {
          const info = await client.get("/twitter/community/info", { community_id: communityId }, s);
          return isObject(info?.community_info) && Object.keys(info.community_info).length > 0;
        },
        signal,
      );
    },

    async searchUsers(query, page, signal) {
      const found = await userPage(
        (cursor) => client.get("/twitter/user/search", { query, cursor }, signal),
        ["users"],
        page,
      );
      return found ?? { users: [] };
    },

    followers(userId, page, signal) {
      return connections("/twitter/user/followers", "followers", userId, page, signal);
    },

    following(userId, page, signal) {
      return connections("/twitter/user/followings", "followings", userId, page, signal);
    },

    retweetedBy(tweetId, page, signal) {
      return userPage(
        (cursor) => client.get("/twitter/tweet/retweeters", { tweetId, cursor }, signal),
        ["users"],
        page,
        tweetExists(tweetId),
        signal,
      );
    },

    listMembers(listId, page, signal) {
      return userPage(
        (cursor) => client.get("/twitter/list/members", { list_id: listId, cursor }, signal),
        ["members", "users"],
        page,
      );
    },

    listFollowers(listId, page, signal) {
      return userPage(
        (cursor) => client.get("/twitter/list/followers", { list_id: listId, cursor }, signal),
        ["followers", "users"],
        page,
      );
    },

    async uploadMedia(session: CallerSession, file: MediaFile, signal: AbortSignal): Promise<UploadedMedia> {
      if (!options.proxy) {
        throw unsupported(
          "upload media as a caller: twitterapi.io's upload needs a proxy, and none is configured",
        );
      }
      const form = new FormData();
      form.set(
        "file",
        new Blob([new Uint8Array(file.bytes)], { type: file.type }),
        `upload.${file.type.split("/")[1] ?? "bin"}`,
      );
      form.set("proxy", options.proxy);
      form.set("login_cookies", loginCookies(session));
      const body = await client.postForm("/twitter/upload_media_v2", form, signal);
      if (!body) throw new UpstreamError("the social-data provider (twitterapi.io) has no media upload here");
      if (body.status === "error") {
        const message = client.messageOf(body) ?? "";
        if (/cookie|login|session|auth|csrf|ct0|account/i.test(message)) {
          throw new AppError(
            401,
            "invalid_session",
            "X did not accept the session's cookies for this upload",
          );
        }
        throw new UpstreamError("the social-data provider (twitterapi.io) could not upload the media");
      }
      const mediaId = idOf(body.media_id);
      if (!mediaId) throw invalid("an upload without a media id");
      return {
        mediaId,
        mediaKey: null,
        size: file.bytes.byteLength,
        expiresAfterSecs: null,
        image: { type: file.type, width: file.width, height: file.height },
      };
    },
  };
}

/**
 * The caller's cookies as twitterapi.io's `login_cookies`: the base64 of a JSON cookie dict (what their login
 * answers and their write endpoints decode), built for this one call and never kept.
 */
export function loginCookies(session: CallerSession): string {
  const cookies = { auth_token: session.authToken, ...(session.ct0 && { ct0: session.ct0 }) };
  return Buffer.from(JSON.stringify(cookies)).toString("base64");
}
