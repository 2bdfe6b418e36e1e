/**
 * How the merchant hosts run payment channels (the configuration's `channels`, docs/platform.md, "Payment
 * channels"): whether they offer them, the withdrawal delay they ask of buyers, and when they claim the
 * vouchers and sweep the claimed money to their wallets.
 */
import { z } from "zod";
import { type Env, PRIVATE_KEY, readKeySetting } from "../../config/values.ts";

/** How often the claim schedule looks at the channels (channels/schedule.ts): its deadlines' precision. */
export const CHECK_EVERY_SECONDS = 60;

/** The escrow's bounds on a channel's withdrawal delay (x402 spec: 15 minutes to 30 days). */
export const MIN_WITHDRAW_DELAY_SECONDS = 900;
export const MAX_WITHDRAW_DELAY_SECONDS = 30 * 24 * 60 * 60;

const seconds = (min: number) =>
  z.coerce.number().int(`whole seconds`).min(min, `at least ${min} seconds`).max(MAX_WITHDRAW_DELAY_SECONDS);

export const ChannelSettingsSchema = z
  .object({
    /**
     * `auto`: channels are offered where a catalogue offers them and the facilitator serves
     * `batch-settlement` with a receiver authorizer (its `/supported`); `off`: never offered (channels
     * already open are still claimed and settled).
     */
    mode: z.enum(["auto", "off"], { error: '"auto" or "off"' }),
    /** What the 402s ask of a channel: how long a payer's timed withdrawal takes. */
    withdrawDelaySeconds: seconds(MIN_WITHDRAW_DELAY_SECONDS),
    /** The longest a charge stays unclaimed, whatever gas costs. */
    maxUnclaimedSeconds: seconds(CHECK_EVERY_SECONDS),
    /** The most money (dollars) charged and unclaimed across a wallet's channels before they are all claimed. */
    maxUnclaimedUsd: z.string().regex(/^\d+(\.\d{1,6})?$/, "dollars, such as 10 or 2.5"),
    /** How often the channels are claimed when nothing forces it (and gas is below the ceiling). */
    claimIntervalSeconds: seconds(CHECK_EVERY_SECONDS),
    /** The gas price (gwei) above which a claim nothing forces waits. */
    claimMaxGasGwei: z.coerce.number().min(0, "gwei, 0 or more").max(10_000),
    /** Channels claimed in one transaction (a claim of more is sent in several). */
    claimBatch: z.coerce.number().int().min(1, "1 to 100").max(100, "1 to 100"),
    /** How often claimed money is swept from the escrow to the wallet. */
    settleIntervalSeconds: seconds(CHECK_EVERY_SECONDS),
  })
  .superRefine((s, ctx) => {
    // A payer's withdrawal completes `withdrawDelaySeconds` after it starts, and the merchant may not see it
    // start (a payer who stops calling). A charge claimed within half the delay is claimed before any
    // withdrawal started after it can complete, with the other half for a facilitator or chain outage.
    if (s.maxUnclaimedSeconds + CHECK_EVERY_SECONDS > s.withdrawDelaySeconds / 2) {
      ctx.addIssue({
        code: "custom",
        path: ["maxUnclaimedSeconds"],
        message: `at most ${s.withdrawDelaySeconds / 2 - CHECK_EVERY_SECONDS} seconds: half the withdrawal delay (${s.withdrawDelaySeconds} s), less the schedule's minute, so that every charge is claimed before a payer's withdrawal can take it back`,
      });
    }
  });

export type ChannelSettings = z.infer<typeof ChannelSettingsSchema>;

/** The environment variable of each setting, and its default. */
const VARIABLES: Record<keyof ChannelSettings, readonly [string, string]> = {
  mode: ["X402M_CHANNELS", "auto"],
  withdrawDelaySeconds: ["X402M_CHANNEL_WITHDRAW_DELAY_SECONDS", "86400"],
  maxUnclaimedSeconds: ["X402M_CHANNEL_MAX_UNCLAIMED_SECONDS", "21600"],
  maxUnclaimedUsd: ["X402M_CHANNEL_MAX_UNCLAIMED_USD", "10"],
  claimIntervalSeconds: ["X402M_CHANNEL_CLAIM_INTERVAL_SECONDS", "3600"],
  claimMaxGasGwei: ["X402M_CHANNEL_CLAIM_MAX_GAS_GWEI", "0.1"],
  claimBatch: ["X402M_CHANNEL_CLAIM_BATCH", "25"],
  settleIntervalSeconds: ["X402M_CHANNEL_SETTLE_INTERVAL_SECONDS", "86400"],
};

/** The channel settings' raw values, from the environment. */
export function readChannels(env: Env): Record<keyof ChannelSettings, string> {
  return Object.fromEntries(
    Object.entries(VARIABLES).map(([field, [name, fallback]]) => [field, env[name] || fallback]),
  ) as Record<keyof ChannelSettings, string>;
}

/** The environment variable behind a path in `channels`. */
export function channelsSetting([field]: readonly string[]): string | undefined {
  return VARIABLES[field as keyof ChannelSettings]?.[0];
}

/** The defaults, as `loadConfig` gives them without any variable set (tests build apps from them). */
export const DEFAULT_CHANNEL_SETTINGS: ChannelSettings = ChannelSettingsSchema.parse(readChannels({}));

/** A private key as the settings take it: 32 bytes in hex, 0x-prefixed. */
export const AUTHORIZER_KEY = PRIVATE_KEY;

/**
 * A merchant host's own channel authorizer key (docs/platform.md, "A merchant's own authorizer key"):
 * `<prefix>CHANNEL_AUTHORIZER_KEY` or its `_FILE` (`readKeySetting`); else its source host's
 * (`fallbackPrefix`: an alias host shares its source's wallet, and so its channels).
 */
export function readAuthorizerKey(env: Env, prefix: string, fallbackPrefix?: string): string | null {
  const name = "CHANNEL_AUTHORIZER_KEY";
  return readKeySetting(env, `${prefix}${name}`, fallbackPrefix && `${fallbackPrefix}${name}`);
}
