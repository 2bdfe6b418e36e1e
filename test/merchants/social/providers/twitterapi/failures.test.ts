/**
 * How the twitterapi provider answers when twitterapi.io does not: rate limits, no credit, a refused key,
 * `{"status": "error"}` bodies, garbage, a hang; and the cases its wire format makes delicate: not found,
 * page cursors that resume inside an upstream page, ids past 2^53 sent as JSON numbers, the caller's cookies.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { SocialProvider } from "../../../../../src/merchants/social/provider.ts";
import { twitterApiProvider } from "../../../../../src/merchants/social/providers/twitterapi/index.ts";
import { cut, decodeCursor } from "../../../../../src/merchants/social/providers/twitterapi/paging.ts";
import { allPages, tinyPng } from "../../contract.ts";
import { ALICE, ALICE_SERIES, ALICE_SESSION, ARTICLE_TWEET, BOB, HELLO, PICTURE } from "../../world.ts";
import { FAKE_API_KEY, type FakeTwitterApi, startFakeTwitterApi, wireTweet } from "./fake-twitterapi.ts";

const signal = () => AbortSignal.timeout(10_000);
const byTime = (a: { createdAt: string }, b: { createdAt: string }) => b.createdAt.localeCompare(a.createdAt);

let fake: FakeTwitterApi;
let p: SocialProvider;
beforeAll(async () => {
  fake = await startFakeTwitterApi();
  p = twitterApiProvider({ apiKey: FAKE_API_KEY, baseUrl: fake.url, timeoutMs: 2_000 });
});
afterAll(() => fake.close());
afterEach(() => {
  fake.override = undefined;
  fake.requests.length = 0;
});

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) => ({
  status,
  headers,
  body: JSON.stringify(body),
});

describe("twitterapi.io's trouble is the operator's, never charged", () => {
  it("a 429 is a 503 with their Retry-After", async () => {
    fake.override = () => json({ detail: "Too Many Requests" }, 429, { "retry-after": "7" });
    await expect(p.userByUsername("alice", signal())).rejects.toMatchObject({
      status: 503,
      code: "upstream_rate_limited",
      headers: { "retry-after": "7" },
    });
  });

  it("no credit (HTTP 402, or a 200 that says so) is a 503 with a Retry-After", async () => {
    fake.override = () => json({ detail: "Payment Required" }, 402);
    await expect(p.tweet(HELLO.id, signal())).rejects.toMatchObject({
      status: 503,
      code: "upstream_no_credit",
    });
    fake.override = () => json({ status: "error", msg: "Credits is not enough. Please recharge" });
    const error = await p.tweet(HELLO.id, signal()).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 503, code: "upstream_no_credit" });
    expect((error as { headers: Record<string, string> }).headers["retry-after"]).toMatch(/^\d+$/);
  });

  it("a refused API key is a 503 that says so, without the key", async () => {
    const wrongKey = "wrong-key-5e5e5e5e5e5e";
    const bad = twitterApiProvider({ apiKey: wrongKey, baseUrl: fake.url, timeoutMs: 2_000 });
    const error = await bad.userByUsername("alice", signal()).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 503, code: "upstream_misconfigured" });
    expect((error as Error).message).toMatch(/API key/);
    expect((error as Error).message).not.toContain(wrongKey);
    expect(fake.requests.at(-1)?.path).toBe("/twitter/user/info");
  });

  it("has at most its in-flight bound of calls on the key at once; the rest wait their turn", async () => {
    fake.override = () => "hang";
    const bounded = twitterApiProvider({
      apiKey: FAKE_API_KEY,
      baseUrl: fake.url,
      timeoutMs: 1_000,
      maxInFlight: 2,
    });
    const calls = Array.from({ length: 5 }, () =>
      bounded.userByUsername("alice", signal()).then(
        () => 0,
        (e: { status?: number }) => e.status,
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fake.requests).toHaveLength(2);
    expect(await Promise.all(calls)).toEqual([504, 504, 504, 504, 504]);
  });

  it("sends the key in x-api-key (the fake refuses anything else)", async () => {
    expect(await p.userByUsername("alice", signal())).toMatchObject({ id: ALICE.id });
  });

  it("an error body that is not about absence is a 502 with their message", async () => {
    fake.override = () => json({ status: "error", msg: "internal scraper failure" });
    await expect(p.searchTweets({ words: ["hello"] }, { size: 20 }, signal())).rejects.toMatchObject({
      status: 502,
      message: expect.stringContaining("internal scraper failure"),
    });
    fake.override = () => json({ detail: "boom" }, 500);
    await expect(p.userTweets("alice", { size: 10 }, signal())).rejects.toMatchObject({ status: 502 });
  });

  it("garbage is a 502: not JSON, or JSON that is not a tweet", async () => {
    fake.override = () => ({ body: "<html>Cloudflare</html>" });
    await expect(p.tweet(HELLO.id, signal())).rejects.toMatchObject({
      status: 502,
      code: "upstream_invalid",
    });
    fake.override = () => json({ status: "success", tweets: [{ id: "x", text: 3 }] });
    await expect(p.tweet(HELLO.id, signal())).rejects.toMatchObject({
      status: 502,
      code: "upstream_invalid",
    });
    fake.override = () =>
      json({ status: "success", tweets: [{ ...wireTweet(HELLO), createdAt: "yesterday" }] });
    await expect(p.tweet(HELLO.id, signal())).rejects.toMatchObject({
      status: 502,
      code: "upstream_invalid",
    });
  });

  it("no answer in time is a 504", async () => {
    fake.override = () => "hang";
    const quick = twitterApiProvider({ apiKey: FAKE_API_KEY, baseUrl: fake.url, timeoutMs: 200 });
    await expect(quick.tweet(HELLO.id, signal())).rejects.toMatchObject({
      status: 504,
      code: "upstream_timeout",
    });
  });
});

describe("not found is null", () => {
  it("an unknown user, by their error body or by an HTTP 404", async () => {
    expect(await p.userByUsername("nobody_here_42", signal())).toBeNull();
    fake.override = () => json({ detail: "Not Found" }, 404);
    expect(await p.userByUsername("alice", signal())).toBeNull();
  });

  it("a suspended user (unavailable) and an article the tweet does not have", async () => {
    fake.override = (req) =>
      req.path === "/twitter/user/info"
        ? json({ status: "success", data: { id: ALICE.id, userName: "alice", unavailable: true } })
        : undefined;
    expect(await p.userByUsername("alice", signal())).toBeNull();
    fake.override = undefined;
    expect(await p.article(HELLO.id, signal())).toBeNull();
    expect((await p.article(ARTICLE_TWEET.id, signal()))?.article.content).toEqual({
      format: "markdown",
      markdown: expect.stringContaining("Pay for what you use"),
    });
  });
});

describe("pages", () => {
  it("a cursor resumes inside an upstream page: nothing repeated, nothing skipped, one upstream call a page", async () => {
    const pages = await allPages((page) => p.userTweets("alice", page, signal()), 7);
    expect(pages.map((page) => page.tweets.length)).toEqual([7, 7, 6, 7, 1]);
    const all = [HELLO, PICTURE, ARTICLE_TWEET, ...ALICE_SERIES].sort(byTime).map((t) => t.id);
    expect(pages.flatMap((page) => page.tweets.map((t) => t.id))).toEqual(all);
    const calls = fake.requests.filter((r) => r.path === "/twitter/user/last_tweets");
    expect(calls).toHaveLength(5);
    // The upstream page is asked for again while the caller is inside it, then the next one.
    expect(calls.map((c) => c.params.cursor ?? "")).toEqual([
      "",
      "",
      "",
      calls[3]?.params.cursor,
      calls[3]?.params.cursor,
    ]);
    expect(calls[3]?.params.cursor).toMatch(/^DAAC/);
  });

  it("a page larger than upstream's is what one upstream page holds", async () => {
    const page = await p.userTweets("alice", { size: 100 }, signal());
    expect(page?.tweets).toHaveLength(20);
    expect(page?.next).toBeDefined();
  });

  it("the followers of an id: the username is looked up once, then rides in the cursor", async () => {
    const pages = await allPages((page) => p.followers(ALICE.id, page, signal()), 1);
    expect(pages.map((page) => page.users.length)).toEqual([1, 1, 1]);
    expect(fake.requests.filter((r) => r.path === "/twitter/user/batch_info_by_ids")).toHaveLength(1);
    expect(
      fake.requests.filter((r) => r.path === "/twitter/user/followers").map((r) => r.params.userName),
    ).toEqual(["alice", "alice", "alice"]);
  });

  it("refuses a cursor it did not give", async () => {
    await expect(p.userTweets("alice", { size: 5, cursor: "not-ours" }, signal())).rejects.toMatchObject({
      status: 400,
    });
  });
});

describe("the wire format's details", () => {
  it("keeps ids past 2^53 exact when they come as JSON numbers", async () => {
    const wire = wireTweet(HELLO);
    const author = wire.author as Record<string, unknown>;
    const text = JSON.stringify({ status: "success", tweets: [wire] })
      .replace(`"id":"${HELLO.id}"`, `"id":${HELLO.id}`)
      .replace(`"id":"${ALICE.id}"`, `"id":${ALICE.id}`)
      .replace(`"id_str":"${BOB.id}"`, `"id_str":${BOB.id}`);
    expect(text).toContain(`"id":${HELLO.id}`);
    expect(author.id).toBe(ALICE.id);
    fake.override = () => ({ body: text });
    const found = await p.tweet(HELLO.id, signal());
    expect(found?.tweets[0]).toMatchObject({ id: HELLO.id, authorId: ALICE.id });
    expect(found?.tweets[0]?.entities.mentions[0]).toMatchObject({ id: BOB.id, start: 19, end: 23 });
  });
});

describe("the caller's session", () => {
  it("mentions: a 501, twitterapi.io cannot act as the caller there", async () => {
    await expect(p.mentions(ALICE_SESSION, { size: 20 }, signal())).rejects.toMatchObject({
      status: 501,
      code: "unsupported",
    });
  });

  it("upload: a 501 without a proxy; with one, the cookies for that call, and a bad session is a 401", async () => {
    const file = { bytes: tinyPng(), type: "image/png", width: 2, height: 1 };
    await expect(p.uploadMedia(ALICE_SESSION, file, signal())).rejects.toMatchObject({
      status: 501,
      code: "unsupported",
    });
    const withProxy = twitterApiProvider({
      apiKey: FAKE_API_KEY,
      baseUrl: fake.url,
      proxy: "http://user:pass@127.0.0.1:9",
    });
    const uploaded = await withProxy.uploadMedia(ALICE_SESSION, file, signal());
    expect(uploaded).toMatchObject({ mediaId: "1790000000000009001", size: 33 });
    const bad = { authToken: "0".repeat(40), ct0: "f".repeat(32) };
    const error = await withProxy.uploadMedia(bad, file, signal()).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 401, code: "invalid_session" });
    expect((error as Error).message).not.toContain(bad.authToken);
  });
});

describe("cutting pages (paging.ts)", () => {
  const items = (...ids: string[]) => ids.map((id) => ({ id }));
  it("resumes after the last item served when newer items shifted the upstream page", () => {
    const first = cut(items("5", "4", "3", "2", "1"), decodeCursor(undefined), 2, "UP2");
    expect(first.items).toEqual(items("5", "4"));
    // Two new items arrived on top: the offset alone would serve 4 again.
    const second = cut(items("7", "6", "5", "4", "3", "2", "1"), decodeCursor(first.next), 2, "UP2");
    expect(second.items).toEqual(items("3", "2"));
    const third = cut(items("7", "6", "5", "4", "3", "2", "1"), decodeCursor(second.next), 2, "UP2");
    expect(third.items).toEqual(items("1"));
    expect(decodeCursor(third.next)).toEqual({ c: "UP2", o: 0 });
  });

  it("ends when upstream has no next page or a cursor that does not move", () => {
    expect(cut(items("1"), { o: 0 }, 5, undefined).next).toBeUndefined();
    expect(cut(items("1"), { o: 0, c: "A" }, 5, "A").next).toBeUndefined();
  });
});
