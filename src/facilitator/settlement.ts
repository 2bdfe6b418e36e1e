/**
 * POST /settle: settle an authorization that /verify accepted, at most once, whatever arrives.
 *
 * - Only a verified authorization is settled: its ledger row must exist with the same signed content.
 * - One transaction per authorization: the row is claimed by a conditional UPDATE (verified ->
 *   submitting) that exactly one request wins; identical concurrent requests in this process share that
 *   request's answer, and requests elsewhere wait for the row to move on.
 * - The transaction's hash is in the ledger before it is broadcast. A receipt that does not come within
 *   the confirmation timeout makes the answer "pending" (`settlement_pending` with the hash), never
 *   "failed"; pending rows are resolved later by looking at the chain (a later /settle of the same
 *   authorization, or the periodic check), never by sending again.
 * - One success per authorization: of all the /settle calls that find it settled (the one that settled
 *   it, identical concurrent ones, retries of a pending one, repeats), the first to claim its delivery
 *   gets `success` (the one that settled it claims it in the statement that records the settlement);
 *   every other gets `invalid_exact_evm_nonce_already_used`, as the official facilitator answers a used
 *   nonce. A stock resource server, which verifies and settles every
 *   request carrying the same payment, then delivers it once. A failure is answered to every caller.
 */
import type { x402Facilitator } from "@x402/core/facilitator";
import type { SettleResponse } from "@x402/core/types";
import type { Chain, PublicClient, Transport } from "viem";
import type { Database } from "../common/db/index.ts";
import { log } from "../common/log.ts";
import { facilitatorGasSpent } from "../common/metrics.ts";
import { sleep } from "../common/sleep.ts";
import type { GasBudgets, Grant, KeyedSettlement } from "./access/index.ts";
import { type AuthorizationKey, type CheckedPayment, keyString, signedOf, termsOf } from "./authorization.ts";
import {
  claim,
  claimDelivery,
  findAuthorization,
  keyOf,
  type LedgerRow,
  listUnresolved,
  markFailed,
  markSettled,
  markSettledWithoutTransfer,
  reclaimStale,
  release,
} from "./authorization-ledger.ts";
import type { BazaarOutcome } from "./bazaar.ts";
import type { ChainReads } from "./chain-reads.ts";
import {
  INSUFFICIENT_FUNDS,
  NONCE_ALREADY_USED,
  PAYMENT_NOT_VERIFIED,
  SETTLED_ELSEWHERE,
  SETTLEMENT_DROPPED,
  SETTLEMENT_IN_PROGRESS,
  SETTLEMENT_PENDING,
  UNEXPECTED_SETTLE_ERROR,
} from "./error-codes.ts";
import { balanceOf, fundsSuspected, lackOfFunds } from "./funds.ts";
import { type ChainOutcome, checkSettlement, receiptCost } from "./outcome.ts";
import { createPayerFunds } from "./payer-funds.ts";
import { checkPayment, type Scope } from "./wire.ts";

/** The spec's reason for a transaction that was mined but failed. */
const INVALID_TRANSACTION_STATE = "invalid_transaction_state";
/** A claim with no signed transaction after this long was abandoned by a process that died. */
const STALE_CLAIM_SECONDS = 120;
/** How often a request waiting for another process's claim looks at the row again. */
const CLAIM_POLL_MS = 100;
/** Pending rows looked at per periodic pass. */
const RESOLVE_BATCH = 100;

export interface SettlementOptions {
  db: Database;
  sdk: x402Facilitator;
  client: PublicClient<Transport, Chain>;
  /** The SDK signer's reads: the payer's code, which the SDK's re-verification reads twice, is held. */
  reads: ChainReads;
  /** The facilitator's account (for its nonce when deciding whether a transaction was dropped). */
  signer: `0x${string}`;
  scope: Scope;
  confirmationTimeoutMs: number;
  pollingIntervalMs: number;
  /** Block numbers and costs of receipts the SDK waited for, by lower-case hash (filled by the signer). */
  receiptBlocks: Map<string, { block: bigint; cost: bigint }>;
  /** Keyed settlements' gas: reserved before signing (by the signer's hook), charged from the receipt. */
  budgets: GasBudgets;
  /** Records the paid resource in the Bazaar; called once per settlement, when it becomes final. */
  recordInBazaar(
    row: Pick<LedgerRow, "payment_payload" | "payment_requirements">,
  ): Promise<BazaarOutcome | undefined>;
}

export interface ResolveSummary {
  /** Rows looked at. */
  checked: number;
  /** Rows that reached a final state (settled or failed) or were released. */
  resolved: number;
}

export interface Settlement {
  /** With a `grant`, the settlement's gas is reserved against the key's budget before it is signed. */
  settle(payload: unknown, requirements: unknown, grant?: Grant): Promise<SettleResponse>;
  /** Looks at every pending settlement on chain once and records the final ones. */
  resolvePending(): Promise<ResolveSummary>;
  /** Waits for the settlements under way. */
  drain(): Promise<void>;
}

export function createSettlement(options: SettlementOptions): Settlement {
  const { db, sdk, client, scope } = options;
  const network = scope.network;
  const inflight = new Map<string, { digest: string; result: Promise<SettleResponse> }>();
  // Answers whose success was claimed by the statement that recorded the settlement (one commit fewer
  // on every payment): for the request that settled it only, never for those sharing its answer.
  const deliveredWhenSettled = new WeakSet<SettleResponse>();
  const payerFunds = createPayerFunds();

  const failure = (reason: string, message?: string, payer?: string, transaction = ""): SettleResponse => ({
    success: false,
    errorReason: reason,
    ...(message ? { errorMessage: message } : {}),
    ...(payer ? { payer } : {}),
    transaction,
    network,
  });

  /** What a row says, for a request that finds it already decided (or being decided). */
  const answer = (row: LedgerRow, bazaar?: BazaarOutcome): SettleResponse => {
    const payer = payerOf(row);
    switch (row.state) {
      case "settled":
        return {
          success: true,
          payer,
          transaction: row.tx_hash ?? "",
          network,
          // upto says what it took, as the SDK's facilitator does.
          ...(row.payment_requirements.scheme === "upto" ? { amount: row.settled_amount ?? "0" } : {}),
          ...(bazaar ? { extensionResponses: { bazaar } } : {}),
        };
      case "pending":
        return failure(
          SETTLEMENT_PENDING,
          `transaction ${row.tx_hash} is broadcast but not yet confirmed: settle again later for its outcome`,
          payer,
          row.tx_hash ?? "",
        );
      case "failed":
        // The hash only when the transaction exists on chain (mined and reverted).
        return failure(
          row.error_reason ?? INVALID_TRANSACTION_STATE,
          row.error_message ?? undefined,
          payer,
          row.block_number !== null && row.tx_hash ? row.tx_hash : "",
        );
      case "submitting":
        return failure(SETTLEMENT_IN_PROGRESS, "another request is submitting this authorization", payer);
      case "verified":
        return failure(row.error_reason ?? UNEXPECTED_SETTLE_ERROR, row.error_message ?? undefined, payer);
    }
  };

  /** Records what the chain said about a pending row and answers accordingly. */
  const conclude = async (row: LedgerRow, outcome: ChainOutcome): Promise<SettleResponse> => {
    const key = keyOf(row);
    const hash = row.tx_hash as string;
    switch (outcome.status) {
      case "pending":
        return answer(row);
      case "settled": {
        const settled = await markSettled(db, key, hash, outcome.blockNumber);
        if (settled) {
          countGas(outcome.cost);
          await chargeMined(key, hash);
          return answer(settled, await options.recordInBazaar(settled));
        }
        break;
      }
      case "reverted":
        if (
          await markFailed(db, key, hash, {
            reason: INVALID_TRANSACTION_STATE,
            message: `transaction ${hash} was mined in block ${outcome.blockNumber} without transferring`,
            blockNumber: outcome.blockNumber,
          })
        ) {
          // Reverted on chain: its gas was paid all the same.
          countGas(outcome.cost);
          await chargeMined(key, hash);
        }
        break;
      case "dropped":
        if (
          await markFailed(db, key, hash, {
            reason: SETTLEMENT_DROPPED,
            message: `transaction ${hash} was never mined and can no longer be: the payment did not happen`,
          })
        ) {
          await accounting(() => options.budgets.release(key));
        }
        break;
      case "settled_elsewhere":
        if (
          await markFailed(db, key, hash, {
            reason: SETTLED_ELSEWHERE,
            message: "the authorization was used on chain by another transaction",
          })
        ) {
          await accounting(() => options.budgets.release(key));
        }
        break;
    }
    // Ours or a racing request's update: the row now holds the decision.
    const now = await findAuthorization(db, key);
    return now ? answer(now) : failure(PAYMENT_NOT_VERIFIED, "the authorization left the ledger");
  };

  /**
   * A keyed settlement decided after its request (pending): what its mined transaction cost becomes the
   * key's spent gas. One look at the reservations first: most settlements are not keyed.
   */
  const chargeMined = (key: AuthorizationKey, hash: string): Promise<void> =>
    accounting(async () => {
      if (!(await options.budgets.reserved(key))) return;
      const receipt = await client.getTransactionReceipt({ hash: hash as `0x${string}` });
      await options.budgets.charge(key, receiptCost(receipt), hash);
    });

  /**
   * The metrics' gas spent: counted where the ledger records a mined transaction (settled or reverted),
   * which happens once per transaction whichever request or pass records it.
   */
  const countGas = (cost: bigint): void => facilitatorGasSpent.inc(Number(cost));

  /**
   * A key's gas accounting after the fact never fails the settlement it follows: when it cannot be done
   * (the database or the RPC away), the reservation stays in the key's day, which then holds more than
   * was spent (the key gets less that day, never more), and the log says so.
   */
  const accounting = async (fn: () => Promise<void>): Promise<void> => {
    try {
      await fn();
    } catch (error) {
      log("warn", "a key's gas reservation could not be ended; it stays reserved for the day", { error });
    }
  };

  const look = async (row: LedgerRow, waitMs: number): Promise<ChainOutcome> => {
    const signed = signedOf(row.payment_payload);
    try {
      return await checkSettlement(
        client,
        options.signer,
        {
          method: signed.method,
          hash: row.tx_hash as `0x${string}`,
          txNonce: row.tx_nonce ?? 0n,
          asset: row.asset as `0x${string}`,
          payer: row.payer as `0x${string}`,
          nonce: termsOf(signed).nonce,
        },
        { waitMs, pollingIntervalMs: options.pollingIntervalMs },
      );
    } catch (error) {
      // The chain could not be asked (RPC down): the outcome stays open.
      // The first line only: an RPC error's further lines repeat the request (the authorization's terms).
      log("warn", "cannot check a pending settlement", { hash: row.tx_hash, error });
      return { status: "pending" };
    }
  };

  /**
   * The claimed submission, once the payer's other settlements in flight leave it the money: broadcast
   * against money they claim, it would revert on chain at the facilitator's cost (payer-funds.ts).
   */
  const submit = async (payment: CheckedPayment, grant: Grant | undefined): Promise<SettleResponse> => {
    const { lacking, leave } = await payerFunds.enter(
      { asset: payment.requirements.asset, payer: payment.terms.payer },
      BigInt(payment.requirements.amount),
      () => balanceOf(client, payment),
    );
    try {
      if (lacking === undefined) return await submitClaimed(payment, grant);
      await release(db, payment.key, INSUFFICIENT_FUNDS, lacking);
      return failure(INSUFFICIENT_FUNDS, lacking, payment.terms.payer);
    } finally {
      leave();
    }
  };

  /** The SDK re-verifies, signs through our signer (hash recorded), waits. */
  const submitClaimed = async (
    payment: CheckedPayment,
    grant: Grant | undefined,
  ): Promise<SettleResponse> => {
    let result: SettleResponse;
    // The SDK re-verifies first (no simulation at settle: the gas estimate is one) and reads the payer's
    // code twice doing so: once is enough.
    const hold = options.reads.hold({ code: [payment.terms.payer] });
    const keyed: KeyedSettlement | undefined = grant ? options.budgets.begin(payment.key, grant) : undefined;
    try {
      result = await sdk.settle(payment.payload, payment.requirements);
    } catch (error) {
      // The first line only: a viem error's further lines can carry the call's arguments (the signature).
      log("error", "settlement threw", { error });
      result = failure(UNEXPECTED_SETTLE_ERROR, (error as Error)?.message);
    } finally {
      hold.release();
      if (keyed) options.budgets.end(payment.key);
    }
    if (result.success && !result.transaction && BigInt(payment.requirements.amount) === 0n) {
      // upto with nothing to take: the SDK sent nothing. The authorization is spent all the same.
      const settled = await markSettledWithoutTransfer(db, payment.key);
      if (settled) return answer(settled, await options.recordInBazaar(settled));
    } else if (result.success) {
      // The usual case in one statement: the row is settled only if it is pending with this very
      // transaction (what reading it first would have checked), and the update answers with the row.
      const hash = result.transaction.toLowerCase();
      const receipt = options.receiptBlocks.get(hash);
      options.receiptBlocks.delete(hash);
      const settled = await markSettled(db, payment.key, hash, receipt?.block ?? null, true);
      if (settled) {
        // The SDK waited for this receipt (`onReceipt`); read again only if it somehow did not.
        if (receipt) countGas(receipt.cost);
        else
          await client
            .getTransactionReceipt({ hash: hash as `0x${string}` })
            .then((mined) => countGas(receiptCost(mined)))
            .catch((error: unknown) => log("warn", "a settlement's gas could not be read", { hash, error }));
        if (keyed && keyed.reserved > 0n) {
          const cost = receipt?.cost;
          if (cost !== undefined) await accounting(() => options.budgets.charge(payment.key, cost, hash));
          else await chargeMined(payment.key, hash);
        }
        const response = answer(settled, await options.recordInBazaar(settled));
        deliveredWhenSettled.add(response);
        return response;
      }
    }
    const row = await findAuthorization(db, payment.key);
    if (!row) return failure(PAYMENT_NOT_VERIFIED, "the authorization left the ledger");
    if (row.tx_hash) options.receiptBlocks.delete(row.tx_hash);
    if (row.state === "submitting") {
      // Nothing was broadcast (refused before signing, or by the node): the authorization stays usable.
      // Funds moved away since /verify are said as the spec says it; a key over its budget, as the gate.
      if (keyed && keyed.reserved > 0n) await accounting(() => options.budgets.release(payment.key));
      const refusal = keyed?.refusal;
      const lacking =
        !refusal && fundsSuspected(result.errorReason) ? await lackOfFunds(client, payment) : undefined;
      const reason =
        refusal?.reason ?? (lacking ? INSUFFICIENT_FUNDS : (result.errorReason ?? UNEXPECTED_SETTLE_ERROR));
      const message = refusal?.message ?? lacking ?? result.errorMessage;
      await release(db, payment.key, reason, message);
      return failure(reason, message, payerOf(row));
    }
    if (row.state !== "pending" || !row.tx_hash) return answer(row);
    if (!result.success && result.errorReason === SETTLEMENT_PENDING) return answer(row);
    // Any other answer about a broadcast transaction: the chain, not the SDK's reading, decides.
    return conclude(row, await look(row, 0));
  };

  const settleVerified = async (
    payment: CheckedPayment,
    grant: Grant | undefined,
  ): Promise<SettleResponse> => {
    const payer = payment.terms.payer;
    const amount = BigInt(payment.requirements.amount);
    const deadline = Date.now() + options.confirmationTimeoutMs;
    // The usual case first, in one statement: the row is verified with this very content. The claim's
    // condition is the one the loop below checks after reading the row.
    if (await claim(db, payment.key, payment.digest, amount)) return submit(payment, grant);
    for (;;) {
      const row = await findAuthorization(db, payment.key);
      if (!row || row.digest !== payment.digest) {
        return failure(
          PAYMENT_NOT_VERIFIED,
          "settle only what /verify accepted: verify this payment first",
          payer,
        );
      }
      switch (row.state) {
        case "verified":
          if (await claim(db, payment.key, payment.digest, amount)) return submit(payment, grant);
          break; // another request claimed it first: look again
        case "submitting":
          if (await reclaimStale(db, payment.key, STALE_CLAIM_SECONDS)) return submit(payment, grant);
          if (Date.now() > deadline) return answer(row);
          await sleep(CLAIM_POLL_MS);
          break;
        case "pending":
          return conclude(row, await look(row, Math.max(0, deadline - Date.now())));
        case "settled":
        case "failed":
          return answer(row);
      }
    }
  };

  return {
    async settle(payload, requirements, grant) {
      const checked = checkPayment(payload, requirements, scope);
      if (!checked.ok) return failure(checked.reason, checked.message);
      const { payment } = checked;
      const id = keyString(payment.key);
      const running = inflight.get(id);
      let result: Promise<SettleResponse>;
      let shared = false;
      if (running?.digest === payment.digest) {
        result = running.result;
        shared = true;
      } else {
        if (running) await running.result.catch(() => undefined);
        const started = settleVerified(payment, grant).finally(() => {
          if (inflight.get(id)?.result === started) inflight.delete(id);
        });
        inflight.set(id, { digest: payment.digest, result: started });
        result = started;
      }
      const answered = await result;
      if (!answered.success || (!shared && deliveredWhenSettled.has(answered))) return answered;
      if (await claimDelivery(db, payment.key)) return answered;
      return failure(
        NONCE_ALREADY_USED,
        `this authorization was settled in transaction ${answered.transaction} and its success already answered to another /settle: pay again for another delivery`,
        answered.payer,
      );
    },

    async resolvePending() {
      const rows = await listUnresolved(db, RESOLVE_BATCH);
      let resolved = 0;
      for (const row of rows) {
        // A request of this process is deciding it right now.
        if (inflight.has(keyString(keyOf(row)))) continue;
        if (row.state === "submitting") {
          if (await reclaimStale(db, keyOf(row), STALE_CLAIM_SECONDS)) {
            await release(
              db,
              keyOf(row),
              UNEXPECTED_SETTLE_ERROR,
              "a settlement was abandoned before broadcasting",
            );
            await accounting(() => options.budgets.release(keyOf(row)));
            resolved++;
          }
          continue;
        }
        const answered = await conclude(row, await look(row, 0));
        if (answered.errorReason !== SETTLEMENT_PENDING) resolved++;
      }
      return { checked: rows.length, resolved };
    },

    async drain() {
      await Promise.allSettled([...inflight.values()].map((f) => f.result));
    },
  };
}

function payerOf(row: LedgerRow): string {
  return termsOf(signedOf(row.payment_payload)).payer;
}
