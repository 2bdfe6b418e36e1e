/**
 * What the chain says about a channel action's transaction, and what /settle answers from its row. As for
 * the authorizations (outcome.ts, conclude.ts): a transaction is only ever looked at, never sent again; the
 * one request or pass that records a mined transaction counts its gas and ends its key's reservation.
 */
import type { Network, SettleResponse } from "@x402/core/types";
import {
  type Chain,
  type Hex,
  type PublicClient,
  parseEventLogs,
  type TransactionReceipt,
  type Transport,
} from "viem";
import { X402_BATCH_SETTLEMENT_ADDRESS } from "../../chain/base.ts";
import { batchSettlementAbi } from "../../chain/batch-settlement.ts";
import { pollReceipt } from "../../chain/receipt.ts";
import type { Database } from "../../common/db/index.ts";
import { log } from "../../common/log.ts";
import type { AuthorizationKey } from "../authorization.ts";
import {
  SETTLEMENT_DROPPED,
  SETTLEMENT_IN_PROGRESS,
  SETTLEMENT_PENDING,
  UNEXPECTED_SETTLE_ERROR,
} from "../error-codes.ts";
import { knownTransaction, receiptCost } from "../outcome.ts";
import { INVALID_TRANSACTION_STATE, settleFailure } from "../settle-answer.ts";
import type { SettlementGas } from "../settlement-gas.ts";
import { type ActionRow, findAction, markActionFailed, markActionSettled } from "./ledger.ts";
import type { ChannelActionPayload } from "./payloads.ts";
import { readChannelState } from "./state.ts";

export interface ActionContext {
  client: PublicClient<Transport, Chain>;
  /** The facilitator's account, whose nonce tells a dropped transaction. */
  signer: `0x${string}`;
  network: Network;
  db: Database;
  gas: SettlementGas;
  pollingIntervalMs: number;
}

export type ActionOutcome =
  | { status: "mined"; receipt: TransactionReceipt }
  | { status: "pending" }
  /** Unknown to the node and its nonce taken by another of ours: it never happened. */
  | { status: "dropped" };

/** Where a keyed action's gas is reserved and charged: its token, its receiver, its id. */
export function actionKey(row: Pick<ActionRow, "network" | "token" | "receiver" | "id">): AuthorizationKey {
  return {
    network: row.network,
    asset: row.token.toLowerCase(),
    payer: row.receiver.toLowerCase(),
    nonce: row.id,
  };
}

/** Waits up to `waitMs` for the receipt of a pending action; an RPC that cannot answer leaves it pending. */
export async function checkAction(
  ctx: ActionContext,
  row: ActionRow,
  waitMs: number,
): Promise<ActionOutcome> {
  const hash = row.tx_hash as Hex;
  try {
    const receipt = await pollReceipt(ctx.client, hash, waitMs, ctx.pollingIntervalMs);
    if (receipt) return { status: "mined", receipt };
    if (await knownTransaction(ctx.client, hash)) return { status: "pending" };
    const mined = await ctx.client.getTransactionCount({ address: ctx.signer, blockTag: "latest" });
    return BigInt(mined) > BigInt(row.tx_nonce ?? 0n) ? { status: "dropped" } : { status: "pending" };
  } catch (error) {
    log("warn", "cannot check a pending channel action", { hash, error });
    return { status: "pending" };
  }
}

/** Records what the chain decided about a pending action, and answers from its row. */
export async function concludeAction(
  ctx: ActionContext,
  row: ActionRow,
  outcome: ActionOutcome,
): Promise<SettleResponse> {
  const hash = row.tx_hash as string;
  const key = actionKey(row);
  if (outcome.status === "mined") {
    const { receipt } = outcome;
    const mined = { blockNumber: receipt.blockNumber, gasUsed: receipt.gasUsed, cost: receiptCost(receipt) };
    if (receipt.status === "success") {
      const response = await answerOfReceipt(ctx, row, receipt);
      if (await markActionSettled(ctx.db, row.id, hash, mined, response)) {
        ctx.gas.count(mined.cost, row.kind);
        await ctx.gas.chargeMined(key, hash);
        return response;
      }
    } else {
      const failure = {
        reason: INVALID_TRANSACTION_STATE,
        message: `transaction ${hash} reverted in block ${receipt.blockNumber}`,
      };
      if (await markActionFailed(ctx.db, row.id, hash, failure, mined)) {
        // Reverted on chain: its gas was paid all the same.
        ctx.gas.count(mined.cost, row.kind);
        await ctx.gas.chargeMined(key, hash);
      }
    }
  } else if (outcome.status === "dropped") {
    const failure = {
      reason: SETTLEMENT_DROPPED,
      message: `transaction ${hash} was never mined and can no longer be: the ${row.kind} did not happen`,
    };
    if (await markActionFailed(ctx.db, row.id, hash, failure)) await ctx.gas.release(key);
  }
  // Ours or a racing request's update: the row now holds the decision.
  const now = await findAction(ctx.db, row.id);
  return now
    ? answerOfRow(ctx.network, now)
    : settleFailure(ctx.network, UNEXPECTED_SETTLE_ERROR, "the action left the table");
}

/** What a request that finds the action decided, or being decided, is answered. */
export function answerOfRow(network: Network, row: ActionRow): SettleResponse {
  switch (row.state) {
    case "settled":
      return row.response ?? { success: true, transaction: row.tx_hash ?? "", network };
    case "pending":
      return settleFailure(
        network,
        SETTLEMENT_PENDING,
        `transaction ${row.tx_hash} is broadcast but not yet confirmed: settle again later for its outcome`,
        undefined,
        row.tx_hash ?? "",
      );
    case "submitting":
      return settleFailure(network, SETTLEMENT_IN_PROGRESS, `another request is sending this ${row.kind}`);
    case "failed":
    case "refused":
      return settleFailure(
        network,
        row.error_reason ?? UNEXPECTED_SETTLE_ERROR,
        row.error_message ?? undefined,
        undefined,
        row.block_number !== null && row.tx_hash ? row.tx_hash : "",
      );
  }
}

/**
 * The spec's answer for a mined action the SDK did not answer itself (decided after its request): a claim
 * moves nothing (`amount: ""`), a settle says what it swept, a refund what it returned and the channel's
 * state after it.
 */
async function answerOfReceipt(
  ctx: ActionContext,
  row: ActionRow,
  receipt: TransactionReceipt,
): Promise<SettleResponse> {
  const hash = receipt.transactionHash;
  const escrowLogs = receipt.logs.filter(
    (l) => l.address.toLowerCase() === X402_BATCH_SETTLEMENT_ADDRESS.toLowerCase(),
  );
  const events = parseEventLogs({ abi: batchSettlementAbi, logs: escrowLogs });
  const base = { success: true as const, transaction: hash, network: ctx.network };
  if (row.kind === "claim") return { ...base, amount: "" };
  if (row.kind === "settle") {
    const swept = events.find((e) => e.eventName === "Settled");
    return { ...base, amount: swept?.eventName === "Settled" ? swept.args.amount.toString() : "0" };
  }
  const refund = row.payment_payload.payload as Extract<ChannelActionPayload, { type: "refund" }>;
  const refunded = events.find((e) => e.eventName === "Refunded");
  const answer = {
    ...base,
    payer: refund.channelConfig.payer,
    amount: refunded?.eventName === "Refunded" ? refunded.args.amount.toString() : "0",
  };
  try {
    return {
      ...answer,
      extra: { channelState: await readChannelState(ctx.client, refund.voucher.channelId) },
    };
  } catch {
    return answer;
  }
}
