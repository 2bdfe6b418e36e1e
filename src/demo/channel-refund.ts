/**
 * A channel session's end as the buyer plays it: a cooperative refund through the SDK client (x402
 * batch-settlement, "Cooperative refund flow"), in which the merchant claims what the vouchers charged and
 * returns the rest. Then the buyer's own check: what the escrow says was claimed of the channel in all must
 * be what the merchant charged its vouchers, or the session failed.
 */
import type { Hash } from "viem";
import { X402_BATCH_SETTLEMENT_ADDRESS } from "../chain/base.ts";
import { batchSettlementAbi } from "../chain/batch-settlement.ts";
import { REFUND_PATH } from "../merchant-kit/index.ts";
import type { Action } from "./plan-types.ts";
import type { SimChain } from "./sim-chain.ts";
import type { SimMerchant } from "./sim-merchants.ts";
import type { ChannelSession, SimWallets } from "./sim-wallets.ts";

export type RefundOutcome =
  /** Refunded; `claimed` is what the merchant took of the channel in all, its vouchers' charges. */
  | { refunded: { channel: string; claimed: bigint } }
  /** No channel to end: the session made no call through one in this process. */
  | { none: true }
  | { failed: { status: number; reason: string } };

/** Ends the session `action` names; never throws. */
export async function endSession(
  action: Extract<Action, { type: "refund" }>,
  merchant: SimMerchant,
  wallets: SimWallets,
  chain: SimChain,
): Promise<RefundOutcome> {
  const session = wallets.openChannel(action.from, merchant.id, action.session);
  wallets.endChannel(action.from, merchant.id, action.session);
  const channel = session?.storage.channelId;
  if (!session || !channel) return { none: true };
  return session.serial(() => refund(session, channel, merchant, chain));
}

/** The refund, after the session's calls, and the buyer's check of what was claimed. */
async function refund(
  session: ChannelSession,
  channel: `0x${string}`,
  merchant: SimMerchant,
  chain: SimChain,
): Promise<RefundOutcome> {
  const failed = (reason: string): RefundOutcome => ({ failed: { status: 0, reason } });
  try {
    const charged = BigInt((await session.storage.get(channel))?.chargedCumulativeAmount ?? 0);
    const answer = await session.client.refund(`${merchant.url}${REFUND_PATH}`);
    if (!answer.success) return failed(`refund refused: ${answer.errorReason ?? "no reason"}`);
    if (answer.transaction) await chain.confirmed(answer.transaction as Hash);
    const [, claimed] = await chain.client.readContract({
      address: X402_BATCH_SETTLEMENT_ADDRESS,
      abi: batchSettlementAbi,
      functionName: "channels",
      args: [channel],
    });
    if (claimed !== charged) {
      return failed(
        `channel ${channel}: the merchant claimed ${claimed}, its vouchers were charged ${charged}`,
      );
    }
    return { refunded: { channel, claimed } };
  } catch (error) {
    return failed((error as Error).message.split("\n")[0] ?? "error");
  }
}
