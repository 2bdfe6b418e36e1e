/**
 * Where the social-data merchant's data comes from, behind one interface: X's web GraphQL API
 * (`providers/x-web/`), the paid REST provider twitterapi.io (`providers/twitterapi/`) and the PostgreSQL
 * archive (`providers/archive/`), chosen by configuration. Every provider answers in the one model
 * (`model.ts`); the routes render it (`render.ts`).
 *
 * The rules every provider keeps (the contract tests in `test/merchants/social/contract.ts` check them):
 * - **Not found is `null`**, not an error: an unknown or deleted tweet, a suspended or unknown user, a
 *   private or unknown list or community, a tweet without an article. A page of something that is not
 *   there (the followers of an unknown user) is `null` too. The route answers 404, never charged.
 * - **Upstream trouble is an `UpstreamError`** (`src/common/errors.ts`): 503 with `Retry-After` when the
 *   upstream is rate-limited or has no usable session, 502 when it failed or answered nonsense, 504 on a
 *   time-out. Never charged. A caller's bad cookies (`/tweets/mentions`, `/tweets/mediaUpload`) are a
 *   401 `AppError` with code `invalid_session`; a provider that cannot act as a caller at all answers
 *   those two with a 501 `AppError` with code `unsupported`.
 * - **Pages**: `cursor` is what the provider gave as `next` for the previous page (opaque to everyone
 *   else; the route signs it into `next_token`), `size` the most items wanted. A page may hold fewer;
 *   `next` is absent on the last page. Newest first where the spec says "latest" or "most recent first".
 * - **`includes`** hold every user, tweet and medium the page's items refer to: the authors, the quoted
 *   and replied-to tweets (and their authors), the media of `mediaKeys`.
 * - Every call takes the caller's `AbortSignal` (the call's time budget, or the caller gone).
 * - Caller cookies are used for that one call: never stored, logged or put in an error message.
 */
import type { Errors } from "../../merchant-kit/index.ts";
import type { Includes, SocialArticle, SocialList, SocialTweet, SocialUser } from "./model.ts";
import type { SearchFilters } from "./search-query.ts";

export interface PageRequest {
  /** The provider's own cursor from the previous page's `next`; absent for the first page. */
  cursor?: string;
  /** The most items wanted (the endpoint's page size, docs/social.md). */
  size: number;
}

export interface TweetPage {
  tweets: SocialTweet[];
  includes: Includes;
  next?: string;
}

export interface UserPage {
  users: SocialUser[];
  next?: string;
}

/** The tweets a lookup found, in the order asked for; ids not found are left out (the route reports them). */
export interface TweetLookup {
  tweets: SocialTweet[];
  includes: Includes;
}

export interface ListLookup {
  list: SocialList;
  owner: SocialUser;
}

/** The caller's own X web session, for the endpoints that act as the caller. */
export interface CallerSession {
  /** The `auth_token` cookie. */
  authToken: string;
  /** The `ct0` cookie (X's CSRF token); required for writes such as a media upload. */
  ct0?: string;
}

export interface UploadedMedia {
  /** X's media id: a decimal string. */
  mediaId: string;
  mediaKey: string | null;
  size: number;
  /** Seconds until X discards it unless a tweet attaches it. */
  expiresAfterSecs: number | null;
  image: { type: string; width: number; height: number } | null;
}

export interface MediaFile {
  bytes: Uint8Array;
  /** The image's MIME type, as checked from its bytes (`image/png`, `image/jpeg`, `image/gif`, `image/webp`). */
  type: string;
  width: number;
  height: number;
}

export interface SocialProvider {
  /** `x-web`, `twitterapi`, `archive`: named in logs, in `next_token` and in 503s. */
  readonly name: string;

  tweet(id: string, signal: AbortSignal): Promise<TweetLookup | null>;
  /** At most 50 ids (the route refuses more). */
  tweets(ids: readonly string[], signal: AbortSignal): Promise<TweetLookup>;
  userByUsername(username: string, signal: AbortSignal): Promise<SocialUser | null>;
  list(id: string, signal: AbortSignal): Promise<ListLookup | null>;
  article(
    tweetId: string,
    signal: AbortSignal,
  ): Promise<{ article: SocialArticle; author: SocialUser } | null>;

  /** Most recent first. */
  searchTweets(filters: SearchFilters, page: PageRequest, signal: AbortSignal): Promise<TweetPage>;
  /** Most recent first; the session's own user's mentions. */
  mentions(session: CallerSession, page: PageRequest, signal: AbortSignal): Promise<TweetPage>;
  /** Most recent first; null for an unknown user. */
  userTweets(username: string, page: PageRequest, signal: AbortSignal): Promise<TweetPage | null>;
  quoteTweets(tweetId: string, page: PageRequest, signal: AbortSignal): Promise<TweetPage | null>;
  replies(tweetId: string, page: PageRequest, signal: AbortSignal): Promise<TweetPage | null>;
  listTweets(listId: string, page: PageRequest, signal: AbortSignal): Promise<TweetPage | null>;
  communityPosts(communityId: string, page: PageRequest, signal: AbortSignal): Promise<TweetPage | null>;

  searchUsers(query: string, page: PageRequest, signal: AbortSignal): Promise<UserPage>;
  followers(userId: string, page: PageRequest, signal: AbortSignal): Promise<UserPage | null>;
  following(userId: string, page: PageRequest, signal: AbortSignal): Promise<UserPage | null>;
  retweetedBy(tweetId: string, page: PageRequest, signal: AbortSignal): Promise<UserPage | null>;
  listMembers(listId: string, page: PageRequest, signal: AbortSignal): Promise<UserPage | null>;
  listFollowers(listId: string, page: PageRequest, signal: AbortSignal): Promise<UserPage | null>;

  uploadMedia(session: CallerSession, file: MediaFile, signal: AbortSignal): Promise<UploadedMedia>;

  /** Releases what it holds (connections, timers). */
  close?(): Promise<void>;
}

/** The routes that act as the caller, with its session's cookies (`auth_token`, `ct0`). */
export const SESSION_PATHS: ReadonlySet<string> = new Set(["/tweets/mentions", "/tweets/mediaUpload"]);

/** A caller's session no provider can use, on `SESSION_PATHS`. */
export const BAD_SESSION: Errors = {
  401: "The `auth_token` (and `ct0`) are not a working X session (invalid_session).",
};

/** A remote provider's trouble, as the contract above says it: never charged. */
export const UPSTREAM_ERRORS: Errors = {
  502: "The social-data provider failed or answered nonsense (upstream_failed, upstream_invalid).",
  503: "The social-data provider is rate limiting this server, or has no usable session or credit; Retry-After says when to try again.",
  504: "The social-data provider gave no answer in time (upstream_timeout).",
};
