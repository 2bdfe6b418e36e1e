import { describe, expect, it } from "vitest";
import { WEEK_BLOCKS } from "../../src/chain/base.ts";
import { parseCommandLine, UsageError } from "../../src/cli/args.ts";
import { indexerOptionsFrom, outageRetryMaxMs } from "../../src/cli/indexer.ts";

const options = (...flags: string[]) =>
  indexerOptionsFrom(parseCommandLine(["index", "--rpc", "http://127.0.0.1:8545", ...flags]).values, {
    follow: false,
  });

describe("index flags", () => {
  it("--funding-lookback: 26 weeks by default, 0 turns the history off, anything else is a usage mistake", () => {
    // The oldest inflow read before the outflow it paid for: half a year of Base blocks.
    expect(options().fundingLookback).toBe(26 * WEEK_BLOCKS);
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
