import { describe, expect, it } from "vitest";
import { WEEK_BLOCKS } from "../../src/chain/base.ts";
import { BASE_DENIM_BLOCK, BASE_MAINNET_CLOCK, BlockClock } from "../../src/chain/block-clock.ts";
import { parseCommandLine, UsageError } from "../../src/cli/args.ts";
import { indexerOptionsFrom, outageRetryMaxMs } from "../../src/cli/indexer.ts";
import { blocksIn } from "../../src/indexer/options.ts";

const options = (...flags: string[]) =>
  indexerOptionsFrom(parseCommandLine(["index", "--rpc", "http://127.0.0.1:8545", ...flags]).values, {
    follow: false,
  });

describe("index flags", () => {
  it("--funding-lookback: 26 weeks by default, 0 turns the history off, anything else is a usage mistake", () => {
    // Absent, the indexer reads half a year back, counted in the chain's blocks at the head when it starts
    // (26 weeks of 2 s blocks; ten times as many of Base's since Denim: test/indexer/denim.test.ts).
    expect(options().fundingLookback).toBeUndefined();
    const halfYear = 26 * 7 * 86_400;
    expect(blocksIn(new BlockClock(0, 1_700_000_000), 10_000_000, halfYear)).toBe(26 * WEEK_BLOCKS);
    expect(blocksIn(BASE_MAINNET_CLOCK, BASE_DENIM_BLOCK + 30 * WEEK_BLOCKS * 10, halfYear)).toBe(
      26 * WEEK_BLOCKS * 10,
    );
    // Three weeks after Denim: three weeks of 200 ms blocks and 23 of 2 s.
    expect(blocksIn(BASE_MAINNET_CLOCK, BASE_DENIM_BLOCK + 3 * WEEK_BLOCKS * 10, halfYear)).toBe(
      3 * WEEK_BLOCKS * 10 + 23 * WEEK_BLOCKS,
    );
    expect(options("--funding-lookback", "0").fundingLookback).toBe(0);
    expect(options("--funding-lookback", "43200").fundingLookback).toBe(43_200);
    for (const bad of ["-1", "8w", "1.5"]) {
      expect(() => options(`--funding-lookback=${bad}`), bad).toThrow(UsageError);
    }
  });

  it("--rpc-attempts sets the tries of one RPC request; --outage-retry-max takes seconds, decimals allowed", () => {
    expect(options().rpc.backoff).toBeUndefined();
    expect(options("--rpc-attempts", "2").rpc.backoff).toEqual({ attempts: 2 });
    for (const bad of ["0", "-1", "1.5", "x"]) {
      expect(() => options(`--rpc-attempts=${bad}`), bad).toThrow(UsageError);
    }
    const retryMax = (...flags: string[]) => outageRetryMaxMs(parseCommandLine(["serve", ...flags]).values);
    expect(retryMax()).toBeUndefined();
    expect(retryMax("--outage-retry-max", "60")).toBe(60_000);
    expect(retryMax("--outage-retry-max", "0.5")).toBe(500);
    for (const bad of ["0", "-1", "1m", ""]) {
      expect(() => retryMax(`--outage-retry-max=${bad}`), bad).toThrow(UsageError);
    }
  });
});
