import crypto from "node:crypto";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { encodeAbiParameters, keccak256, toHex } from "viem";
import { z } from "zod";
import { X402_EXACT_PROXY_ADDRESS, X402_UPTO_PROXY_ADDRESS } from "../chain/base.ts";
import type { ChannelDepositPayload } from "./channels/payloads.ts";
import { address, bytes32, signature, uint256 } from "./shapes.ts";

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

export const Eip3009PayloadSchema = z.object({
  signature,
  authorization: z.object({
    from: address,
    to: address,
    value: uint256,
    validAfter: uint256,
    validBefore: uint256,
    nonce: bytes32,
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

/**
 * What the payer signed: an EIP-3009 transfer (exact), a Permit2 transfer through an x402 proxy (exact,
 * upto), or a batch-settlement deposit into a channel, itself an ERC-3009 or a Permit2 authorization that
 * the escrow's collector spends.
 */
export type Signed =
  | { method: "eip3009"; payload: Eip3009Payload }
  | { method: "permit2"; payload: Permit2Payload }
  | { method: "deposit"; transfer: "eip3009" | "permit2"; payload: ChannelDepositPayload };

/** Whose nonce refuses a replay on chain: the token's (EIP-3009) or Permit2's bitmap. */
export function transferOf(signed: Signed): "eip3009" | "permit2" {
  return signed.method === "deposit" ? signed.transfer : signed.method;
}

/**
 * What a keyed settlement is charged as, per key and action (docs/facilitator.md, "Gas per key"); `approval`:
 * a buyer's Permit2 approval this facilitator funded for a payment (sponsoring/, "Gas sponsoring").
 */
export type SettlementAction = "exact" | "upto" | "deposit" | "claim" | "settle" | "refund" | "approval";

export function actionOf(signed: Signed, scheme: string): SettlementAction {
  if (signed.method === "deposit") return "deposit";
  return scheme === "upto" ? "upto" : "exact";
}

/**
 * What a settlement moves from the payer: a deposit's amount (the requirements' amount is the price of the
 * request its voucher pays), otherwise the requirements' (the value, or upto's metered amount at /settle).
 */
export function amountAtStake(payment: Pick<CheckedPayment, "signed" | "terms" | "requirements">): bigint {
  return payment.signed.method === "deposit" ? payment.terms.value : BigInt(payment.requirements.amount);
}

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
  if (signed.method === "deposit") return depositTerms(signed.payload);
  const a = signed.payload.permit2Authorization;
  return {
    payer: a.from,
    payTo: a.witness.to,
    value: BigInt(a.permitted.amount),
    expires: BigInt(a.deadline),
    nonce: permit2Nonce(BigInt(a.nonce)),
  };
}

/**
 * A deposit is paid by the channel's payer to the escrow for the channel's receiver. Its ERC-3009 nonce is
 * what the collector derives, keccak256(channelId, salt), and the token then spends; a Permit2 one is the
 * permit's. The channel id is the payload's: the SDK refuses one that is not the config's before anything
 * is recorded or sent.
 */
function depositTerms(d: ChannelDepositPayload): Terms {
  const { erc3009Authorization: erc3009, permit2Authorization: permit2 } = d.deposit.authorization;
  const base = {
    payer: d.channelConfig.payer,
    payTo: d.channelConfig.receiver,
    value: BigInt(d.deposit.amount),
  };
  if (permit2)
    return { ...base, expires: BigInt(permit2.deadline), nonce: permit2Nonce(BigInt(permit2.nonce)) };
  const a = erc3009 as NonNullable<typeof erc3009>;
  const nonce = keccak256(
    encodeAbiParameters([{ type: "bytes32" }, { type: "uint256" }], [d.voucher.channelId, BigInt(a.salt)]),
  );
  return { ...base, expires: BigInt(a.validBefore), nonce };
}

/** What a stored payment payload was signed as (the ledger keeps payloads whole). */
export function signedOf(payload: PaymentPayload): Signed {
  const inner = payload.payload as Record<string, unknown>;
  if (inner.type === "deposit") {
    const deposit = inner as unknown as ChannelDepositPayload;
    const transfer = deposit.deposit.authorization.permit2Authorization ? "permit2" : "eip3009";
    return { method: "deposit", transfer, payload: deposit };
  }
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
 * A digest of what the payer signed (every field and the signature), and of the gas sponsoring it asks for
 * (`sponsoring`: the fields of its permit or approval, none without). /settle must present the very
 * authorization /verify accepted: a payer can sign two different authorizations with one nonce.
 */
export function authorizationDigest(signed: Signed, sponsoring: readonly string[] = []): string {
  let fields: string[];
  if (signed.method === "eip3009") {
    const a = signed.payload.authorization;
    fields = [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce];
  } else if (signed.method === "deposit") {
    fields = depositFields(signed.payload);
  } else {
    const a = signed.payload.permit2Authorization;
    const w = a.witness;
    fields = ["permit2", a.from, a.permitted.token, a.permitted.amount, a.spender, a.nonce, a.deadline];
    fields.push(w.to, w.facilitator ?? "", w.validAfter);
  }
  if (signed.method !== "deposit") fields.push(signed.payload.signature);
  // Appended only when there is one: the digests of payments without sponsoring are as before.
  fields.push(...sponsoring);
  return crypto
    .createHash("sha256")
    .update(JSON.stringify(fields.map((f) => f.toLowerCase())))
    .digest("hex");
}

/**
 * What a deposit's payer signed and the escrow is asked to do: the channel, the amount and the token
 * authorization. Not the voucher: it pays the request, goes nowhere on chain, and a retried /settle of
 * the same deposit may carry another.
 */
function depositFields(d: ChannelDepositPayload): string[] {
  const c = d.channelConfig;
  const fields = ["deposit", c.payer, c.payerAuthorizer, c.receiver, c.receiverAuthorizer, c.token];
  fields.push(String(c.withdrawDelay), c.salt, d.deposit.amount);
  const { erc3009Authorization: e, permit2Authorization: p } = d.deposit.authorization;
  if (e) fields.push("eip3009", e.validAfter, e.validBefore, e.salt, e.signature);
  if (p)
    fields.push("permit2", p.from, p.permitted.token, p.permitted.amount, p.spender, p.nonce, p.deadline);
  if (p) fields.push(p.witness.channelId, p.signature);
  return fields;
}

/** A checked request, ready for the ledger and the SDK. */
export interface CheckedPayment {
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  signed: Signed;
  terms: Terms;
  key: AuthorizationKey;
  digest: string;
  /** The x402 version it came in (its `payload` and `requirements` are v2's either way: v1.ts). */
  version: 1 | 2;
}

/**
 * The ledger key of the contract call the SDK asks the signer to send. Only the token's
 * `transferWithAuthorization` (from, to, value, validAfter, validBefore, nonce, signature...), the upto
 * proxy's `settle` (permit, amount, owner, witness, signature) and the exact proxy's `settle` (permit,
 * owner, witness, signature) are expected, and each proxy's `settleWithPermit`, the same after the buyer's
 * EIP-2612 permit (a payment whose gas sponsoring sponsoring/ accepted); anything else is refused so that no
 * transaction leaves this facilitator without a ledger row.
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
  const withPermit = call.functionName === "settleWithPermit" ? 1 : 0;
  if (
    (call.functionName === "settle" || withPermit) &&
    (upto || proxy === X402_EXACT_PROXY_ADDRESS.toLowerCase())
  ) {
    const permit = call.args[withPermit] as { permitted?: { token?: unknown }; nonce?: unknown } | undefined;
    const owner = call.args[withPermit + (upto ? 2 : 1)];
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
