/**
 * What the signer does around each transaction the SDK asks it to send: the key's worst case reserved
 * before signing, the hash recorded in the row of what it is for before broadcast (an authorization's or a
 * channel action's), the record undone when the node refuses it, and the receipts the SDK waited for kept
 * for whoever records the outcome.
 */
import type { Database } from "../common/db/index.ts";
import type { GasBudgets } from "./access/index.ts";
import { recordRefused, recordSigned } from "./authorization-ledger.ts";
import { subjectOfCall } from "./call-subject.ts";
import { recordActionRefused, recordActionSigned } from "./channels/ledger.ts";
import { receiptCost } from "./outcome.ts";
import type { SignerHooks } from "./signer.ts";

/**
 * Receipts the SDK waited for, by lower-case hash: block, cost to the facilitator, gas used. A group's
 * (settlement-groups.ts) holds each call's share of the cost and gas, for `readers` calls.
 */
export type ReceiptBlocks = Map<string, { block: bigint; cost: bigint; gasUsed: bigint; readers?: number }>;

/**
 * A receipt's entry for the one settlement that records it: gone once its last reader took it (a
 * transaction of its own has one; a group, one per call).
 */
export function takeReceipt(
  blocks: ReceiptBlocks,
  hash: string,
): { block: bigint; cost: bigint; gasUsed: bigint } | undefined {
  const entry = blocks.get(hash);
  if (!entry) return undefined;
  if ((entry.readers ?? 1) <= 1) blocks.delete(hash);
  else entry.readers = (entry.readers ?? 1) - 1;
  return entry;
}

export function signerHooks(
  db: Database,
  network: string,
  budgets: GasBudgets,
  receiptBlocks: ReceiptBlocks,
): SignerHooks {
  return {
    // A keyed settlement's worst case is reserved against its key before it is signed.
    beforeSign: (call, cost) =>
      budgets.reserve(subjectOfCall(network, call).key, cost.gas * cost.maxFeePerGas),
    async beforeBroadcast(call, tx) {
      const subject = subjectOfCall(network, call);
      const recorded =
        subject.kind === "authorization"
          ? await recordSigned(db, subject.key, tx)
          : await recordActionSigned(db, subject.id, tx);
      if (!recorded) throw new Error(`no claimed row for transaction ${tx.hash}: not broadcast`);
    },
    onRejected(call, tx) {
      const subject = subjectOfCall(network, call);
      return subject.kind === "authorization"
        ? recordRefused(db, subject.key, tx.hash)
        : recordActionRefused(db, subject.id, tx.hash);
    },
    onReceipt: (receipt) =>
      receiptBlocks.set(receipt.transactionHash.toLowerCase(), {
        block: receipt.blockNumber,
        cost: receiptCost(receipt),
        gasUsed: receipt.gasUsed,
      }),
  };
}
