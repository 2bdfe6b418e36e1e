/**
 * batch-settlement's receiver actions through the SDK's `BatchSettlementEvmScheme`: a voucher (or a refund
 * before the server completes it) is verified and nothing else; a claim (`claimWithSignature`), a settle
 * (`settle(receiver, token)`) and a refund (`refundWithSignature`, with its claim in one `multicall`) are sent
 * once each, under the same rules as a payer's authorization:
 *
 * - the payee: every channel it touches is `paymentRequirements.payTo`'s (wire.ts), the payee the
 *   access gate admitted;
 * - this facilitator signs as the channels' receiverAuthorizer only for a caller that may act for the
 *   receiver (`mayAuthorize`: a keyed HTTP caller whose key names it, or this process's own merchants);
 * - a keyed caller's gas is reserved against its key's day before signing and charged from the receipt;
 * - the action's row (ledger.ts) holds the hash before broadcast: of concurrent identical requests
 *   one sends and the others share its answer or find it in the row; a retry is answered what the first
 *   was; a receipt that does not come in time is "pending", looked at later, never sent again.
 */
import type { x402Facilitator } from "@x402/core/facilitator";
import type { SettleResponse, VerifyResponse } from "@x402/core/types";
import type { Chain, PublicClient, Transport } from "viem";
import { X402_BATCH_SETTLEMENT_ADDRESS } from "../../chain/base.ts";
import { batchSettlementAbi } from "../../chain/batch-settlement.ts";
import type { Database } from "../../common/db/index.ts";
import { log } from "../../common/log.ts";
import { sleep } from "../../common/sleep.ts";
import type { GasBudgets, Grant } from "../access/index.ts";
import { withSubject } from "../call-subject.ts";
import {
  AUTHORIZER_KEY_REQUIRED,
  SETTLEMENT_PENDING,
  UNEXPECTED_SETTLE_ERROR,
  UNEXPECTED_VERIFY_ERROR,
} from "../error-codes.ts";
import { InFlight } from "../inflight.ts";
import type { ResolveSummary } from "../resolve-pending.ts";
import { settleFailure } from "../settle-answer.ts";
import { STALE_CLAIM_SECONDS } from "../settle-context.ts";
import { unsentFailure } from "../settle-failures.ts";
import { SettlementGas } from "../settlement-gas.ts";
import type { Scope } from "../wire.ts";
import {
  claimAction,
  findAction,
  listUnresolvedActions,
  markActionSettled,
  releaseAction,
  releaseStaleAction,
} from "./ledger.ts";
import { type ActionContext, actionKey, answerOfRow, checkAction, concludeAction } from "./outcome.ts";
import { actionId, type ChannelAction, checkChannelAction } from "./wire.ts";

/**
 * Who asks: over HTTP (admitted by the gate), over HTTP from this machine admitted as a receiverAuthorizer
 * by the devnet's `loopbackAuthority` (access/gate.ts), or code of this process.
 */
export type Origin = "http" | "loopback" | "in-process";

export interface ChannelActionsOptions {
  db: Database;
  sdk: x402Facilitator;
  client: PublicClient<Transport, Chain>;
  signer: `0x${string}`;
  scope: Scope;
  confirmationTimeoutMs: number;
  pollingIntervalMs: number;
  /** Receipts the SDK waited for, by lower-case hash (filled by the signer). */
  receiptBlocks: Map<string, { block: bigint; cost: bigint; gasUsed: bigint }>;
  budgets: GasBudgets;
  /** Whether this facilitator may sign as `receiver`'s authorizer for this caller. */
  mayAuthorize(receiver: string, grant: Grant | undefined, origin: Origin): boolean;
}

export interface ChannelActions {
  verify(payload: unknown, requirements: unknown): Promise<VerifyResponse>;
  settle(payload: unknown, requirements: unknown, grant?: Grant, origin?: Origin): Promise<SettleResponse>;
  resolvePending(): Promise<ResolveSummary>;
  drain(): Promise<void>;
}

interface Ctx extends ActionContext, ChannelActionsOptions {
  inflight: InFlight;
}

/** How often a request waiting for another process's send looks at the row again. */
const CLAIM_POLL_MS = 100;
/** Rows looked at per periodic pass. */
const RESOLVE_BATCH = 100;

export function createChannelActions(options: ChannelActionsOptions): ChannelActions {
  const ctx: Ctx = {
    ...options,
    network: options.scope.network,
    gas: new SettlementGas(options.budgets, options.client),
    inflight: new InFlight(),
  };
  const { network } = ctx;
  return {
    async verify(payload, requirements) {
      const checked = checkChannelAction(payload, requirements, ctx.scope, "verify");
      if (!checked.ok)
        return { isValid: false, invalidReason: checked.reason, invalidMessage: checked.message };
      try {
        return await ctx.sdk.verify(checked.action.payload, checked.action.requirements);
      } catch (error) {
        log("error", "verification threw", { error });
        return {
          isValid: false,
          invalidReason: UNEXPECTED_VERIFY_ERROR,
          invalidMessage: (error as Error)?.message,
        };
      }
    },

    async settle(payload, requirements, grant, origin = "in-process") {
      const checked = checkChannelAction(payload, requirements, ctx.scope, "settle");
      if (!checked.ok) return settleFailure(network, checked.reason, checked.message);
      const { action } = checked;
      if (action.needsAuthorizer && !ctx.mayAuthorize(action.receiver, grant, origin)) {
        return settleFailure(
          network,
          AUTHORIZER_KEY_REQUIRED,
          `this facilitator signs ${action.action.type}s as the receiverAuthorizer only for ${action.receiver}'s own key or merchants: send the receiverAuthorizer's signature, or an API key that names the receiver (docs/facilitator.md)`,
        );
      }
      let identity = action.identity;
      if (action.action.type === "settle") {
        // A sweep is the same action until more is claimed: keyed by the total it sweeps up to.
        const total = await claimedTotal(ctx, action).catch(() => undefined);
        if (total === undefined)
          return settleFailure(
            network,
            UNEXPECTED_SETTLE_ERROR,
            "the receiver's claimed total could not be read",
          );
        identity = [...identity, total.toString()];
      }
      const id = actionId(action.action.type, identity);
      const { answered } = await ctx.inflight.share(id, id, () => settleAction(ctx, id, action, grant));
      return answered;
    },

    resolvePending: () => resolveActions(ctx),

    drain: () => ctx.inflight.drain(),
  };
}

/** Takes the action and sends it, or answers what its row says once another request decided it. */
async function settleAction(
  ctx: Ctx,
  id: string,
  action: ChannelAction,
  grant: Grant | undefined,
): Promise<SettleResponse> {
  const deadline = Date.now() + ctx.confirmationTimeoutMs;
  for (;;) {
    if (await claimAction(ctx.db, id, action, grant?.keyId ?? null, STALE_CLAIM_SECONDS)) {
      return send(ctx, id, action, grant);
    }
    const row = await findAction(ctx.db, id);
    if (!row) continue;
    switch (row.state) {
      case "settled":
        return answerOfRow(ctx.network, row);
      case "pending":
        return concludeAction(ctx, row, await checkAction(ctx, row, Math.max(0, deadline - Date.now())));
      case "submitting":
        if (Date.now() > deadline) return answerOfRow(ctx.network, row);
        await sleep(CLAIM_POLL_MS);
        break;
      default:
        break; // refused or failed since: it may be taken again
    }
  }
}

/** The SDK simulates and sends through our signer (the hash is recorded before broadcast), then waits. */
async function send(
  ctx: Ctx,
  id: string,
  action: ChannelAction,
  grant: Grant | undefined,
): Promise<SettleResponse> {
  const { db, network } = ctx;
  const key = actionKey({ network, token: action.token, receiver: action.receiver, id });
  const keyed = grant
    ? ctx.budgets.begin(key, grant, action.action.type as "claim" | "settle" | "refund")
    : undefined;
  let result: SettleResponse;
  try {
    result = await withSubject({ kind: "action", id, key }, () =>
      ctx.sdk.settle(action.payload, action.requirements),
    );
  } catch (error) {
    log("error", "a channel action threw", { error });
    result = settleFailure(network, UNEXPECTED_SETTLE_ERROR, (error as Error)?.message);
  } finally {
    if (keyed) ctx.budgets.end(key);
  }
  const row = await findAction(db, id);
  if (!row) return settleFailure(network, UNEXPECTED_SETTLE_ERROR, "the action left the table");
  if (row.state === "submitting") {
    // Nothing was broadcast (refused before signing, or by the node): it may be asked again.
    if (keyed && keyed.reserved > 0n) await ctx.gas.release(key);
    const { reason, message } = unsentFailure(result, keyed?.refusal, undefined);
    await releaseAction(db, id, reason, message);
    return settleFailure(network, reason, message);
  }
  if (row.state !== "pending" || !row.tx_hash) return answerOfRow(network, row);
  const hash = row.tx_hash.toLowerCase();
  const receipt = ctx.receiptBlocks.get(hash);
  ctx.receiptBlocks.delete(hash);
  if (result.success && receipt && result.transaction.toLowerCase() === hash) {
    const mined = { blockNumber: receipt.block, gasUsed: receipt.gasUsed, cost: receipt.cost };
    if (await markActionSettled(db, id, hash, mined, result)) {
      ctx.gas.count(receipt.cost, row.kind);
      if (keyed && keyed.reserved > 0n) await ctx.gas.charge(key, receipt.cost, hash);
      return result;
    }
  }
  if (!result.success && result.errorReason === SETTLEMENT_PENDING) return answerOfRow(network, row);
  // Any other answer about a broadcast transaction: the chain, not the SDK's reading, decides.
  return concludeAction(ctx, row, await checkAction(ctx, row, 0));
}

/** What the receiver has claimed in the token so far: a settle sweeps up to it. */
async function claimedTotal(ctx: Ctx, action: ChannelAction): Promise<bigint> {
  const [totalClaimed] = (await ctx.client.readContract({
    address: X402_BATCH_SETTLEMENT_ADDRESS,
    abi: batchSettlementAbi,
    functionName: "receivers",
    args: [action.receiver, action.token],
  })) as readonly [bigint, bigint];
  return totalClaimed;
}

/** The periodic pass: pending actions looked at on chain once; actions abandoned before signing released. */
async function resolveActions(ctx: Ctx): Promise<ResolveSummary> {
  const rows = await listUnresolvedActions(ctx.db, ctx.network, RESOLVE_BATCH);
  let resolved = 0;
  for (const row of rows) {
    if (ctx.inflight.has(row.id)) continue;
    if (row.state === "submitting") {
      if (await releaseStaleAction(ctx.db, row.id, STALE_CLAIM_SECONDS)) {
        await ctx.gas.release(actionKey(row));
        resolved++;
      }
      continue;
    }
    const answered = await concludeAction(ctx, row, await checkAction(ctx, row, 0));
    if (answered.errorReason !== SETTLEMENT_PENDING) resolved++;
  }
  return { checked: rows.length, resolved };
}
