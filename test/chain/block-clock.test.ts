import { describe, expect, it } from "vitest";
import { BASE_DENIM_TIME, BASE_GENESIS_TIME } from "../../src/chain/base.ts";
import {
  BASE_DENIM_BLOCK,
  BASE_MAINNET_CLOCK,
  BlockClock,
  BlockTimeError,
} from "../../src/chain/block-clock.ts";

const header = (number: number, timestamp: number) => ({
  number,
  timestamp,
  hash: "0x01",
  parentHash: "0x00",
});

describe("Base Mainnet's clock", () => {
  const clock = BASE_MAINNET_CLOCK;

  it("activates Denim at the first 2 s block at or after its time, at whole seconds, as base/base computes it", () => {
    // ceil((1,793,901,600 - 1,686,789,347) / 2): Base's genesis is at an odd second, so the block lands a second after.
    expect(BASE_DENIM_BLOCK).toBe(53_556_127);
    expect(clock.timeOf(BASE_DENIM_BLOCK - 1)).toBe(BASE_DENIM_TIME - 1);
    expect(clock.msOf(BASE_DENIM_BLOCK)).toBe((BASE_DENIM_TIME + 1) * 1000);
    expect(clock.timeOf(0)).toBe(BASE_GENESIS_TIME);
  });

  it("gives five 200 ms blocks one header second after Denim, and a second more every five blocks", () => {
    const times = Array.from({ length: 11 }, (_, i) => clock.timeOf(BASE_DENIM_BLOCK + i));
    const t = BASE_DENIM_TIME + 1;
    expect(times).toEqual([t, t, t, t, t, t + 1, t + 1, t + 1, t + 1, t + 1, t + 2]);
    // A day after activation: 432,000 blocks of 200 ms.
    expect(clock.timeOf(BASE_DENIM_BLOCK + 432_000)).toBe(t + 86_400);
  });

  it("maps a time to the last block at or before it, on both sides of Denim", () => {
    for (const n of [1, BASE_DENIM_BLOCK - 2, BASE_DENIM_BLOCK - 1, BASE_DENIM_BLOCK, BASE_DENIM_BLOCK + 7]) {
      expect(clock.blockAtMs(clock.msOf(n))).toBe(n);
      expect(clock.blockAtMs(clock.msOf(n + 1) - 1)).toBe(n);
    }
    // Denim's activation instant itself falls in the last 2 s block's time.
    expect(clock.blockAtMs(BASE_DENIM_TIME * 1000)).toBe(BASE_DENIM_BLOCK - 1);
  });

  it("takes headers on both sides of Denim and refuses one a second off, or a 2 s block after it", () => {
    for (const n of [BASE_DENIM_BLOCK - 1, BASE_DENIM_BLOCK, BASE_DENIM_BLOCK + 4, BASE_DENIM_BLOCK + 5]) {
      expect(() => clock.checkHeader(header(n, clock.timeOf(n)))).not.toThrow();
      expect(() => clock.checkHeader(header(n, clock.timeOf(n) + 1))).toThrow(BlockTimeError);
    }
    // A chain still on 2 s past the activation is not Base Mainnet.
    const stale = BASE_DENIM_BLOCK + 10;
    expect(() => clock.checkHeader(header(stale, BASE_GENESIS_TIME + 2 * stale))).toThrow(
      /200 ms a block from block 53556127 gives .*is this RPC a Base chain/,
    );
    expect(() => clock.checkLogTime(stale, clock.timeOf(stale) - 1, "log 0x01 #0")).toThrow(/blockTimestamp/);
  });

  it("is picked from any block on Base Mainnet's schedule; a devnet's block keeps 2 s from itself", () => {
    const n = BASE_DENIM_BLOCK + 123_456;
    expect(BlockClock.anchored(n, clock.timeOf(n))).toBe(clock);
    expect(BlockClock.anchored(1_000, BASE_GENESIS_TIME + 2_000)).toBe(clock);
    const devnet = BlockClock.anchored(1_000, BASE_DENIM_TIME + 50_000);
    expect(devnet).not.toBe(clock);
    expect(devnet.timeOf(BASE_DENIM_BLOCK)).toBe(BASE_DENIM_TIME + 50_000 + 2 * (BASE_DENIM_BLOCK - 1_000));
  });

  it("says the same in SQL as in code", async () => {
    const { DuckDBInstance } = await import("@duckdb/node-api");
    const db = await (await DuckDBInstance.create(":memory:")).connect();
    const blocks = [
      0,
      5,
      BASE_DENIM_BLOCK - 1,
      BASE_DENIM_BLOCK,
      BASE_DENIM_BLOCK + 4,
      BASE_DENIM_BLOCK + 5,
      60_000_001,
    ];
    for (const c of [clock, new BlockClock(10, 1_800_000_000)]) {
      const reader = await db.runAndReadAll(
        `SELECT ${c.sqlTimeOf("b")}::BIGINT AS t FROM unnest([${blocks.join(",")}]::BIGINT[]) AS u(b)`,
      );
      expect(reader.getRowObjects().map((r) => Number(r.t))).toEqual(blocks.map((b) => c.timeOf(b)));
    }
    db.closeSync();
  });
});
