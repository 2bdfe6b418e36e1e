import { createHash } from "node:crypto";
import { decodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentKey } from "./payment-ledger.ts";

/** The header the buyer pays with (v2), and the v1 name `@x402/hono` also reads. */
export function paymentHeader(request: Request): string | undefined {
  return request.headers.get("payment-signature") ?? request.headers.get("x-payment") ?? undefined;
}

/** The scheme of the requirements a verified payment accepted (`exact`, `upto`). */
export function paidScheme(header: string): string | undefined {
  return decodePaymentSignatureHeader(header).accepted?.scheme;
}

interface Eip3009Authorization {
  from: string;
  nonce: string;
  validBefore: string | number;
  value?: string;
}

/**
 * Who paid and with which one-time authorization, read from a payment the middleware has already verified
 * (so the signature is known to be `from`'s). The `exact` EVM scheme carries an EIP-3009 authorization;
 * any other payload is keyed by a hash of itself, which still makes one payload run one handler.
 */
export function paymentKeyOf(header: string, nowSeconds = Math.floor(Date.now() / 1000)): PaymentKey {
  const payload = decodePaymentSignatureHeader(header);
  // What the buyer agreed to pay: the requirements it accepted (for `exact`, the authorized value).
  const amount = atomic(payload.accepted?.amount);
  const inner = payload.payload as { authorization?: Eip3009Authorization; permit2Authorization?: unknown };
  const auth = inner.authorization;
  if (auth && /^0x[0-9a-fA-F]{40}$/.test(auth.from) && typeof auth.nonce === "string") {
    return {
      payer: auth.from.toLowerCase() as `0x${string}`,
      nonce: auth.nonce,
      validBefore: Number(auth.validBefore),
      amount: atomic(auth.value) || amount,
    };
  }
  const permit = inner.permit2Authorization as
    | { from?: string; nonce?: string; deadline?: string }
    | undefined;
  const from = permit?.from ?? "0x0000000000000000000000000000000000000000";
  return {
    payer: from.toLowerCase() as `0x${string}`,
    nonce: `sha256:${createHash("sha256").update(JSON.stringify(payload.payload)).digest("hex")}`,
    validBefore: Number(permit?.deadline ?? nowSeconds + 3600),
    amount,
  };
}

function atomic(value: unknown): bigint {
  return typeof value === "string" && /^\d{1,78}$/.test(value) ? BigInt(value) : 0n;
}
