/** /tweets/search's filters in X's search syntax, and the spec's error case (no filter). */
import { describe, expect, it } from "vitest";
import { hasFilter, toXSearchQuery } from "../../../src/merchants/social/search-query.ts";

describe("search filters", () => {
  it("write X's syntax, every filter in a fixed order", () => {
    expect(
      toXSearchQuery({
        words: ["bitcoin", "ETF"],
        phrase: "to the moon",
        anyWords: ["buy", "sell"],
        noneWords: ["scam"],
        hashtags: ["crypto"],
        from: "alice",
        to: "bob",
        mentioning: "carol",
        minReplies: 1,
        minLikes: 10,
        minReposts: 2,
        since: "2026-11-01",
        until: "2026-11-08",
      }),
    ).toBe(
      'bitcoin ETF "to the moon" (buy OR sell) -scam #crypto from:alice to:bob @carol min_replies:1 min_faves:10 min_retweets:2 since:2026-11-01 until:2026-11-08',
    );
    expect(toXSearchQuery({ anyWords: ["solo"] })).toBe("solo");
  });

  it("quote a word that X would read as an operator or that is not one word", () => {
    expect(toXSearchQuery({ words: ["OR", "-x", "from:me", 'say "hi"'] })).toBe(
      '"OR" "-x" "from:me" "say hi"',
    );
  });

  it("know when no filter is set", () => {
    expect(hasFilter({})).toBe(false);
    expect(hasFilter({ words: [], phrase: "" })).toBe(false);
    expect(hasFilter({ minLikes: 0 })).toBe(true);
  });
});
