/**
 * What this facilitator reads of a buyer's Solana transaction (x402's `exact` on SVM: the buyer signs a
 * transaction whose fee payer is this facilitator), beside what `@x402/svm`'s scheme checks: the key it is kept
 * under in the ledger, the most it can cost the fee payer, and whether the fee payer is touched beyond the fee.
 */
import { createHash } from "node:crypto";
import {
  type CompiledTransactionMessage,
  decompileTransactionMessage,
  getBase58Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type Transaction,
} from "@solana/kit";

/** Solana's base fee: lamports per signature the transaction carries (the fee payer pays them all). */
export const LAMPORTS_PER_SIGNATURE = 5000n;
/** The compute budget program (its `SetComputeUnitLimit` is 2, `SetComputeUnitPrice` 3). */
const COMPUTE_BUDGET_PROGRAM = "ComputeBudget111111111111111111111111111111";
/** What a transaction without a `SetComputeUnitLimit` may use per instruction (the runtime's default). */
const DEFAULT_UNITS_PER_INSTRUCTION = 200_000n;
/** The runtime's ceiling on a transaction's compute units. */
const MAX_UNITS = 1_400_000n;

/** A buyer's transaction as the ledger and the budget see it. */
export interface SvmPayment {
  transaction: Transaction;
  message: CompiledTransactionMessage;
  /** SHA-256 of the message bytes, base64: what the SDK keys a transaction by, and one signed message is one payment. */
  messageHash: string;
  /** The message's fee payer (its first account). */
  feePayer: string;
  /** The most this transaction can cost its fee payer, in lamports (base fee and priority fee). */
  feeLamports: bigint;
}

/** The payload's transaction, decoded; undefined when it is not one. */
export function readSvmPayment(payload: unknown): SvmPayment | undefined {
  const wire = (payload as { transaction?: unknown } | null)?.transaction;
  if (typeof wire !== "string" || wire.length === 0) return undefined;
  try {
    const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(wire));
    const message = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
    const feePayer = message.staticAccounts[0];
    if (!feePayer) return undefined;
    return {
      transaction,
      message,
      messageHash: createHash("sha256").update(Uint8Array.from(transaction.messageBytes)).digest("base64"),
      feePayer,
      feeLamports: feeOf(message),
    };
  } catch {
    return undefined;
  }
}

/**
 * What the fee payer is charged for `message`: 5,000 lamports a signature, and the priority fee, which Solana
 * charges on the compute units the transaction asks for (its `SetComputeUnitLimit`), not those it uses:
 * so this is the fee to the lamport, known before anything is signed.
 */
export function feeOf(message: CompiledTransactionMessage): bigint {
  let units: bigint | undefined;
  let microLamports = 0n;
  let others = 0n;
  for (const ix of message.instructions) {
    const program = message.staticAccounts[ix.programAddressIndex];
    const data = ix.data;
    if (program !== COMPUTE_BUDGET_PROGRAM || !data) {
      others += 1n;
      continue;
    }
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    if (data[0] === 2 && data.length >= 5) units = BigInt(view.getUint32(1, true));
    if (data[0] === 3 && data.length >= 9) microLamports = view.getBigUint64(1, true);
  }
  const limit = units ?? min(others * DEFAULT_UNITS_PER_INSTRUCTION, MAX_UNITS);
  const priority = (min(limit, MAX_UNITS) * microLamports + 999_999n) / 1_000_000n;
  return BigInt(message.header.numSignerAccounts) * LAMPORTS_PER_SIGNATURE + priority;
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);

/**
 * Why the fee payer is touched beyond paying the fee, or undefined when it is not: it must be no instruction's
 * program and no instruction's account. The SDK's static path checks only that the transfer's authority is
 * not the fee payer, so a Memo or Lighthouse instruction naming it (as a signer it would then sign for, or an
 * account a Lighthouse assertion reads) would pass there; this facilitator signs nothing for it but the fee.
 */
export function feePayerTouched(payment: SvmPayment): string | undefined {
  const { message, feePayer } = payment;
  const lookups = (message as { addressTableLookups?: readonly unknown[] }).addressTableLookups;
  if (lookups && lookups.length > 0)
    return "the transaction uses address lookup tables, which this facilitator does not resolve";
  const instructions = decompileTransactionMessage(
    message as Parameters<typeof decompileTransactionMessage>[0],
  ).instructions;
  for (const ix of instructions) {
    if (ix.programAddress === feePayer) return `the fee payer ${feePayer} is invoked as a program`;
    if ((ix.accounts ?? []).some((a) => a.address === feePayer))
      return `the fee payer ${feePayer} is an account of an instruction of program ${ix.programAddress}`;
  }
  return undefined;
}

/** The fee payer's signature in a fully signed transaction: the transaction's id, base58. */
export function signatureOf(transaction: Transaction, feePayer: string): string | undefined {
  const bytes = (transaction.signatures as Record<string, Uint8Array | null>)[feePayer];
  return bytes ? getBase58Decoder().decode(bytes) : undefined;
}
