/**
 * A short memory of a remote provider's lookups. X's data changes slowly next to how often agents ask for
 * the same profile or tweet, and every upstream call costs the operator money or an X session's rate
 * limit: a lookup answered within the last `ttlMs` is answered again from here. Pages are not kept (their
 * cursors are single-use and their freshness is the point), nor errors, nor anything done as a caller.
 */
import type { SocialProvider } from "./provider.ts";

export interface LookupCacheOptions {
  ttlMs: number;
  /** The most answers kept; the oldest go first. Default 10,000. */
  maxEntries?: number;
  /** The clock, for tests. */
  now?: () => number;
}

type Lookups = Pick<SocialProvider, "tweet" | "tweets" | "userByUsername" | "list" | "article">;

/** `provider` with its lookups kept for `ttlMs`; the provider itself when `ttlMs` is 0. */
export function withLookupCache(provider: SocialProvider, options: LookupCacheOptions): SocialProvider {
  if (options.ttlMs <= 0) return provider;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  const kept = new Map<string, { until: number; value: unknown }>();

  async function remembered<T>(key: string, fetch: () => Promise<T>): Promise<T> {
    const hit = kept.get(key);
    if (hit && hit.until > now()) return structuredClone(hit.value) as T;
    kept.delete(key);
    const value = await fetch();
    kept.set(key, { until: now() + options.ttlMs, value: structuredClone(value) });
    // A Map iterates in insertion order: the first keys are the oldest.
    for (const oldest of kept.keys()) {
      if (kept.size <= maxEntries) break;
      kept.delete(oldest);
    }
    return value;
  }

  const lookups: Lookups = {
    tweet: (id, signal) => remembered(`tweet:${id}`, () => provider.tweet(id, signal)),
    tweets: (ids, signal) => remembered(`tweets:${ids.join(",")}`, () => provider.tweets(ids, signal)),
    // X's screen names are case-insensitive: @Alice and @alice are one profile.
    userByUsername: (username, signal) =>
      remembered(`user:${username.toLowerCase()}`, () => provider.userByUsername(username, signal)),
    list: (id, signal) => remembered(`list:${id}`, () => provider.list(id, signal)),
    article: (tweetId, signal) => remembered(`article:${tweetId}`, () => provider.article(tweetId, signal)),
  };
  // Everything else goes to the provider itself, bound to it (a class's private fields need their `this`).
  return new Proxy(provider, {
    get(target, key) {
      if (Object.hasOwn(lookups, key)) return lookups[key as keyof Lookups];
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
