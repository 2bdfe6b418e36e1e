/** X's paging: its `Bottom` cursor comes even on the last page, which the provider must see as the end. */
import { describe, expect, it } from "vitest";
import { nextOf } from "../../../../../src/merchants/social/providers/x-web/pages.ts";
import {
  mergeIncludes,
  missingRepliedTo,
} from "../../../../../src/merchants/social/providers/x-web/replied-to.ts";
import { ALICE, BOB, HELLO, QUOTE, REPLY } from "../../world.ts";

describe("x-web pages", () => {
  it("ends on a page without items or whose cursor did not move", () => {
    const timeline = { items: [], bottom: "B2" };
    expect(nextOf(timeline, 3, { size: 3, cursor: "B1" })).toEqual({ next: "B2" });
    expect(nextOf(timeline, 3, { size: 3 })).toEqual({ next: "B2" });
    expect(nextOf(timeline, 0, { size: 3, cursor: "B1" })).toEqual({});
    expect(nextOf(timeline, 3, { size: 3, cursor: "B2" })).toEqual({});
    expect(nextOf({ items: [] }, 3, { size: 3 })).toEqual({});
  });

  it("asks for each missing replied-to tweet once, and merges each include once", () => {
    const empty = { users: [], tweets: [], media: [] };
    const twice = { ...REPLY, id: "9" };
    expect(missingRepliedTo({ tweets: [REPLY, twice, QUOTE], includes: empty })).toEqual([HELLO.id]);
    expect(missingRepliedTo({ tweets: [REPLY], includes: { ...empty, tweets: [HELLO] } })).toEqual([]);
    const includes = { users: [ALICE], tweets: [HELLO], media: [] };
    mergeIncludes(includes, { users: [ALICE, BOB], tweets: [HELLO, QUOTE], media: [] });
    expect(includes.users.map((u) => u.id)).toEqual([ALICE.id, BOB.id]);
    expect(includes.tweets.map((t) => t.id)).toEqual([HELLO.id, QUOTE.id]);
  });
});
