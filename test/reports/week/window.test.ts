import { describe, expect, it } from "vitest";
import { WEEK_BLOCKS } from "../../../src/chain/base.ts";
import { spanShort, spanText } from "../../../src/reports/week/span.ts";
import { isShortWindow, windowDates, windowEnding } from "../../../src/reports/week/window.ts";

// 2026-11-22T00:00:00Z
const T = 1_795_305_600;

describe("windowEnding", () => {
  it("is 302,400 blocks and 7 days on a chain older than a week, complete when checkpointed", () => {
    const w = windowEnding(40_000_000, T, 40_000_000);
    expect(w).toEqual({
      start_block: 40_000_000 - WEEK_BLOCKS,
      end_block: 40_000_000,
      complete: true,
      start: "2026-11-15T00:00:00+00:00",
      end: "2026-11-22T00:00:00+00:00",
      days: 7,
    });
    expect(isShortWindow(w)).toBe(false);
    expect(windowEnding(40_000_000, T, 39_999_999).complete).toBe(false);
    expect(windowEnding(40_000_000, T, null).complete).toBe(false);
  });

  it("on a chain younger than a week starts at block 0, covers the chain's whole life and is incomplete", () => {
    // 28 blocks of 2 s: the chain is 56 s old.
    const w = windowEnding(28, T, 28);
    expect(w).toEqual({
      start_block: 0,
      end_block: 28,
      complete: false,
      start: "2026-11-21T23:59:04+00:00",
      end: "2026-11-22T00:00:00+00:00",
      days: 0.000648,
    });
    expect(isShortWindow(w)).toBe(true);
    expect(windowDates(w)).toEqual(["2026-11-21", "2026-11-22"]);
  });

  it("is exactly a week from the first block that allows one, and a day for a day-old chain", () => {
    expect(windowEnding(WEEK_BLOCKS, T, WEEK_BLOCKS)).toMatchObject({
      start_block: 0,
      complete: true,
      days: 7,
    });
    expect(windowEnding(WEEK_BLOCKS - 1, T, WEEK_BLOCKS)).toMatchObject({ start_block: 0, complete: false });
    expect(windowEnding(43_200, T, 43_200)).toMatchObject({
      start_block: 0,
      days: 1,
      start: "2026-11-21T00:00:00+00:00",
    });
    expect(windowEnding(0, T, 0)).toMatchObject({ start_block: 0, end_block: 0, days: 0, complete: false });
  });
});

describe("span words", () => {
  it("names a window's length in the largest unit it fills", () => {
    expect(spanText(7)).toBe("7 days");
    expect(spanText(1)).toBe("1 day");
    expect(spanText(0.000648)).toBe("56 seconds");
    expect(spanText(0.0625)).toBe("1.5 hours");
    expect(spanText(45 / 1440)).toBe("45 minutes");
    expect(spanText(0)).toBe("0 seconds");
    expect(spanShort(7)).toBe("7d");
    expect(spanShort(0.000648)).toBe("56s");
    expect(spanShort(3 / 24)).toBe("3h");
  });
});
