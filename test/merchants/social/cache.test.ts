import { describe, expect, it } from "vitest";
import { withLookupCache } from "../../../src/merchants/social/cache.ts";
import type { SocialProvider } from "../../../src/merchants/social/provider.ts";
import { ALICE, HELLO } from "./world.ts";

/** A provider that counts its calls and answers from the world; `failNext` makes the next call throw. */
function counting() {
  const calls: string[] = [];
  let failNext = false;
  const provider = {
    name: "counting",
    async userByUsername(username: string) {
      calls.push(`user:${username}`);
      if (failNext) {
        failNext = false;
        throw new Error("upstream down");
      }
      return username.toLowerCase() === "alice" ? { ...ALICE } : null;
    },
    async tweet(id: string) {
      calls.push(`tweet:${id}`);
      return id === HELLO.id
        ? { tweets: [{ ...HELLO }], includes: { users: [], tweets: [], media: [] } }
        : null;
    },
    async searchTweets() {
      calls.push("search");
      return { tweets: [], includes: { users: [], tweets: [], media: [] } };
    },
  } as unknown as SocialProvider;
  return { provider, calls, fail: () => (failNext = true) };
}

const signal = AbortSignal.timeout(5_000);

describe("the lookup cache of a remote provider", () => {
  it("answers a lookup again from memory within its time, in any case of the username", async () => {
    let clock = 0;
    const { provider, calls } = counting();
    const cached = withLookupCache(provider, { ttlMs: 60_000, now: () => clock });
    expect((await cached.userByUsername("Alice", signal))?.id).toBe(ALICE.id);
    expect((await cached.userByUsername("alice", signal))?.id).toBe(ALICE.id);
    expect(await cached.userByUsername("nobody", signal)).toBeNull();
    expect(await cached.userByUsername("nobody", signal)).toBeNull();
    expect(calls).toEqual(["user:Alice", "user:nobody"]);
    clock = 60_001;
    await cached.userByUsername("alice", signal);
    expect(calls).toEqual(["user:Alice", "user:nobody", "user:alice"]);
  });

  it("hands out copies: a caller that changes an answer does not change the next one", async () => {
    const { provider } = counting();
    const cached = withLookupCache(provider, { ttlMs: 60_000 });
    const first = await cached.tweet(HELLO.id, signal);
    if (first?.tweets[0]) first.tweets[0].text = "changed";
    expect((await cached.tweet(HELLO.id, signal))?.tweets[0]?.text).toBe(HELLO.text);
  });

  it("keeps no error, no page, and at most its number of answers", async () => {
    const { provider, calls, fail } = counting();
    const cached = withLookupCache(provider, { ttlMs: 60_000, maxEntries: 1 });
    fail();
    await expect(cached.userByUsername("alice", signal)).rejects.toThrow("upstream down");
    await cached.userByUsername("alice", signal);
    await cached.tweet(HELLO.id, signal);
    await cached.userByUsername("alice", signal);
    await cached.searchTweets({ words: ["x"] }, { size: 20 }, signal);
    await cached.searchTweets({ words: ["x"] }, { size: 20 }, signal);
    expect(calls).toEqual([
      "user:alice",
      "user:alice",
      `tweet:${HELLO.id}`,
      "user:alice",
      "search",
      "search",
    ]);
    expect(cached.name).toBe("counting");
  });

  it("is the provider itself when told to keep nothing", () => {
    const { provider } = counting();
    expect(withLookupCache(provider, { ttlMs: 0 })).toBe(provider);
  });
});
