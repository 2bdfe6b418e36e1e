/**
 * A caller's page of tweets or users: one upstream page at the caller's cursor, cut to the page's size
 * (`paging.ts`), its items parsed. An empty first page is `null` when its subject turns out not to be there.
 */
import type { PageRequest, TweetPage, UserPage } from "../../provider.ts";
import type { Json } from "./client.ts";
import { cut, decodeCursor, type Position, upstreamItems } from "./paging.ts";
import { parseTweets } from "./parse-tweet.ts";
import { parseUsers } from "./parse-user.ts";

/** A page fetcher: the upstream body for an upstream cursor, or null when the page's subject is not there. */
export type Fetch = (cursor: string | undefined, at: Position) => Promise<Json | null>;

/** Whether the subject of an empty first page is there. */
export type Exists = (signal: AbortSignal) => Promise<boolean>;

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

export async function tweetPage(
  fetch: Fetch,
  keys: readonly string[],
  page: PageRequest,
  exists?: Exists,
  signal?: AbortSignal,
): Promise<TweetPage | null> {
  const got = await rawPage(fetch, keys, page);
  if (!got) return null;
  if (got.items.length === 0 && got.first && exists && signal && !(await exists(signal))) return null;
  const { tweets, includes } = parseTweets(got.items);
  return { tweets, includes, ...(got.next && { next: got.next }) };
}

export async function userPage(
  fetch: Fetch,
  keys: readonly string[],
  page: PageRequest,
  exists?: Exists,
  signal?: AbortSignal,
  start?: Position,
): Promise<UserPage | null> {
  const got = await rawPage(fetch, keys, page, start);
  if (!got) return null;
  if (got.items.length === 0 && got.first && exists && signal && !(await exists(signal))) return null;
  return { users: parseUsers(got.items), ...(got.next && { next: got.next }) };
}
