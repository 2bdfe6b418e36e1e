/**
 * The payment channels' settings: the documented defaults, each variable read, and what cannot work refused
 * at start, naming the variable: a charge must be claimed before a payer's withdrawal can take it back.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_CHANNEL_SETTINGS } from "../../../src/merchant-kit/channels/settings.ts";
import { loadConfig } from "../../../src/services/config.ts";

const channels = (env: Record<string, string>) => loadConfig({ env }).channels;

describe("the payment channels' settings", () => {
  it("default to channels offered where the facilitator serves them, claimed within 6 h of a charge, a day's delay", () => {
    expect(channels({})).toEqual({
      mode: "auto",
      withdrawDelaySeconds: 86_400,
      maxUnclaimedSeconds: 21_600,
      maxUnclaimedUsd: "10",
      claimIntervalSeconds: 3_600,
      claimMaxGasGwei: 0.1,
      claimBatch: 25,
      settleIntervalSeconds: 86_400,
    });
    expect(DEFAULT_CHANNEL_SETTINGS).toEqual(channels({}));
  });

  it("reads each variable", () => {
    expect(
      channels({
        X402M_CHANNELS: "off",
        X402M_CHANNEL_WITHDRAW_DELAY_SECONDS: "900",
        X402M_CHANNEL_MAX_UNCLAIMED_SECONDS: "300",
        X402M_CHANNEL_MAX_UNCLAIMED_USD: "2.5",
        X402M_CHANNEL_CLAIM_INTERVAL_SECONDS: "120",
        X402M_CHANNEL_CLAIM_MAX_GAS_GWEI: "0.02",
        X402M_CHANNEL_CLAIM_BATCH: "10",
        X402M_CHANNEL_SETTLE_INTERVAL_SECONDS: "600",
      }),
    ).toEqual({
      mode: "off",
      withdrawDelaySeconds: 900,
      maxUnclaimedSeconds: 300,
      maxUnclaimedUsd: "2.5",
      claimIntervalSeconds: 120,
      claimMaxGasGwei: 0.02,
      claimBatch: 10,
      settleIntervalSeconds: 600,
    });
  });

  it.each([
    [{ X402M_CHANNELS: "on" }, /invalid X402M_CHANNELS: "auto" or "off"/],
    [
      { X402M_CHANNEL_WITHDRAW_DELAY_SECONDS: "600" },
      /invalid X402M_CHANNEL_WITHDRAW_DELAY_SECONDS: at least 900/,
    ],
    [{ X402M_CHANNEL_MAX_UNCLAIMED_USD: "$10" }, /invalid X402M_CHANNEL_MAX_UNCLAIMED_USD: dollars/],
    [{ X402M_CHANNEL_CLAIM_BATCH: "0" }, /invalid X402M_CHANNEL_CLAIM_BATCH: 1 to 100/],
    [{ X402M_CHANNEL_CLAIM_MAX_GAS_GWEI: "-1" }, /invalid X402M_CHANNEL_CLAIM_MAX_GAS_GWEI/],
    // A day's delay leaves 12 h, less the schedule's minute.
    [
      { X402M_CHANNEL_MAX_UNCLAIMED_SECONDS: "43200" },
      /invalid X402M_CHANNEL_MAX_UNCLAIMED_SECONDS: at most 43140 seconds: half the withdrawal delay/,
    ],
    [
      { X402M_CHANNEL_WITHDRAW_DELAY_SECONDS: "900" },
      /invalid X402M_CHANNEL_MAX_UNCLAIMED_SECONDS: at most 390 seconds/,
    ],
  ])("refuses %j", (env, message) => {
    expect(() => channels(env)).toThrow(message);
  });
});
