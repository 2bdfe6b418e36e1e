/**
 * What one look of the claim schedule claims, and why (schedule.ts says when each rule applies): decided
 * apart from the sending (claimer.ts), so the rules read on their own, against a clock and a gas price.
 */
import { parseUnits } from "viem";
import type { ChannelSettings } from "./settings.ts";
import type { OwedChannel } from "./storage.ts";

/** Why channels were claimed (`operator`: `channels claim` asked for it now). */
export type ClaimReason = "ceiling" | "interval" | "deadline" | "operator";

/** Channels to claim now, and why. */
export interface DueClaim {
  reason: ClaimReason;
  channels: readonly OwedChannel[];
}

/** What the rules weigh besides the channels owed. */
export interface DueRules {
  settings: ChannelSettings;
  /** `maxUnclaimedUsd` in the asset's atomic units. */
  ceiling: () => bigint;
  /** The gas price now, in wei: read only when nothing forces the claim. */
  gasPrice: () => Promise<bigint>;
  /** When the routine last claimed everything owed (ms). */
  lastClaimMs: number;
  now: number;
}

/**
 * The channels due now and why, or none. A claim nothing forced that waited for a lower gas price leaves
 * that price in `report`, even when a deadline claims some channels anyway.
 */
export async function dueClaim(
  owed: readonly OwedChannel[],
  rules: DueRules,
  report: { waitedForGas?: bigint },
): Promise<DueClaim | undefined> {
  const { settings, now } = rules;
  if (owed.length === 0) return undefined;
  const total = owed.reduce((sum, c) => sum + c.owed, 0n);
  if (total > rules.ceiling()) return { reason: "ceiling", channels: owed };
  const forced = owed.filter((c) => c.withdrawing || now - c.since >= settings.maxUnclaimedSeconds * 1000);
  if (now - rules.lastClaimMs >= settings.claimIntervalSeconds * 1000) {
    const price = await rules.gasPrice();
    if (price <= parseUnits(String(settings.claimMaxGasGwei), 9))
      return { reason: "interval", channels: owed };
    report.waitedForGas = price;
  }
  return forced.length > 0 ? { reason: "deadline", channels: forced } : undefined;
}
