/**
 * What an operator sees of a merchant's open payment channels (`x402-merchants channels list`, the channel
 * metrics, `/readyz`): per channel its balance, what was charged and claimed, the money charged and not yet
 * claimed, and how long until a withdrawal of it could complete.
 *
 * A charge is the merchant's only once claimed: the payer may start a timed withdrawal at any moment, which the
 * merchant may not see start (the mirror is refreshed by calls), and it completes the channel's withdrawal delay
 * later. So the unclaimed money of a channel is safe until `withdrawalEndsMs`: the mirrored withdrawal's end when
 * one is known, else the worst case, a withdrawal started unseen as its oldest unclaimed charge was made.
 */
import type { Database } from "../../common/db/index.ts";
import { CHECK_EVERY_SECONDS, type ChannelSettings } from "./settings.ts";

export interface OpenChannel {
  channel: string;
  receiver: string;
  payer: string;
  /** In the token's atomic units. */
  balance: bigint;
  charged: bigint;
  claimed: bigint;
  unclaimed: bigint;
  /** The channel's withdrawal delay, fixed when it was opened. */
  withdrawDelaySeconds: number;
  /** The payer's withdrawal is known to have started. */
  withdrawing: boolean;
  /** When a withdrawal could take the unclaimed money (unix ms), or null: nothing unclaimed, none started. */
  withdrawalEndsMs: number | null;
}

interface Row {
  channel_id: string;
  receiver: string;
  payer: string;
  delay: string | null;
  balance: string;
  charged: string;
  claimed: string;
  withdraw_requested_at: bigint;
  unclaimed_since_ms: bigint | null;
}

/** The open channels of `receivers` (lower-case wallets; every receiver's without), by receiver and channel. */
export async function openChannels(db: Database, receivers?: readonly string[]): Promise<OpenChannel[]> {
  const { rows } = await db.query<Row>(
    `SELECT channel_id, receiver, payer, config->>'withdrawDelay' AS delay, balance::text AS balance,
       charged::text AS charged, total_claimed::text AS claimed, withdraw_requested_at, unclaimed_since_ms
     FROM merchant_channels WHERE $1::text[] IS NULL OR receiver = ANY($1::text[])
     ORDER BY receiver, channel_id`,
    [receivers ? receivers.map((r) => r.toLowerCase()) : null],
  );
  return rows.map((row) => {
    const charged = BigInt(row.charged);
    const claimed = BigInt(row.claimed);
    const unclaimed = charged > claimed ? charged - claimed : 0n;
    const delayMs = Number(row.delay ?? 0) * 1000;
    const withdrawing = row.withdraw_requested_at > 0n;
    // The escrow's withdrawal start is a block timestamp, in seconds.
    const endsMs = withdrawing
      ? Number(row.withdraw_requested_at) * 1000 + delayMs
      : unclaimed > 0n && row.unclaimed_since_ms !== null
        ? Number(row.unclaimed_since_ms) + delayMs
        : null;
    return {
      channel: row.channel_id,
      receiver: row.receiver,
      payer: row.payer,
      balance: BigInt(row.balance),
      charged,
      claimed,
      unclaimed,
      withdrawDelaySeconds: delayMs / 1000,
      withdrawing,
      withdrawalEndsMs: endsMs,
    };
  });
}

/**
 * The channels whose unclaimed money is late: closer to a withdrawal's end than the margin the schedule keeps
 * (it claims a charge `maxUnclaimedSeconds` after it is made, so a withdrawal's end is then the delay less that
 * away), less two of its looks, so that a claim merely due this minute is not called late.
 */
export function lateChannels(
  channels: readonly OpenChannel[],
  settings: Pick<ChannelSettings, "maxUnclaimedSeconds">,
  now: number,
): OpenChannel[] {
  return channels.filter((c) => {
    if (c.unclaimed === 0n || c.withdrawalEndsMs === null) return false;
    const marginMs = (c.withdrawDelaySeconds - settings.maxUnclaimedSeconds - 2 * CHECK_EVERY_SECONDS) * 1000;
    return c.withdrawalEndsMs - now <= marginMs;
  });
}
