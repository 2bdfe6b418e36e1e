import crypto from "node:crypto";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { z } from "zod";

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

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "an 0x-prefixed 20-byte address");
const uint256 = z
  .string()
  .regex(/^\d{1,78}$/, "a decimal integer string")
  .refine((v) => BigInt(v) < 2n ** 256n, "at most 2^256 - 1");

export const Eip3009PayloadSchema = z.object({
  // 65-byte ECDSA, or longer for smart wallets (ERC-1271 / ERC-6492).
  signature: z.string().regex(/^0x([0-9a-fA-F]{2}){65,}$/, "an 0x-prefixed signature of at least 65 bytes"),
  authorization: z.object({
    from: address,
    to: address,
    value: uint256,
    validAfter: uint256,
    validBefore: uint256,
    nonce: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "an 0x-prefixed 32-byte nonce"),
  }),
}) as unknown as z.ZodType<Eip3009Payload>;

/** True when the payload is a Permit2 one (the exact scheme's other transfer method, not settled here). */
export function isPermit2Payload(payload: Record<string, unknown>): boolean {
  return "permit2Authorization" in payload;
}

/**
 * The ledger key of an authorization: what the token itself uses to refuse a replay (authorizer + nonce),
 * scoped to the token and the chain. Lower-case hex throughout.
 */
export interface AuthorizationKey {
  network: string;
  asset: string;
  payer: string;
  nonce: string;
}

export function authorizationKey(network: string, asset: string, payload: Eip3009Payload): AuthorizationKey {
  return {
    network,
    asset: asset.toLowerCase(),
    payer: payload.authorization.from.toLowerCase(),
    nonce: payload.authorization.nonce.toLowerCase(),
  };
}

export function keyString(key: AuthorizationKey): string {
  return `${key.network}/${key.asset}/${key.payer}/${key.nonce}`;
}

/**
 * A digest of what the payer signed (every authorization field and the signature). /settle must present
 * the very authorization /verify accepted: a payer can sign two different authorizations with one nonce.
 */
export function authorizationDigest(payload: Eip3009Payload): string {
  const a = payload.authorization;
  const fields = [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, payload.signature];
  return crypto
    .createHash("sha256")
    .update(JSON.stringify(fields.map((f) => f.toLowerCase())))
    .digest("hex");
}

/** A verified request, ready for the ledger and the SDK. */
export interface CheckedPayment {
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  eip3009: Eip3009Payload;
  key: AuthorizationKey;
  digest: string;
}

/**
 * The ledger key of the contract call the SDK asks the signer to send. Only `transferWithAuthorization`
 * is expected (args: from, to, value, validAfter, validBefore, nonce, signature...); anything else is
 * refused so that no transaction leaves this facilitator without a ledger row.
 */
export function keyOfCall(
  network: string,
  call: { address: string; functionName: string; args: readonly unknown[] },
): AuthorizationKey {
  const [from, , , , , nonce] = call.args;
  if (
    call.functionName !== "transferWithAuthorization" ||
    typeof from !== "string" ||
    typeof nonce !== "string"
  ) {
    throw new Error(`refusing to send ${call.functionName}: not a settlement this facilitator tracks`);
  }
  return {
    network,
    asset: call.address.toLowerCase(),
    payer: from.toLowerCase(),
    nonce: nonce.toLowerCase(),
  };
}
