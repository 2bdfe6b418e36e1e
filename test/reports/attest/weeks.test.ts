import { describe, expect, it } from "vitest";
import { WEEK_BLOCKS } from "../../../src/chain/base.ts";
import { BASE_DENIM_BLOCK, BASE_MAINNET_CLOCK } from "../../../src/chain/block-clock.ts";
import { WeekCloses } from "../../../src/reports/index.ts";

const MONDAY_MS = Date.parse("2026-11-09T00:00:00Z");

describe("Base's week closes", () => {
  const closes = WeekCloses.mondays(BASE_MAINNET_CLOCK);

  it("are block 171,726 and every 302,400 blocks of 2 s after it, as before Denim", () => {
    // The first close is not a full week of the chain's: the first that is comes a week later.
    expect(closes.lastClose(171_726 + WEEK_BLOCKS)).toBe(171_726 + WEEK_BLOCKS);
    expect(closes.lastClose(171_725 + 2 * WEEK_BLOCKS)).toBe(171_726 + WEEK_BLOCKS);
    expect(closes.isClose(171_726)).toBe(false);
    expect(closes.isClose(171_726 + 100 * WEEK_BLOCKS)).toBe(true);
    expect(closes.isClose(171_727 + 100 * WEEK_BLOCKS)).toBe(false);
    expect(closes.next(171_726)).toBe(171_726 + WEEK_BLOCKS);
    expect(closes.lastClose(171_725 + WEEK_BLOCKS)).toBeUndefined();
  });

  it("close on Monday 00:00 UTC since Denim too: the first week across it, then every 3,024,000 blocks", () => {
    // Denim activated Thursday 2026-11-05 18:00: the week closing Monday 2026-11-09 has both kinds of block.
    // Two weeks of 200 ms blocks after it is Thursday 2026-11-19: the last close is that Monday's.
    const later = closes.lastClose(BASE_DENIM_BLOCK + 2 * 10 * WEEK_BLOCKS) as number;
    expect(BASE_MAINNET_CLOCK.msOf(later)).toBe(Date.parse("2026-11-16T00:00:00Z"));
    const across = closes.lastClose(BASE_DENIM_BLOCK + 1) as number;
    expect(across).toBeLessThan(BASE_DENIM_BLOCK);
    const monday = closes.next(across);
    expect(BASE_MAINNET_CLOCK.msOf(monday)).toBe(MONDAY_MS);
    expect(closes.isClose(monday)).toBe(true);
    expect(closes.isClose(monday + 1)).toBe(false);
    expect(closes.isClose(monday - 1)).toBe(false);
    expect(closes.next(monday)).toBe(monday + 10 * WEEK_BLOCKS);
    expect(closes.lastClose(monday + 10 * WEEK_BLOCKS - 1)).toBe(monday);
  });
});
