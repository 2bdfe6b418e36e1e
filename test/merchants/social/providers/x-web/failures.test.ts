/**
 * How the x-web provider answers X's failures: rate limits and refused sessions (the pool, then a 503 with
 * Retry-After), nonsense (502), silence (504), errors in a 200, what X reports unavailable (null), the
 * caller's bad cookies (401 invalid_session), and cookies never in a message; the feature switches the
 * configuration sets reach X.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../../../../src/common/errors.ts";
import type { SocialProvider } from "../../../../../src/merchants/social/provider.ts";
import { MAX_IN_FLIGHT_PER_ACCOUNT } from "../../../../../src/merchants/social/providers/x-web/accounts.ts";
import { xWebProvider } from "../../../../../src/merchants/social/providers/x-web/index.ts";
import {
  TWEET_FEATURES,
  USER_FEATURES,
} from "../../../../../src/merchants/social/providers/x-web/operations.ts";
import { socialSetup } from "../../../../../src/merchants/social/setup.ts";
import { loadConfig } from "../../../../../src/services/config.ts";
import { tinyPng } from "../../contract.ts";
import { ALICE, ALICE_SESSION, BOB, HELLO, REPLY } from "../../world.ts";
import { type FakeX, startFakeX } from "./fake-x.ts";

const A = { authToken: "a".repeat(40), ct0: "1".repeat(32) };
const B = { authToken: "b".repeat(40), ct0: "2".repeat(32) };
const SECRETS = [A.authToken, A.ct0, B.authToken, B.ct0, ALICE_SESSION.authToken, ALICE_SESSION.ct0];

let fake: FakeX;
/** Every error a test saw: none may hold a cookie. */
const seen: unknown[] = [];

beforeAll(async () => {
  fake = await startFakeX({ tokens: [A.authToken, B.authToken] });
});
afterEach(() => {
  fake.script = undefined;
  fake.suspended.clear();
  fake.deleted.clear();
  fake.requests.length = 0;
});
afterAll(async () => {
  for (const error of seen) {
    const text = `${String(error)} ${JSON.stringify(error)} ${(error as Error).stack ?? ""} ${JSON.stringify(
      (error as AppError).headers ?? {},
    )}`;
    for (const secret of SECRETS) expect(text).not.toContain(secret);
  }
  await fake.close();
});

const provider = (accounts = [A, B], timeoutMs = 5_000): SocialProvider =>
  xWebProvider({ baseUrl: fake.url, uploadUrl: fake.url, accounts, timeoutMs });
const signal = () => AbortSignal.timeout(10_000);
async function failure(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  seen.push(error);
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe("the x-web provider's session pool", () => {
  it("rests an account X rate-limited and asks with the next one", async () => {
    const reset = Math.floor(Date.now() / 1000) + 120;
    fake.script = (r) =>
      r.authToken === A.authToken
        ? {
            status: 429,
            headers: { "x-rate-limit-reset": String(reset), "x-rate-limit-remaining": "0" },
            body: '{"errors":[{"code":88,"message":"Rate limit exceeded."}]}',
          }
        : undefined;
    const p = provider();
    expect((await p.userByUsername("alice", signal()))?.id).toBe(ALICE.id);
    expect(fake.requests.map((r) => r.authToken)).toEqual([A.authToken, B.authToken]);
    // A rests until its reset: the next calls go to B without asking A.
    fake.requests.length = 0;
    expect((await p.userByUsername("bob", signal()))?.id).toBe(BOB.id);
    expect(fake.requests.map((r) => r.authToken)).toEqual([B.authToken]);
  });

  it("answers 503 with Retry-After from x-rate-limit-reset when every account is rate-limited", async () => {
    const reset = Math.floor(Date.now() / 1000) + 300;
    fake.script = () => ({ status: 429, headers: { "x-rate-limit-reset": String(reset) }, body: "" });
    const error = await failure(provider().userByUsername("alice", signal()));
    expect(error).toMatchObject({ status: 503, code: "upstream_rate_limited" });
    const wait = Number(error.headers["retry-after"]);
    expect(wait).toBeGreaterThan(290);
    expect(wait).toBeLessThanOrEqual(300);
  });

  it("answers 503 when X refuses every account (401), and rests them", async () => {
    fake.script = () => ({
      status: 401,
      body: '{"errors":[{"code":32,"message":"Could not authenticate you."}]}',
    });
    const p = provider();
    const error = await failure(p.tweet(HELLO.id, signal()));
    expect(error).toMatchObject({ status: 503 });
    expect(Number(error.headers["retry-after"])).toBeGreaterThan(0);
    expect(fake.requests).toHaveLength(2);
    fake.script = undefined;
    await failure(p.tweet(HELLO.id, signal()));
    expect(fake.requests).toHaveLength(2);
  });

  it("takes a session problem X says in a 200 as the account's, and moves on", async () => {
    fake.script = (r) =>
      r.authToken === A.authToken
        ? { status: 200, body: '{"errors":[{"code":88,"message":"Rate limit exceeded"}]}' }
        : undefined;
    expect((await provider().tweet(HELLO.id, signal()))?.tweets[0]?.id).toBe(HELLO.id);
  });

  it("gives one session at most four requests at once; the rest wait for it within their time limit", async () => {
    fake.script = (r) => (r.operation === "UserByScreenName" ? "hang" : undefined);
    const p = provider([A], 1_500);
    const calls = Array.from({ length: 7 }, () => failure(p.userByUsername("alice", signal())));
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(fake.requests.filter((r) => r.operation === "UserByScreenName")).toHaveLength(
      MAX_IN_FLIGHT_PER_ACCOUNT,
    );
    // The four time out; the three waiting are woken, take the session, and time out in turn: none waits past its limit.
    for (const error of await Promise.all(calls)) expect(error.status).toBe(504);
    expect(fake.requests.filter((r) => r.operation === "UserByScreenName").length).toBeLessThanOrEqual(7);
  });

  it("answers 503 when no account is configured", async () => {
    expect(await failure(provider([]).tweet(HELLO.id, signal()))).toMatchObject({ status: 503 });
  });
});

describe("the x-web provider's failures", () => {
  it("answers 502 for an answer that is not JSON", async () => {
    fake.script = () => ({ status: 200, body: "<html>Something went wrong" });
    expect(await failure(provider().userByUsername("alice", signal()))).toMatchObject({
      status: 502,
      code: "upstream_invalid",
    });
  });

  it("answers 502 for a 5xx and for a stale query id (404)", async () => {
    fake.script = () => ({ status: 503, body: '{"errors":[{"message":"Over capacity","code":130}]}' });
    expect(await failure(provider().userByUsername("alice", signal()))).toMatchObject({ status: 502 });
    fake.script = undefined;
    const stale = xWebProvider({
      baseUrl: fake.url,
      accounts: [A],
      queryIds: { UserByScreenName: "oldOldOld" },
    });
    const error = await failure(stale.userByUsername("alice", signal()));
    expect(error.status).toBe(502);
    expect(error.message).toContain("404");
  });

  it("sends the feature switches X402M_SOCIAL_X_FEATURES sets, in every set that has them, the rest as default", async () => {
    const settings = loadConfig({
      env: {
        X402M_SOCIAL_PROVIDER: "x-web",
        X402M_SOCIAL_X_ACCOUNTS: `${A.authToken}:${A.ct0}`,
        X402M_SOCIAL_X_URL: fake.url,
        X402M_SOCIAL_X_FEATURES:
          "articles_preview_enabled=false, profile_label_improvements_pcf_label_in_post_enabled=false",
      },
    }).social;
    // The x-web provider keeps nothing in the host's database.
    const configured = socialSetup(settings).provider(undefined as never);
    expect(await configured.userByUsername("alice", signal())).toMatchObject({ id: ALICE.id });
    expect(await configured.tweet(HELLO.id, signal())).not.toBeNull();
    const sent = Object.fromEntries(fake.requests.map((r) => [r.operation, r.features]));
    expect(sent.UserByScreenName).toEqual({
      ...USER_FEATURES,
      profile_label_improvements_pcf_label_in_post_enabled: false,
    });
    expect(sent.TweetResultByRestId).toEqual({
      ...TWEET_FEATURES,
      articles_preview_enabled: false,
      profile_label_improvements_pcf_label_in_post_enabled: false,
    });
  });

  it("answers 504 when X says nothing within the time limit", async () => {
    fake.script = () => "hang";
    const started = Date.now();
    expect(await failure(provider([A], 300).userByUsername("alice", signal()))).toMatchObject({
      status: 504,
      code: "upstream_timeout",
    });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("answers 502 for errors[] in a 200 without the data, and keeps the data when it came", async () => {
    fake.script = (r) =>
      r.operation === "UserByScreenName"
        ? {
            status: 200,
            body: '{"errors":[{"message":"Internal: Something went wrong","code":131}],"data":{}}',
          }
        : undefined;
    const error = await failure(provider().userByUsername("alice", signal()));
    expect(error).toMatchObject({ status: 502 });
    expect(error.message).toContain("Something went wrong");
    // A partial error beside the data (X sends these with timelines): the data counts.
    fake.script = (r) =>
      r.operation === "TweetResultByRestId"
        ? {
            status: 200,
            body: JSON.stringify({
              data: { tweetResult: {} },
              errors: [{ message: "_Missing: No status found with that ID.", code: 144 }],
            }),
          }
        : undefined;
    expect(await provider().tweet(HELLO.id, signal())).toBeNull();
  });

  it("says null for a suspended user (UserUnavailable) and a deleted tweet (TweetTombstone)", async () => {
    fake.suspended.add("bob");
    fake.deleted.add(HELLO.id);
    const p = provider();
    expect(await p.userByUsername("bob", signal())).toBeNull();
    expect(await p.userTweets("bob", { size: 10 }, signal())).toBeNull();
    expect(await p.tweet(HELLO.id, signal())).toBeNull();
    expect(await p.article(HELLO.id, signal())).toBeNull();
    expect(await p.replies(HELLO.id, { size: 10 }, signal())).toBeNull();
    expect((await p.tweets([HELLO.id, REPLY.id], signal())).tweets.map((t) => t.id)).toEqual([REPLY.id]);
  });

  it("answers the caller's bad cookies with 401 invalid_session, never a 503", async () => {
    const p = provider();
    const bad = { authToken: "9".repeat(40), ct0: "8".repeat(32) };
    SECRETS.push(bad.authToken, bad.ct0);
    expect(await failure(p.mentions(bad, { size: 10 }, signal()))).toMatchObject({
      status: 401,
      code: "invalid_session",
    });
    expect(
      await failure(
        p.uploadMedia(bad, { bytes: tinyPng(), type: "image/png", width: 2, height: 1 }, signal()),
      ),
    ).toMatchObject({ status: 401, code: "invalid_session" });
    // X's CSRF refusal (403) is the caller's too.
    fake.script = () => ({ status: 403, body: '{"errors":[{"code":353,"message":"csrf"}]}' });
    expect(await failure(p.mentions(ALICE_SESSION, { size: 10 }, signal()))).toMatchObject({ status: 401 });
    // The operator's accounts are not rested for a caller's failure.
    fake.script = undefined;
    expect((await p.userByUsername("alice", signal()))?.id).toBe(ALICE.id);
  });

  it("keeps cookies out of messages even when X quotes them", async () => {
    fake.script = (r) => ({
      status: 400,
      body: JSON.stringify({ errors: [{ message: `Bad session auth_token=${r.authToken}`, code: 214 }] }),
    });
    const error = await failure(provider().userByUsername("alice", signal()));
    expect(error.status).toBe(502);
    expect(error.message).toContain("[redacted]");
    const caller = await failure(provider().mentions(ALICE_SESSION, { size: 10 }, signal()));
    expect(caller.message).toContain("[redacted]");
  });

  it("a caller rate-limited is a 503 with Retry-After", async () => {
    fake.script = (r) =>
      r.authToken === ALICE_SESSION.authToken
        ? { status: 429, headers: { "x-rate-limit-reset": String(Math.floor(Date.now() / 1000) + 60) } }
        : undefined;
    const error = await failure(provider().mentions(ALICE_SESSION, { size: 10 }, signal()));
    expect(error).toMatchObject({ status: 503 });
    expect(Number(error.headers["retry-after"])).toBeGreaterThan(0);
  });
});
