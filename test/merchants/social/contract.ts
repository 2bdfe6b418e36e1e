/**
 * The contract every social provider keeps (src/merchants/social/provider.ts), as one suite each provider's
 * test runs against itself, loaded with the world of `world.ts`: the archive from its tables, the remote
 * providers from fake upstreams on 127.0.0.1 that serve the world in their real wire formats.
 *
 * @example
 * providerContract("archive", async () => {
 *   const provider = await archiveWith(WORLD);
 *   return { provider, close: () => provider.close?.() ?? Promise.resolve() };
 * });
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type {
  PageRequest,
  SocialProvider,
  TweetPage,
  UserPage,
} from "../../../src/merchants/social/provider.ts";
import {
  ALICE,
  ALICE_SERIES,
  ALICE_SESSION,
  ARTICLE,
  ARTICLE_TWEET,
  BOB,
  CAROL,
  COMMUNITY_ID,
  COMMUNITY_POSTS,
  DAVE,
  HELLO,
  LIST,
  MENTION,
  PHOTO,
  PICTURE,
  QUOTE,
  REPLY,
  UNKNOWN_ID,
} from "./world.ts";

export interface ContractSubject {
  provider: SocialProvider;
  close: () => Promise<void>;
}

const signal = () => AbortSignal.timeout(20_000);
const ids = (items: { id: string }[]) => items.map((x) => x.id);
const byTime = (a: { createdAt: string }, b: { createdAt: string }) => b.createdAt.localeCompare(a.createdAt);

/** Every page of a paged call, `size` at a time; fails if a page repeats an item or the pages never end. */
export async function allPages<P extends TweetPage | UserPage>(
  call: (page: PageRequest) => Promise<P | null>,
  size: number,
): Promise<P[]> {
  const pages: P[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 50; i++) {
    const page = await call({ size, ...(cursor !== undefined && { cursor }) });
    if (!page) throw new Error("the page's subject is not there");
    pages.push(page);
    if (!page.next) return pages;
    cursor = page.next;
  }
  throw new Error("more than 50 pages: the cursor does not advance");
}

/** A PNG of `w` x `h` pixels: enough of one for an upload (signature and IHDR). */
export function tinyPng(w = 2, h = 1): Uint8Array {
  const bytes = new Uint8Array(33);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  new DataView(bytes.buffer).setUint32(16, w);
  new DataView(bytes.buffer).setUint32(20, h);
  bytes.set([8, 6, 0, 0, 0], 24);
  return bytes;
}

export interface ContractOptions {
  /**
   * false for a provider that cannot act as a caller's session (it says so with a 501 `unsupported`, never
   * charged): the session case then checks that refusal instead.
   */
  sessions?: boolean;
  /**
   * false for a provider whose upstream has no list lookup (it says so with a 501 `unsupported`); the list's
   * pages are still checked.
   */
  listLookup?: boolean;
}

export function providerContract(
  name: string,
  setup: () => Promise<ContractSubject>,
  options: ContractOptions = {},
): void {
  describe(`the ${name} provider keeps the social provider contract`, () => {
    let subject: ContractSubject;
    let p: SocialProvider;
    beforeAll(async () => {
      subject = await setup();
      p = subject.provider;
    }, 60_000);
    afterAll(() => subject?.close());

    it("looks a tweet up with its author, metrics, entities, media and referenced tweets", async () => {
      const hello = await p.tweet(HELLO.id, signal());
      expect(hello?.tweets).toHaveLength(1);
      const t = hello?.tweets[0];
      expect(t).toMatchObject({
        id: HELLO.id,
        text: HELLO.text,
        authorId: ALICE.id,
        createdAt: HELLO.createdAt,
        metrics: { likeCount: 42, replyCount: 1, retweetCount: 2, quoteCount: 1 },
      });
      expect(t?.entities.hashtags.map((h) => h.tag)).toEqual(["x402"]);
      expect(t?.entities.mentions.map((m) => [m.username, m.start, m.end])).toEqual([["bob", 19, 23]]);
      expect(ids(hello?.includes.users ?? [])).toContain(ALICE.id);

      const quote = await p.tweet(QUOTE.id, signal());
      expect(quote?.tweets[0]?.referencedTweets).toEqual([{ type: "quoted", id: HELLO.id }]);
      expect(ids(quote?.includes.tweets ?? [])).toContain(HELLO.id);
      const reply = await p.tweet(REPLY.id, signal());
      expect(reply?.tweets[0]).toMatchObject({
        inReplyToUserId: ALICE.id,
        conversationId: HELLO.id,
        referencedTweets: [{ type: "replied_to", id: HELLO.id }],
      });

      const picture = await p.tweet(PICTURE.id, signal());
      expect(picture?.tweets[0]?.mediaKeys).toEqual([PHOTO.mediaKey]);
      expect(picture?.includes.media).toEqual([
        expect.objectContaining({ mediaKey: PHOTO.mediaKey, type: "photo", url: PHOTO.url }),
      ]);

      expect(await p.tweet(UNKNOWN_ID, signal())).toBeNull();
    });

    it("looks several tweets up in the order asked, leaving out the unknown", async () => {
      const found = await p.tweets([REPLY.id, UNKNOWN_ID, HELLO.id], signal());
      expect(ids(found.tweets)).toEqual([REPLY.id, HELLO.id]);
      expect(ids(found.includes.users)).toEqual(expect.arrayContaining([ALICE.id, BOB.id]));
    });

    it("looks a user up by username, in any case, and not an unknown one", async () => {
      const alice = await p.userByUsername("ALICE", signal());
      expect(alice).toMatchObject({
        id: ALICE.id,
        username: "alice",
        name: ALICE.name,
        verified: true,
        metrics: { followersCount: 3, followingCount: 1 },
      });
      expect(typeof alice?.id).toBe("string");
      expect(await p.userByUsername("nobody_here_42", signal())).toBeNull();
    });

    it("looks a list and an article up, and says null for what is not there", async () => {
      if (options.listLookup === false) {
        await expect(p.list(LIST.id, signal())).rejects.toMatchObject({ status: 501, code: "unsupported" });
      } else {
        expect(await p.list(LIST.id, signal())).toMatchObject({
          list: { id: LIST.id, name: LIST.name, memberCount: 2, followerCount: 1, ownerId: ALICE.id },
          owner: { id: ALICE.id },
        });
        expect(await p.list(UNKNOWN_ID, signal())).toBeNull();
      }
      const found = await p.article(ARTICLE_TWEET.id, signal());
      expect(found).toMatchObject({
        article: { tweetId: ARTICLE_TWEET.id, title: ARTICLE.title, previewText: ARTICLE.previewText },
        author: { id: ALICE.id },
      });
      expect(await p.article(HELLO.id, signal())).toBeNull();
      expect(await p.article(UNKNOWN_ID, signal())).toBeNull();
    });

    it("searches tweets by every filter, newest first", async () => {
      const search = async (filters: Parameters<SocialProvider["searchTweets"]>[0]) =>
        ids((await p.searchTweets(filters, { size: 20 }, signal())).tweets);
      expect(await search({ words: ["hello"] })).toEqual([HELLO.id]);
      expect(await search({ hashtags: ["x402"] })).toEqual([HELLO.id]);
      expect(await search({ phrase: "agent payments" })).toEqual([QUOTE.id]);
      expect(await search({ anyWords: ["diagram", "builders"] })).toEqual(
        [PICTURE, ...COMMUNITY_POSTS].sort(byTime).map((t) => t.id),
      );
      expect(await search({ from: "bob" })).toEqual([COMMUNITY_POSTS[0]?.id, REPLY.id]);
      expect(await search({ mentioning: "alice", noneWords: ["review"] })).toEqual([REPLY.id]);
      expect(await search({ to: "alice" })).toEqual([REPLY.id]);
      expect(await search({ from: "alice", minLikes: 9 })).toEqual([ARTICLE_TWEET.id, HELLO.id]);
      expect(await search({ words: ["payments"], minReplies: 1 })).toEqual([]);
      expect(
        await search({ from: "alice", minReposts: 2, since: "2026-11-01", until: "2026-11-02" }),
      ).toEqual([PICTURE.id, HELLO.id]);
      expect(await search({ from: "alice", since: "2026-11-02" })).toEqual([]);
    });

    it("pages a user's timeline newest first, without repeats, to its end", async () => {
      const pages = await allPages((page) => p.userTweets("alice", page, signal()), 10);
      const all = pages.flatMap((page) => page.tweets);
      expect(pages.length).toBeGreaterThanOrEqual(3);
      for (const page of pages) expect(page.tweets.length).toBeLessThanOrEqual(10);
      expect(ids(all)).toEqual(
        [HELLO, PICTURE, ARTICLE_TWEET, ...ALICE_SERIES].sort(byTime).map((t) => t.id),
      );
      expect(await p.userTweets("nobody_here_42", { size: 10 }, signal())).toBeNull();
    });

    it("answers the pages about a tweet: quotes, replies, reposters", async () => {
      expect(ids((await p.quoteTweets(HELLO.id, { size: 20 }, signal()))?.tweets ?? [])).toEqual([QUOTE.id]);
      expect(ids((await p.replies(HELLO.id, { size: 20 }, signal()))?.tweets ?? [])).toEqual([REPLY.id]);
      expect(ids((await p.retweetedBy(PICTURE.id, { size: 20 }, signal()))?.users ?? []).sort()).toEqual(
        [BOB.id, CAROL.id].sort(),
      );
      expect(await p.replies(UNKNOWN_ID, { size: 20 }, signal())).toBeNull();
    });

    it("answers the pages about users, lists and communities", async () => {
      const followers = await allPages((page) => p.followers(ALICE.id, page, signal()), 2);
      expect(followers.flatMap((page) => ids(page.users)).sort()).toEqual([BOB.id, CAROL.id, DAVE.id].sort());
      expect(ids((await p.following(ALICE.id, { size: 50 }, signal()))?.users ?? [])).toEqual([BOB.id]);
      expect(await p.followers(UNKNOWN_ID, { size: 50 }, signal())).toBeNull();
      expect(ids((await p.listMembers(LIST.id, { size: 100 }, signal()))?.users ?? []).sort()).toEqual(
        [BOB.id, CAROL.id].sort(),
      );
      expect(ids((await p.listFollowers(LIST.id, { size: 20 }, signal()))?.users ?? [])).toEqual([DAVE.id]);
      const listTweets = ids((await p.listTweets(LIST.id, { size: 100 }, signal()))?.tweets ?? []);
      expect(listTweets).toEqual([...COMMUNITY_POSTS, REPLY, QUOTE].sort(byTime).map((t) => t.id));
      const posts = await p.communityPosts(COMMUNITY_ID, { size: 20 }, signal());
      expect(ids(posts?.tweets ?? [])).toEqual([...COMMUNITY_POSTS].sort(byTime).map((t) => t.id));
      expect(ids(posts?.includes.users ?? []).sort()).toEqual([BOB.id, CAROL.id].sort());
      expect(await p.communityPosts(UNKNOWN_ID, { size: 20 }, signal())).toBeNull();
    });

    it("searches users by keyword", async () => {
      const found = await p.searchUsers("alice", { size: 20 }, signal());
      expect(ids(found.users)[0]).toBe(ALICE.id);
      expect((await p.searchUsers("zzzqqq_nobody", { size: 20 }, signal())).users).toEqual([]);
    });

    it.skipIf(options.sessions === false)(
      "acts as the caller's session: mentions and a media upload; a bad session is a 401",
      async () => {
        const mentions = await p.mentions(ALICE_SESSION, { size: 20 }, signal());
        expect(ids(mentions.tweets)).toEqual([MENTION, REPLY].sort(byTime).map((t) => t.id));
        await expect(p.mentions({ authToken: "0".repeat(40) }, { size: 20 }, signal())).rejects.toMatchObject(
          {
            status: 401,
            code: "invalid_session",
          },
        );
        const uploaded = await p.uploadMedia(
          ALICE_SESSION,
          { bytes: tinyPng(), type: "image/png", width: 2, height: 1 },
          signal(),
        );
        expect(uploaded.mediaId).toMatch(/^\d{1,20}$/);
        expect(uploaded.size).toBe(33);
      },
    );

    it.skipIf(options.sessions !== false)(
      "says it cannot act as a caller's session: a 501, never charged",
      async () => {
        await expect(p.mentions(ALICE_SESSION, { size: 20 }, signal())).rejects.toMatchObject({
          status: 501,
          code: "unsupported",
        });
      },
    );
  });
}
