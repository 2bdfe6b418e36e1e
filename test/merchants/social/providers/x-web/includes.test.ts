/** What the x-web provider adds past the contract: replied-to tweets in includes, X's paging and requests. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { xWebProvider } from "../../../../../src/merchants/social/providers/x-web/index.ts";
import { ALICE, HELLO, REPLY } from "../../world.ts";
import { type FakeX, startFakeX } from "./fake-x.ts";

const ACCOUNT = { authToken: "7".repeat(40), ct0: "6".repeat(32) };
let fake: FakeX;
beforeAll(async () => {
  fake = await startFakeX({ tokens: [ACCOUNT.authToken] });
});
afterAll(() => fake.close());
const signal = () => AbortSignal.timeout(10_000);
const ids = (items: { id: string }[]) => items.map((x) => x.id);

describe("the x-web provider's includes and requests", () => {
  it("brings the replied-to tweet and its author into includes", async () => {
    const p = xWebProvider({ baseUrl: fake.url, accounts: [ACCOUNT] });
    const reply = await p.tweet(REPLY.id, signal());
    expect(ids(reply?.includes.tweets ?? [])).toEqual([HELLO.id]);
    expect(ids(reply?.includes.users ?? [])).toContain(ALICE.id);
    const search = await p.searchTweets({ from: "bob" }, { size: 20 }, signal());
    expect(ids(search.includes.tweets)).toEqual([HELLO.id]);
    const replies = await p.replies(HELLO.id, { size: 20 }, signal());
    expect(ids(replies?.includes.tweets ?? [])).toEqual([HELLO.id]);
  });

  it("asks X with the page's size and its own cursor, and the IDs as strings", async () => {
    const p = xWebProvider({ baseUrl: fake.url, accounts: [ACCOUNT] });
    fake.requests.length = 0;
    const first = await p.userTweets("alice", { size: 4 }, signal());
    await p.userTweets("alice", { size: 4, cursor: first?.next as string }, signal());
    const asked = fake.requests.filter((r) => r.operation === "UserTweets").map((r) => r.variables);
    expect(asked[0]).toMatchObject({ userId: ALICE.id, count: 4 });
    expect(asked[0]?.cursor).toBeUndefined();
    expect(asked[1]).toMatchObject({ userId: ALICE.id, count: 4, cursor: first?.next });
  });
});
