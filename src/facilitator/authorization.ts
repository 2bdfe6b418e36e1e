import crypto from "node:crypto";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { toHex } from "viem";
import { z } from "zod";
import { X402_EXACT_PROXY_ADDRESS, X402_UPTO_PROXY_ADDRESS } from "../chain/base.ts";

/** The `payload` of an exact-scheme EVM payment signed as an EIP-3009 `TransferWithAuthorization`. */
export interface Eip3009Payload {
  signature: `0x${string}`;
  authorization: {
    from: `0x${string}`;
    to: `0x${string}`;
    value: string;
    validAfter: string;
    validBefore: string;
    nonce: `0x${string}`;
  };
}

/**
 * The `payload` of a Permit2 payment: a `PermitWitnessTransferFrom` that only an x402 proxy may spend, only
 * to `witness.to`. The upto scheme's is for at most `permitted.amount` through the upto proxy, and only when
 * sent by `witness.facilitator`; the exact scheme's (`assetTransferMethod: "permit2"`) is for exactly that
 * amount through the exact proxy, by anyone, and names no facilitator.
 */
export interface Permit2Payload {
  signature: `0x${string}`;
  permit2Authorization: {
    from: `0x${string}`;
    permitted: { token: `0x${string}`; amount: string };
    spender: `0x${string}`;
    nonce: string;
    deadline: string;
    witness: { to: `0x${string}`; facilitator?: `0x${string}`; validAfter: string };
  };
}

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "an 0x-prefixed 20-byte address");
const uint256 = z
  .string()
  .regex(/^\d{1,78}$/, "a decimal integer string")
  .refine((v) => BigInt(v) < 2n ** 256n, "at most 2^256 - 1");
// 65-byte ECDSA, or longer for smart wallets (ERC-1271 / ERC-6492).
const signature = z
  .string()
  .regex(/^0x([0-9a-fA-F]{2}){65,}$/, "an 0x-prefixed signature of at least 65 bytes");

export const Eip3009PayloadSchema = z.object({
  signature,
  authorization: z.object({
    from: address,
    to: address,
    value: uint256,
    validAfter: uint256,
    validBefore: uint256,
    nonce: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "an 0x-prefixed 32-byte nonce"),
  }),
}) as unknown as z.ZodType<Eip3009Payload>;

const permit2Of = (witness: z.ZodObject<z.ZodRawShape>) =>
  z.object({
    signature,
    permit2Authorization: z.object({
      from: address,
      permitted: z.object({ token: address, amount: uint256 }),
      spender: address,
      nonce: uint256,
      deadline: uint256,
      witness,
    }),
  }) as unknown as z.ZodType<Permit2Payload>;

export const UptoPermit2PayloadSchema = permit2Of(
  z.object({ to: address, facilitator: address, validAfter: uint256 }),
);
export const ExactPermit2PayloadSchema = permit2Of(z.object({ to: address, validAfter: uint256 }));

/** True when the payload is a Permit2 one (the upto scheme's, or the exact scheme's other transfer method). */
export function isPermit2Payload(payload: Record<string, unknown>): boolean {
  return "permit2Authorization" in payload;
}

/** What the payer signed, by the transfer method: EIP-3009 (exact) or Permit2 through an x402 proxy. */
export type Signed =
  | { method: "eip3009"; payload: Eip3009Payload }
  | { method: "permit2"; payload: Permit2Payload };

/** What every signed payment says, whatever its method. */
export interface Terms {
  payer: `0x${string}`;
  payTo: `0x${string}`;
  /** The exact value (exact) or the most that may be taken (upto). */
  value: bigint;
  /** Unix seconds after which it can no longer be used. */
  expires: bigint;
  /** The replay nonce, as 32 bytes of lower-case hex. */
  nonce: `0x${string}`;
}

export function termsOf(signed: Signed): Terms {
  if (signed.method === "eip3009") {
    const a = signed.payload.authorization;
    return {
      payer: a.from,
      payTo: a.to,
      value: BigInt(a.value),
      expires: BigInt(a.validBefore),
      nonce: a.nonce.toLowerCase() as `0x${string}`,
    };
  }
  const a = signed.payload.permit2Authorization;
  return {
    payer: a.from,
    payTo: a.witness.to,
    value: BigInt(a.permitted.amount),
    expires: BigInt(a.deadline),
    nonce: permit2Nonce(BigInt(a.nonce)),
  };
}

/** What a stored payment payload was signed as (the ledger keeps payloads whole). */
export function signedOf(payload: PaymentPayload): Signed {
  const inner = payload.payload as Record<string, unknown>;
  return isPermit2Payload(inner)
    ? { method: "permit2", payload: inner as unknown as Permit2Payload }
    : { method: "eip3009", payload: inner as unknown as Eip3009Payload };
}

const permit2Nonce = (nonce: bigint) => toHex(nonce, { size: 32 });

/**
 * The ledger key of an authorization: what refuses a replay on chain (the payer's nonce: in the token for
 * EIP-3009, in Permit2's bitmap for Permit2), scoped to the token and the chain. Lower-case hex throughout.
 * A Permit2 nonce is the payer's across tokens; this facilitator settles each token apart and a second use
 * of a nonce fails on chain whatever the ledger says, so the token in the key costs nothing.
 */
export interface AuthorizationKey {
  network: string;
  asset: string;
  payer: string;
  nonce: string;
}

export function authorizationKey(network: string, asset: string, signed: Signed): AuthorizationKey {
  const terms = termsOf(signed);
  return { network, asset: asset.toLowerCase(), payer: terms.payer.toLowerCase(), nonce: terms.nonce };
}

export function keyString(key: AuthorizationKey): string {
  return `${key.network}/${key.asset}/${key.payer}/${key.nonce}`;
}

/**
 * A digest of what the payer signed (every field and the signature). /settle must present the very
 * authorization /verify accepted: a payer can sign two different authorizations with one nonce.
 */
export function authorizationDigest(signed: Signed): string {
  let fields: string[];
  if (signed.method === "eip3009") {
    const a = signed.payload.authorization;
    fields = [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce];
  } else {
    const a = signed.payload.permit2Authorization;
    const w = a.witness;
    fields = ["permit2", a.from, a.permitted.token, a.permitted.amount, a.spender, a.nonce, a.deadline];
    fields.push(w.to, w.facilitator ?? "", w.validAfter);
  }
  fields.push(signed.payload.signature);
  return crypto
    .createHash("sha256")
    .update(JSON.stringify(fields.map((f) => f.toLowerCase())))
    .digest("hex");
}

/** A checked request, ready for the ledger and the SDK. */
export interface CheckedPayment {
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  signed: Signed;
  terms: Terms;
  key: AuthorizationKey;
  digest: string;
}

/**
 * The ledger key of the contract call the SDK asks the signer to send. Only the token's
 * `transferWithAuthorization` (from, to, value, validAfter, validBefore, nonce, signature...), the upto
 * proxy's `settle` (permit, amount, owner, witness, signature) and the exact proxy's `settle` (permit,
 * owner, witness, signature) are expected; anything else is refused so that no transaction leaves this
 * facilitator without a ledger row.
 */
export function keyOfCall(
  network: string,
  call: { address: string; functionName: string; args: readonly unknown[] },
): AuthorizationKey {
  if (call.functionName === "transferWithAuthorization") {
    const [from, , , , , nonce] = call.args;
    if (typeof from === "string" && typeof nonce === "string") {
      return {
        network,
        asset: call.address.toLowerCase(),
        payer: from.toLowerCase(),
        nonce: nonce.toLowerCase(),
      };
    }
  }
  const proxy = call.address.toLowerCase();
  const upto = proxy === X402_UPTO_PROXY_ADDRESS.toLowerCase();
  if (call.functionName === "settle" && (upto || proxy === X402_EXACT_PROXY_ADDRESS.toLowerCase())) {
    const permit = call.args[0] as { permitted?: { token?: unknown }; nonce?: unknown } | undefined;
    const owner = call.args[upto ? 2 : 1];
    const token = permit?.permitted?.token;
    if (typeof owner === "string" && typeof token === "string" && typeof permit?.nonce === "bigint") {
      return {
        network,
        asset: token.toLowerCase(),
        payer: owner.toLowerCase(),
        nonce: permit2Nonce(permit.nonce),
      };
    }
  }
  throw new Error(`refusing to send ${call.functionName}: not a settlement this facilitator tracks`);
}
