/**
 * Every payment in exactly one week, on a chain whose blocks say their own time and share seconds (Arbitrum One
 * makes several blocks a second). A week asked for by a block inside a shared second, and the week after it,
 * must between them hold every payment of that second: before, the first ended at the block asked for and the
 * second started after the whole second, and the payments of that second after the end block were in neither.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../../src/analytics/duckdb.ts";
import { ARBITRUM_RECORD } from "../../../src/chain/chains.ts";
import type { ReportWindow } from "../../../src/reports/model.ts";
import { resolveWindow } from "../../../src/reports/week/window.ts";
import { addr, analyticsWith, payment } from "../../helpers/data.ts";

/** Four blocks a second from block 0 at T0 (a Wednesday noon: no Monday close falls on the edges below). */
const T0 = Date.UTC(2026, 10, 4, 12) / 1000;
const PER_SECOND = 4;
const timeOf = (block: number) => T0 + Math.floor(block / PER_SECOND);
const WEEK_SECONDS = 7 * 86_400;
/** The first week's end: the second block of its second, two more blocks of the same second after it. */
const E1 = 9 * 86_400 * PER_SECOND + 1;
/** The week after: the block 7 days on, at the same place in its second. */
const E2 = E1 + WEEK_SECONDS * PER_SECOND;

const shop = addr("edge-shop");
const onArbitrum = (block: number, i: number) => ({
  ...payment({ payer: addr(`buyer-${i % 5}`), payTo: shop, amount: 1_000 + i, block }),
  chain: "arbitrum",
  block_time: timeOf(block),
});

/** Payments in every block of both edge seconds, and some spread over the two weeks. */
const blocks = [
  ...[E1, E2].flatMap((edge) => {
    const first = edge - (edge % PER_SECOND);
    return Array.from({ length: PER_SECOND }, (_, k) => first + k);
  }),
  // The chain's first days: neither week reaches back to them, so neither is a young chain's.
  10,
  ...Array.from({ length: 40 }, (_, i) => E1 - WEEK_SECONDS * PER_SECOND + 5 + i * 120_961),
].sort((a, b) => a - b);
const lines = [
  ...blocks.map(onArbitrum),
  // The indexer has read past the second week: both are closed by data after them.
  { type: "checkpoint", chain: "arbitrum", block_number: E2 + 40_000, block_time: timeOf(E2 + 40_000) },
];

let analytics: Analytics;
beforeAll(async () => {
  analytics = await analyticsWith(lines);
});
afterAll(() => analytics.close());

const holds = (w: ReportWindow, block: number) => block > w.start_block && block <= w.end_block;

describe("a stamped chain's weeks at a shared second", () => {
  it("hold each payment of a week and the week after it in exactly one of them", async () => {
    const first = await resolveWindow(analytics, ARBITRUM_RECORD, E1);
    const second = await resolveWindow(analytics, ARBITRUM_RECORD, E2);
    const inFirstSecond = blocks.filter((b) => timeOf(b) === timeOf(E1));
    expect(inFirstSecond.filter((b) => b > E1)).toHaveLength(2);
    for (const block of blocks.filter((b) => b > first.start_block && b <= second.end_block)) {
      expect([holds(first, block), holds(second, block)].filter(Boolean), `block ${block}`).toHaveLength(1);
    }
    // The weeks meet: the second starts where the first ends, and each is 7 days long.
    expect(second.start_block).toBe(first.end_block);
    expect([first.days, second.days]).toEqual([7, 7]);
  });

  it("end with their end block's second: a week asked for by any block of a second is the same week", async () => {
    const first = E1 - (E1 % PER_SECOND);
    const windows = await Promise.all(
      Array.from({ length: PER_SECOND }, (_, k) => resolveWindow(analytics, ARBITRUM_RECORD, first + k)),
    );
    const ends = new Set(windows.map((w) => `${w.start_block}..${w.end_block}`));
    expect([...ends]).toEqual([`${windows[0]?.start_block}..${first + PER_SECOND - 1}`]);
  });
});
