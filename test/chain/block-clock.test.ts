import { describe, expect, it } from "vitest";
import { BASE_DENIM_TIME, BASE_GENESIS_TIME } from "../../src/chain/base.ts";
import { BlockClock, BlockTimeError } from "../../src/chain/block-clock.ts";

const header = (number: number, timestamp: number) => ({
  number,
  timestamp,
  hash: "0x01",
  parentHash: "0x00",
});

describe("Base's clock", () => {
  const clock = new BlockClock(0, BASE_GENESIS_TIME);
  // The last block of 2 s before Denim, and one of Base Mainnet's 200 ms blocks a day after it.
  const last = Math.floor((BASE_DENIM_TIME - 1 - BASE_GENESIS_TIME) / 2);
  const dayAfter = last + 1 + 86_400 * 5;

  it("takes a header on the 2 s rule, and refuses one off it as not Base", () => {
    expect(() => clock.checkHeader(header(last, clock.timeOf(last)))).not.toThrow();
    expect(() => clock.checkHeader(header(last, clock.timeOf(last) + 1))).toThrow(/is this RPC a Base chain/);
  });

  it("names Base's Denim upgrade for a header of its 200 ms blocks, and what to do", () => {
    const denim = header(dayAfter, BASE_DENIM_TIME + 86_400);
    expect(() => clock.checkHeader(denim)).toThrow(BlockTimeError);
    expect(() => clock.checkHeader(denim)).toThrow(
      /200 ms since the Denim upgrade \(2026-11-05T18:00:00.000Z\).*--to-block/,
    );
  });
});
