/**
 * secp256k1 by libsecp256k1 (the `secp256k1` package's prebuilt addon), for the two operations on every
 * paid request's path: recovering a payer's address from an EIP-3009 signature, and signing the settlement
 * transaction. viem does both in JavaScript (`@noble/curves`): 2.7 ms a recovery and 0.5 ms a transaction's
 * signature on these machines, loading noble with a dynamic import on every recovery; with the addon 0.1 and
 * 0.15 ms, hashing and encoding included (`npm run bench:crypto`).
 *
 * Both functions accept and produce exactly what viem's do (`test/chain/secp256k1.test.ts` checks them
 * against viem on the same inputs, malleable and high-s signatures included). Where the addon does not
 * load (a platform without a prebuilt binary and no compiler), viem's own code runs instead: slower, the
 * same answers.
 */
import { createRequire } from "node:module";
import {
  type Address,
  bytesToHex,
  getAddress,
  type Hex,
  hexToBytes,
  keccak256,
  recoverAddress,
  type Signature,
  serializeSignature,
  serializeTransaction,
  type TransactionSerializable,
  type TypedDataDefinition,
} from "viem";
import { type PrivateKeyAccount, privateKeyToAccount, sign } from "viem/accounts";
import { log } from "../common/log.ts";
import { fastHashTypedData } from "./typed-data.ts";

/** The few calls of the addon used here (the package's `bindings` entry, which never falls back to JS). */
interface Addon {
  ecdsaRecover(signature: Uint8Array, recid: number, msg32: Uint8Array, compressed: false): Uint8Array;
  ecdsaSign(msg32: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array; recid: number };
}

function loadAddon(): Addon | undefined {
  try {
    // The package's main entry silently falls back to `elliptic` (pure JS); its `bindings` entry does not.
    return createRequire(import.meta.url)("secp256k1/bindings") as Addon;
  } catch (error) {
    log("warn", "libsecp256k1 did not load: signatures are checked and made in JavaScript (slower)", {
      error,
    });
    return undefined;
  }
}

const addon = loadAddon();

/** Which implementation runs: for benchmarks and logs. */
export const secp256k1Backend: "libsecp256k1" | "viem" = addon ? "libsecp256k1" : "viem";

/** viem's reading of the 65th byte: 0/1 is the y parity, 27/28 the legacy v; anything else is refused. */
function recoveryBit(v: number): 0 | 1 | undefined {
  if (v === 0 || v === 27) return 0;
  if (v === 1 || v === 28) return 1;
  return undefined;
}

/**
 * The address that signed `digest` with a 65-byte `r || s || v` signature, or undefined where viem's
 * `recoverAddress` throws (a bad length, v, r or s, or no point to recover). Like viem, and like
 * `ecrecover`, it does not refuse a high s: the token contract does, and the transfer's simulation with it.
 */
export async function recoverSigner(digest: Hex, signature: Hex): Promise<Address | undefined> {
  if (!addon) return recoverAddress({ hash: digest, signature }).catch(() => undefined);
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature) || !/^0x[0-9a-fA-F]{64}$/.test(digest)) return undefined;
  const bytes = hexToBytes(signature);
  const bit = recoveryBit(bytes[64] as number);
  if (bit === undefined) return undefined;
  let publicKey: Uint8Array;
  try {
    publicKey = addon.ecdsaRecover(bytes.subarray(0, 64), bit, hexToBytes(digest), false);
  } catch {
    return undefined;
  }
  // The address is the last 20 bytes of the hash of the key's x || y.
  return getAddress(`0x${keccak256(publicKey.subarray(1)).slice(26)}`);
}

/** A signature of `digest` as viem's `sign` makes it: RFC 6979 nonce, low s, the same bytes. */
export async function signDigest(digest: Hex, privateKey: Hex): Promise<Signature> {
  if (!addon) return sign({ hash: digest, privateKey });
  const { signature, recid } = addon.ecdsaSign(hexToBytes(digest), hexToBytes(privateKey));
  return {
    r: bytesToHex(signature.subarray(0, 32)),
    s: bytesToHex(signature.subarray(32)),
    v: recid ? 28n : 27n,
    yParity: recid,
  };
}

/**
 * viem's `privateKeyToAccount`, with transactions and EIP-712 typed data signed by the addon: the same account,
 * the same serialized transactions and signatures. Everything else (messages, authorizations) is viem's. Typed
 * data: a merchant signs two on every paid answer (the offer receipt and the charge), which viem's JavaScript
 * made 14% of the serve process's CPU under paid exact requests (docs/benchmarks-log.md, 2026-11-29).
 */
export function fastAccount(privateKey: Hex): PrivateKeyAccount {
  const base = privateKeyToAccount(privateKey);
  if (!addon) return base;
  const signTransaction: PrivateKeyAccount["signTransaction"] = async (transaction, options) => {
    const serializer = (options?.serializer ?? serializeTransaction) as (
      tx: TransactionSerializable,
      signature?: Signature,
    ) => Hex | Promise<Hex>;
    // As viem: an EIP-4844 transaction is signed without its sidecars.
    const signable =
      transaction.type === "eip4844" ? { ...transaction, sidecars: false as const } : transaction;
    const signature = await signDigest(
      keccak256(await serializer(signable as TransactionSerializable)),
      privateKey,
    );
    return serializer(transaction as TransactionSerializable, signature) as never;
  };
  // As viem's `signTypedData`: the typed data's hash (viem's bytes, its domain and type hashed once:
  // typed-data.ts) signed, serialized as r || s || v (27/28).
  const signTypedData = (async (typedData: TypedDataDefinition) =>
    serializeSignature(
      await signDigest(fastHashTypedData(typedData), privateKey),
    )) as PrivateKeyAccount["signTypedData"];
  return { ...base, signTransaction, signTypedData };
}
