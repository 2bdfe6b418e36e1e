import {
  getBase58Encoder,
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
} from "@solana/kit";
import { base58 } from "./keys.ts";

/** A transaction as it came over the wire, with its message laid open (static keys only: see `decodeWire`). */
export interface WireTransaction {
  bytes: Uint8Array;
  /** Base58, in the order of the message's signer keys; the first is the transaction's id. */
  signatures: string[];
  messageBytes: Uint8Array;
  version: "legacy" | 0;
  header: {
    numRequiredSignatures: number;
    numReadonlySignedAccounts: number;
    numReadonlyUnsignedAccounts: number;
  };
  accountKeys: string[];
  recentBlockhash: string;
  instructions: { programIdIndex: number; accounts: number[]; data: Uint8Array }[];
}

export class WireError extends Error {}

/**
 * Reads a wire transaction (compact-u16 signature count, the signatures, the message). Address lookup tables
 * are refused: the devnet would have to resolve them for every account list it prints, and neither the SDK's
 * `exact` nor our facilitator uses them.
 */
export function decodeWire(bytes: Uint8Array): WireTransaction {
  const [count, offset] = readCompactU16(bytes, 0);
  const messageStart = offset + count * 64;
  if (count === 0 || messageStart >= bytes.length)
    throw new WireError("not a transaction: no signatures or no message");
  const signatures: string[] = [];
  for (let i = 0; i < count; i++)
    signatures.push(base58(bytes.subarray(offset + i * 64, offset + (i + 1) * 64)));
  const messageBytes = bytes.subarray(messageStart);
  let message: ReturnType<ReturnType<typeof getCompiledTransactionMessageDecoder>["decode"]>;
  try {
    message = getCompiledTransactionMessageDecoder().decode(messageBytes);
  } catch (error) {
    throw new WireError(`not a transaction message: ${(error as Error).message}`);
  }
  if ("addressTableLookups" in message && (message.addressTableLookups?.length ?? 0) > 0) {
    throw new WireError("address lookup tables are not supported by this devnet");
  }
  if (message.header.numSignerAccounts !== count) {
    throw new WireError(
      `the message needs ${message.header.numSignerAccounts} signatures, the transaction has ${count}`,
    );
  }
  return {
    bytes,
    signatures,
    messageBytes,
    version: message.version === "legacy" ? "legacy" : 0,
    header: {
      numRequiredSignatures: message.header.numSignerAccounts,
      numReadonlySignedAccounts: message.header.numReadonlySignerAccounts,
      numReadonlyUnsignedAccounts: message.header.numReadonlyNonSignerAccounts,
    },
    accountKeys: message.staticAccounts.map(String),
    recentBlockhash: message.lifetimeToken,
    instructions: message.instructions.map((instruction) => ({
      programIdIndex: instruction.programAddressIndex,
      accounts: [...(instruction.accountIndices ?? [])],
      data: new Uint8Array(instruction.data ?? []),
    })),
  };
}

/** The same transaction with another blockhash (`simulateTransaction`'s `replaceRecentBlockhash`). */
export function withBlockhash(tx: WireTransaction, blockhash: string): Uint8Array {
  const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  const replaced = new Uint8Array(
    getCompiledTransactionMessageEncoder().encode({ ...message, lifetimeToken: blockhash as never }),
  );
  const head = tx.bytes.subarray(0, tx.bytes.length - tx.messageBytes.length);
  const out = new Uint8Array(head.length + replaced.length);
  out.set(head, 0);
  out.set(replaced, head.length);
  return out;
}

export function isSigner(tx: WireTransaction, index: number): boolean {
  return index < tx.header.numRequiredSignatures;
}

export function isWritable(tx: WireTransaction, index: number): boolean {
  const { numRequiredSignatures, numReadonlySignedAccounts, numReadonlyUnsignedAccounts } = tx.header;
  if (index < numRequiredSignatures) return index < numRequiredSignatures - numReadonlySignedAccounts;
  return index < tx.accountKeys.length - numReadonlyUnsignedAccounts;
}

function readCompactU16(bytes: Uint8Array, offset: number): [number, number] {
  let value = 0;
  for (let i = 0; i < 3; i++) {
    const byte = bytes[offset + i];
    if (byte === undefined) throw new WireError("not a transaction: truncated");
    value |= (byte & 0x7f) << (7 * i);
    if ((byte & 0x80) === 0) return [value, offset + i + 1];
  }
  throw new WireError("not a transaction: bad length prefix");
}

export function writeCompactU16(value: number): number[] {
  const out: number[] = [];
  let rest = value;
  for (;;) {
    const byte = rest & 0x7f;
    rest >>= 7;
    if (rest === 0) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

/** Decodes base58 or throws WireError (a caller's bad parameter, not the devnet's fault). */
export function fromBase58(text: string): Uint8Array {
  try {
    return new Uint8Array(getBase58Encoder().encode(text));
  } catch {
    throw new WireError(`not base58: "${text.slice(0, 100)}"`);
  }
}
