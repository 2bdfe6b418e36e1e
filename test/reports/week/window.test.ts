import { describe, expect, it } from "vitest";
import { WEEK_BLOCKS } from "../../../src/chain/base.ts";
import { BASE_DENIM_BLOCK, BASE_MAINNET_CLOCK, BlockClock } from "../../../src/chain/block-clock.ts";
import { spanShort, spanText } from "../../../src/reports/week/span.ts";
import { isShortWindow, windowDates, windowEnding } from "../../../src/reports/week/window.ts";

// 2026-11-22T00:00:00Z
const T = 1_795_305_600;
/** A devnet's 2 s clock on which block `end` is at T. */
const at = (end: number) => new BlockClock(end, T);

describe("windowEnding", () => {
  it("is 302,400 blocks and 7 days on a chain older than a week, complete when checkpointed", () => {
    const w = windowEnding(40_000_000, at(40_000_000), 40_000_000);
    expect(w).toEqual({
      start_block: 40_000_000 - WEEK_BLOCKS,
      end_block: 40_000_000,
      complete: true,
      start: "2026-11-15T00:00:00+00:00",
      end: "2026-11-22T00:00:00+00:00",
      days: 7,
    });
    expect(isShortWindow(w)).toBe(false);
    expect(windowEnding(40_000_000, at(40_000_000), 39_999_999).complete).toBe(false);
    expect(windowEnding(40_000_000, at(40_000_000), null).complete).toBe(false);
  });

  it("on a chain younger than a week starts at block 0, covers the chain's whole life and is incomplete", () => {
    // 28 blocks of 2 s: the chain is 56 s old.
    const w = windowEnding(28, at(28), 28);
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
    expect(windowEnding(WEEK_BLOCKS, at(WEEK_BLOCKS), WEEK_BLOCKS)).toMatchObject({
      start_block: 0,
      complete: true,
      days: 7,
    });
    expect(windowEnding(WEEK_BLOCKS - 1, at(WEEK_BLOCKS - 1), WEEK_BLOCKS)).toMatchObject({
      start_block: 0,
      complete: false,
    });
    expect(windowEnding(43_200, at(43_200), 43_200)).toMatchObject({
      start_block: 0,
      days: 1,
      start: "2026-11-21T00:00:00+00:00",
    });
    expect(windowEnding(0, at(0), 0)).toMatchObject({
      start_block: 0,
      end_block: 0,
      days: 0,
      complete: false,
    });
  });
});

describe("windowEnding on Base Mainnet since Denim", () => {
  const DAY_MS = 86_400_000;

  it("is 3,024,000 blocks of 200 ms and 7 days for a week wholly after Denim, its start a week before to the millisecond", () => {
    const end = BASE_DENIM_BLOCK + 4 * WEEK_BLOCKS * 10;
    const w = windowEnding(end, BASE_MAINNET_CLOCK, end);
    expect(w.end_block - w.start_block).toBe(10 * WEEK_BLOCKS);
    expect(w).toMatchObject({ days: 7, complete: true });
    expect(Date.parse(w.end) - Date.parse(w.start)).toBe(7 * DAY_MS);
    expect(BASE_MAINNET_CLOCK.msOf(w.end_block) - BASE_MAINNET_CLOCK.msOf(w.start_block)).toBe(7 * DAY_MS);
  });

  it("spans 7 days across Denim's activation, of both kinds of block, and the next week starts where it ends", () => {
    // A week ending one day after activation: six days of 2 s blocks, then one of 200 ms.
    const end = BASE_DENIM_BLOCK + 432_000;
    const w = windowEnding(end, BASE_MAINNET_CLOCK, end);
    expect(w.start_block).toBe(BASE_DENIM_BLOCK - 6 * 43_200);
    expect(w).toMatchObject({ days: 7, complete: true });
    const next = windowEnding(end + 10 * WEEK_BLOCKS, BASE_MAINNET_CLOCK, null);
    expect(next.start_block).toBe(end);
    expect(next.days).toBe(7);
  });

  it("is 302,400 blocks for a week that ends before Denim, as every Base week before it was", () => {
    const end = BASE_DENIM_BLOCK - 1;
    expect(windowEnding(end, BASE_MAINNET_CLOCK, end)).toMatchObject({
      start_block: end - WEEK_BLOCKS,
      days: 7,
    });
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
