/**
 * The checkpoint rows the writer keeps (src/indexer/writer.ts): the latest, the last of each CHECKPOINT_SPACING
 * stretch for good, and a row a later commit in its stretch superseded for SUPERSEDED_KEEP_MS of wall time, or as
 * long as a stored report window ends there. The week served as the latest ends at a checkpoint, and a stamped
 * chain's week is dated by that row: deleted at the next commit, the same week changed its span on the next read
 * (test/reports/serve/stamped-latest.test.ts). `--follow` commits every block, so the rest must go.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import { BatchWriter, CHECKPOINT_SPACING, SUPERSEDED_KEEP_MS } from "../../src/indexer/writer.ts";
import { tempAnalytics } from "../helpers/data.ts";

const MINUTE = 60_000;
const T0 = 1_795_305_600;

let analytics: Analytics;
let writer: BatchWriter;
/** The writer's wall clock (ms), moved by the test. */
let now = Date.UTC(2026, 10, 29, 12);
let head: { block: number; hash: string; time: number } | undefined;

/** One commit of empty blocks up to `to` (2 s each), following the last, as a follower makes it. */
async function commitTo(to: number): Promise<void> {
  const end = { block: to, hash: `0x${to.toString(16).padStart(64, "0")}`, time: T0 + 2 * to };
  await writer.commit(
    {
      from: (head?.block ?? 0) + 1,
      to,
      end,
      payments: [],
      candidates: [],
      transfers: [],
      hashes: [end],
    },
    { startBlock: 1, previous: head, reorgDepth: 64 },
  );
  head = end;
}

async function kept(): Promise<{ block: number; superseded: boolean }[]> {
  const rows = await analytics.all<{ block_number: bigint; superseded: boolean }>(
    "SELECT block_number, superseded_at IS NOT NULL AS superseded FROM checkpoints ORDER BY block_number",
  );
  return rows.map((r) => ({ block: Number(r.block_number), superseded: r.superseded }));
}

beforeAll(async () => {
  analytics = await tempAnalytics();
  writer = new BatchWriter(analytics, undefined, () => now);
});
afterAll(() => analytics.close());

describe("checkpoint rows as the indexer follows the chain", () => {
  it("keeps a superseded checkpoint a while, then only the latest and each stretch's last", async () => {
    await commitTo(10);
    await commitTo(20);
    await commitTo(30);
    // A later commit in the stretch supersedes a checkpoint: marked, not deleted, since readers may still be
    // served the week that ends there.
    expect(await kept()).toEqual([
      { block: 10, superseded: true },
      { block: 20, superseded: true },
      { block: 30, superseded: false },
    ]);

    now += SUPERSEDED_KEEP_MS - MINUTE;
    await commitTo(40);
    expect((await kept()).map((r) => r.block)).toEqual([10, 20, 30, 40]);

    // Past the while for 10 and 20 (30 was superseded a minute before it ended): the next commit deletes them.
    now += 2 * MINUTE;
    await commitTo(50);
    expect(await kept()).toEqual([
      { block: 30, superseded: true },
      { block: 40, superseded: true },
      { block: 50, superseded: false },
    ]);

    // A commit in the next stretch supersedes nothing: 50 is its stretch's last, kept for good.
    await commitTo(CHECKPOINT_SPACING + 10);
    now += 2 * SUPERSEDED_KEEP_MS;
    await commitTo(CHECKPOINT_SPACING + 20);
    expect(await kept()).toEqual([
      { block: 50, superseded: false },
      { block: CHECKPOINT_SPACING + 10, superseded: true },
      { block: CHECKPOINT_SPACING + 20, superseded: false },
    ]);
  });

  it("keeps a superseded checkpoint a stored report window ends at for as long as that report is stored", async () => {
    const named = CHECKPOINT_SPACING + 30;
    await commitTo(named);
    await commitTo(named + 10);
    await commitTo(named + 20);
    await analytics.run(
      "INSERT INTO report_windows VALUES ('base', $end, 0, 'https://reports.test', '2026-11-29T12:00:00Z', NULL)",
      { end: named },
    );
    now += 2 * SUPERSEDED_KEEP_MS;
    await commitTo(named + 30);
    const blocks = (await kept()).map((r) => r.block);
    // The wallet histories read a stored window again, hours on: its end keeps its time.
    expect(blocks).toContain(named);
    expect(blocks).not.toContain(named + 10);

    // Once its reports are dropped, the next commit deletes it.
    await analytics.run("DELETE FROM report_windows WHERE end_block = $end", { end: named });
    await commitTo(named + 40);
    expect(await analytics.all("SELECT 1 FROM checkpoints WHERE block_number = $b", { b: named })).toEqual(
      [],
    );
  });

  it("holds a follower committing every block to the rows of the last while, however long it runs", async () => {
    const from = 3 * CHECKPOINT_SPACING;
    await commitTo(from);
    // A commit every 2 s of blocks and every 5 minutes of wall time, for 3 hours: 36 commits in one stretch.
    for (let i = 1; i <= 36; i++) {
      now += 5 * MINUTE;
      await commitTo(from + i);
    }
    const rows = (await kept()).filter((r) => r.block >= from);
    // The latest and those superseded in the last hour, this commit's among them: 0, 5, ... 60 minutes ago (an
    // hour to the millisecond is not older than the hour), 13 of the 36.
    expect(rows.filter((r) => !r.superseded).map((r) => r.block)).toEqual([from + 36]);
    expect(rows.length).toBe(2 + SUPERSEDED_KEEP_MS / (5 * MINUTE));
  });
});
