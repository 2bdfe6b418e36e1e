/**
 * A batch-settlement channel's state on chain, as the spec's answers carry it (`extra.channelState` of a
 * deposit's or a refund's /settle): the SDK's server mirrors it into its channel record.
 */
import type { SettleResponse } from "@x402/core/types";
import type { Chain, PublicClient, Transport } from "viem";
import { X402_BATCH_SETTLEMENT_ADDRESS } from "../../chain/base.ts";
import { batchSettlementAbi } from "../../chain/batch-settlement.ts";
import { log } from "../../common/log.ts";
import type { CheckedPayment } from "../authorization.ts";

export interface ChannelState {
  channelId: `0x${string}`;
  balance: string;
  totalClaimed: string;
  withdrawRequestedAt: number;
  refundNonce: string;
}

export async function readChannelState(
  client: PublicClient<Transport, Chain>,
  channelId: `0x${string}`,
): Promise<ChannelState> {
  const read = <T>(functionName: "channels" | "pendingWithdrawals" | "refundNonce") =>
    client.readContract({
      address: X402_BATCH_SETTLEMENT_ADDRESS,
      abi: batchSettlementAbi,
      functionName,
      args: [channelId],
    }) as Promise<T>;
  const [[balance, totalClaimed], [, initiatedAt], refundNonce] = await Promise.all([
    read<readonly [bigint, bigint]>("channels"),
    read<readonly [bigint, number]>("pendingWithdrawals"),
    read<bigint>("refundNonce"),
  ]);
  return {
    channelId,
    balance: balance.toString(),
    totalClaimed: totalClaimed.toString(),
    withdrawRequestedAt: Number(initiatedAt),
    refundNonce: refundNonce.toString(),
  };
}

/**
 * A deposit's success answered without the state the SDK read after its receipt (a retry, a settlement
 * decided after its request), with the channel's state read now. Without it the answer stands: the server
 * then keeps the state it had, as the SDK's own facilitator leaves it when its read fails.
 */
export async function withChannelState(
  ctx: { client: PublicClient<Transport, Chain> },
  payment: CheckedPayment,
  answered: SettleResponse,
): Promise<SettleResponse> {
  if (!answered.success || answered.extra || payment.signed.method !== "deposit") return answered;
  try {
    const channelState = await readChannelState(ctx.client, payment.signed.payload.voucher.channelId);
    return { ...answered, extra: { channelState } };
  } catch (error) {
    log("warn", "a channel's state could not be read for a deposit's answer", { error });
    return answered;
  }
}
