/**
 * The fee payer's signer as `@x402/svm`'s scheme uses it, with this facilitator's hooks: before it signs, the key's
 * budget holds the fee and the payment is one this facilitator claimed; once it signs, the signature is in the
 * ledger before the transaction is sent; confirmations are polled at the facilitator's pace, the slot kept.
 */
import { getBase64Encoder, getTransactionDecoder, type Signature } from "@solana/kit";
import { type FacilitatorSvmSigner, TransactionOnchainFailureError } from "@x402/svm";
import type { SolanaRpc } from "../../chain/solana/rpc.ts";
import type { Database } from "../../common/db/index.ts";
import { sleep } from "../../common/sleep.ts";
import type { GasBudgets } from "../access/index.ts";
import type { AuthorizationKey } from "../authorization.ts";
import { recordSvmSigned } from "./ledger.ts";
import { readSvmPayment, signatureOf } from "./transaction.ts";

/** 10^-18 SOL a lamport: keys' budgets are kept in 10^-18 of the chain's coin on every chain. */
export const WEI_PER_LAMPORT = 1_000_000_000n;

/** A settlement this process signs now: its ledger key, then its signature and slot once known. */
export interface Signing {
  key: AuthorizationKey;
  keyed: boolean;
  signature?: string;
  slot?: bigint | null;
  refusal?: string;
}

/** A signature's slot and error once the chain confirmed it; undefined before. */
export type StatusOf = (signature: string) => Promise<{ slot: bigint; err: unknown } | undefined>;

export interface SignerHooks {
  db: Database;
  budgets: GasBudgets;
  /** The settlements being signed, by message hash. */
  signing: Map<string, Signing>;
  statusOf: StatusOf;
  confirmationTimeoutMs: number;
  pollingIntervalMs: number;
}

/** Reads signatures' statuses from `rpc`. */
export function statusReader(rpc: SolanaRpc): StatusOf {
  return async (signature) => {
    const { value } = await rpc.getSignatureStatuses([signature as Signature]).send();
    const entry = value[0];
    if (!entry || (entry.confirmationStatus !== "confirmed" && entry.confirmationStatus !== "finalized"))
      return undefined;
    return { slot: entry.slot, err: entry.err };
  };
}

/** `base` with the hooks above. */
export function hookedSigner(base: FacilitatorSvmSigner, hooks: SignerHooks): FacilitatorSvmSigner {
  const { db, budgets, signing, statusOf, confirmationTimeoutMs, pollingIntervalMs } = hooks;
  return {
    ...base,
    // Before the fee payer signs: the key's budget holds the fee, and the ledger the signature (pending) before
    // the transaction is sent, so that a crash after sending leaves a row a later /settle can look up.
    async signTransaction(transaction, feePayer, on) {
      const payment = readSvmPayment({ transaction });
      const current = payment && signing.get(payment.messageHash);
      if (!payment || !current)
        throw new Error("the fee payer signs only a settlement this facilitator claimed");
      if (current.keyed) {
        try {
          await budgets.reserve(current.key, payment.feeLamports * WEI_PER_LAMPORT);
        } catch (error) {
          current.refusal = (error as Error).message;
          throw error;
        }
      }
      const signed = await base.signTransaction(transaction, feePayer, on);
      const decoded = getTransactionDecoder().decode(getBase64Encoder().encode(signed));
      const signature = signatureOf(decoded, feePayer);
      if (!signature || !(await recordSvmSigned(db, current.key, signature)))
        throw new Error("the payment's ledger row is no longer this settlement's");
      current.signature = signature;
      return signed;
    },
    // Polled at the facilitator's own pace and for its own timeout (the SDK's waits 30 s), the slot kept.
    async confirmTransaction(signature) {
      const deadline = Date.now() + confirmationTimeoutMs;
      for (;;) {
        const status = await statusOf(signature);
        if (status) {
          const current = [...signing.values()].find((s) => s.signature === signature);
          if (current) current.slot = status.slot;
          if (status.err)
            throw new TransactionOnchainFailureError(
              `transaction failed on chain: ${JSON.stringify(status.err, (_, v) => (typeof v === "bigint" ? v.toString() : v))}`,
            );
          return;
        }
        if (Date.now() >= deadline) throw new Error("transaction confirmation timeout");
        await sleep(pollingIntervalMs);
      }
    },
  };
}
