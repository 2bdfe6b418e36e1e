import { describe, expect, it } from "vitest";
import { WEEK_BLOCKS } from "../../src/chain/base.ts";
import { BASE_DENIM_BLOCK, BASE_MAINNET_CLOCK, BlockClock, clockOf } from "../../src/chain/block-clock.ts";
import { type ChainRecord, chainBySlug } from "../../src/chain/chains.ts";
import { FacilitatorRegistry } from "../../src/chain/facilitators.ts";
import { parseCommandLine, UsageError } from "../../src/cli/args.ts";
import { indexerOptionsFrom, outageRetryMaxMs } from "../../src/cli/indexer.ts";
import { blocksIn } from "../../src/indexer/options.ts";

const options = (...flags: string[]) =>
  indexerOptionsFrom(parseCommandLine(["index", "--rpc", "http://127.0.0.1:8545", ...flags]).values, {
    follow: false,
  });

describe("index flags", () => {
  it("--chain names a chain of the registry (Base by default), whose facilitator list the run reads", () => {
    expect(options().chain?.slug).toBe("base");
    const polygon = options("--chain", "polygon");
    expect(polygon.chain?.chainId).toBe(137);
    expect(polygon.registry.earliestSince()).toBe(
      FacilitatorRegistry.forChain(polygon.chain as ChainRecord).earliestSince(),
    );
    expect(() => options("--chain", "solana")).toThrow(
      /--chain: unknown chain "solana" \(known: base, polygon, arbitrum\)/,
    );
  });

  it("a stamped chain's defaults given in time are estimated by its typical gap", () => {
    const arbitrum = clockOf(chainBySlug("arbitrum"), 1_000_000, 1_800_000_000);
    expect(blocksIn(arbitrum, 1_000_000, 128)).toBe(512);
    expect(arbitrum.stamped).toBe(true);
    expect(() => arbitrum.timeOfLog(5, undefined, "log")).toThrow(/no block time/);
    expect(arbitrum.timeOfLog(5, 1_800_000_001, "log")).toBe(1_800_000_001);
  });

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
