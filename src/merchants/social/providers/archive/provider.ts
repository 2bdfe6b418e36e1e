/**
 * The archive provider: the social-data API served from the host's own database (the `social_archive`
 * tables, filled by `importArchive`). The offline default and the demo's data: no upstream, no cost, no
 * X session; it answers in the same model and keeps the same contract as the live providers.
 *
 * The database is the host's and outlives the provider: `close` leaves it open.
 */
import type { Database } from "../../../../common/db/index.ts";
import { BAD_SESSION, SESSION_PATHS, type SocialProvider } from "../../provider.ts";
import type { SocialSetup } from "../../runtime.ts";
import { lookupArticle, lookupList, lookupTweet, lookupTweets, userByUsername } from "./lookups.ts";
import * as pages from "./pages.ts";
import { searchTweets, searchUsers } from "./search.ts";
import { mentions, uploadMedia } from "./sessions.ts";
import { ARCHIVE_TABLES } from "./tables.ts";

export const ARCHIVE_PROVIDER = "archive";

export function archiveProvider(db: Database): SocialProvider {
  // The database cannot cancel a statement it was given; a call whose caller has gone starts nothing more.
  const go = <T>(signal: AbortSignal, fn: () => Promise<T>): Promise<T> => {
    signal.throwIfAborted();
    return fn();
  };
  return {
    name: ARCHIVE_PROVIDER,
    tweet: (id, signal) => go(signal, () => lookupTweet(db, id)),
    tweets: (ids, signal) => go(signal, () => lookupTweets(db, ids)),
    userByUsername: (username, signal) => go(signal, () => userByUsername(db, username)),
    list: (id, signal) => go(signal, () => lookupList(db, id)),
    article: (tweetId, signal) => go(signal, () => lookupArticle(db, tweetId)),

    searchTweets: (filters, page, signal) => go(signal, () => searchTweets(db, filters, page)),
    mentions: (session, page, signal) => go(signal, () => mentions(db, session, page)),
    userTweets: (username, page, signal) => go(signal, () => pages.userTweets(db, username, page)),
    quoteTweets: (tweetId, page, signal) => go(signal, () => pages.quoteTweets(db, tweetId, page)),
    replies: (tweetId, page, signal) => go(signal, () => pages.replies(db, tweetId, page)),
    listTweets: (listId, page, signal) => go(signal, () => pages.listTweets(db, listId, page)),
    communityPosts: (id, page, signal) => go(signal, () => pages.communityPosts(db, id, page)),

    searchUsers: (query, page, signal) => go(signal, () => searchUsers(db, query, page)),
    followers: (userId, page, signal) => go(signal, () => pages.followers(db, userId, page)),
    following: (userId, page, signal) => go(signal, () => pages.following(db, userId, page)),
    retweetedBy: (tweetId, page, signal) => go(signal, () => pages.retweetedBy(db, tweetId, page)),
    listMembers: (listId, page, signal) => go(signal, () => pages.listMembers(db, listId, page)),
    listFollowers: (listId, page, signal) => go(signal, () => pages.listFollowers(db, listId, page)),

    uploadMedia: (session, file, signal) => go(signal, () => uploadMedia(db, session, file)),
  };
}

/**
 * The social routes' setup on the archive: its tables migrated with the host's, no upstream (nothing to
 * reserve funds for). `tokenSecret` is the operator's `X402M_SOCIAL_TOKEN_SECRET`, or null.
 */
export function archiveSetup(tokenSecret: string | null = null): SocialSetup {
  return {
    provider: archiveProvider,
    tokenSecret,
    upstream: false,
    tables: ARCHIVE_TABLES,
    errors: (path) => (SESSION_PATHS.has(path) ? BAD_SESSION : {}),
  };
}
