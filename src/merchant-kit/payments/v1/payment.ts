/**
 * A v1 payment (`X-PAYMENT`: base64 JSON `{x402Version: 1, scheme, network, payload}`, its payload
 * `{signature, authorization}` on an EVM chain, `{transaction}` on Solana) made the v2 payment the kit already takes. The EIP-3009 authorization a v1 client signs is the one a v2 client
 * signs for the same requirements (the token's EIP-712 domain from `extra`, the chain from the network, `value`
 * the amount), so the v2 payload carries it unchanged, with the v2 requirements it pays (`accepted`) and what a
 * stock v2 client copies from the 402 (`resource`, `extensions`): from there the ledger, the replay checks, the
 * receipts and the facilitator see a v2 payment, and the facilitator needs no v1. On Solana the same holds of the
 * transaction: x402 1.2.0's SVM client signs the transfer v2's does (the fee payer the requirements' `feePayer`),
 * which the facilitator checks against the requirements it is sent, so a v1 transaction is the v2 payload as it is.
 */
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { getAddress } from "viem";
import { z } from "zod";
import { BadInputError } from "../../../common/errors.ts";
import { decodedPayment } from "../decoded.ts";
import { malformedPayment } from "../malformed.ts";
import { caip2OfV1 } from "./networks.ts";
import { payableByV1 } from "./required.ts";

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const UINT = /^\d{1,78}$/;

const V1Common = { x402Version: z.literal(1), scheme: z.string(), network: z.string() };

/** What v1 clients send for `exact` on an EVM chain (x402 v1's `PaymentPayloadSchema`, its EVM branch). */
const V1EvmPayment = z.object({
  ...V1Common,
  payload: z.object({
    signature: z.string().regex(/^0x[0-9a-fA-F]+$/),
    authorization: z.object({
      from: z.string().regex(ADDRESS),
      to: z.string().regex(ADDRESS),
      value: z.string().regex(UINT),
      validAfter: z.string().regex(UINT),
      validBefore: z.string().regex(UINT),
      nonce: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
    }),
  }),
});

/**
 * ... and on Solana (its SVM branch): the signed transaction in base64, which a Solana transaction's 1,232 bytes
 * bound (a longer one could not be sent).
 */
const V1SvmPayment = z.object({
  ...V1Common,
  payload: z.object({
    transaction: z
      .string()
      .regex(/^[A-Za-z0-9+/]+={0,2}$/)
      .max(1_644),
  }),
});

const V1Payment = z.union([V1EvmPayment, V1SvmPayment]);

export type V1Payment = z.infer<typeof V1Payment>;

/** An `X-PAYMENT` header decoded; a 400 `invalid_payment_signature` when it is not a v1 payment. */
export function v1PaymentOf(header: string): V1Payment {
  const malformed = malformedPayment(header);
  const parsed = malformed === undefined ? V1Payment.safeParse(decodedPayment(header)) : undefined;
  if (parsed?.success) return parsed.data;
  const why = malformed ?? `it is not an x402 v1 payment (${issues(parsed?.error)})`;
  throw new BadInputError(
    `the X-PAYMENT header is not an x402 v1 payment: ${why} (expected base64 JSON {x402Version: 1, scheme, network, payload: {signature, authorization} or {transaction}}); ask without it to get the payment requirements`,
    "invalid_payment_signature",
  );
}

function issues(error: z.ZodError | undefined): string {
  return (error?.issues ?? [])
    .slice(0, 3)
    .map((i) => `${i.path.join(".") || "the payment"}: ${i.message}`)
    .join("; ");
}

/**
 * The v2 payment `payment` is, against what the route asks now (`required`, its unpaid 402): the requirements
 * on its network (v1's name for the CAIP-2 id), of its scheme, whose wallet its authorization pays and whose
 * amount is its value. On Solana, whose transaction names the merchant's token account rather than its wallet,
 * the route's one way on that network: the facilitator verifies the transfer against it. None (undefined) when
 * it pays nothing the route takes from v1 (required.ts).
 */
export function asV2Payment(payment: V1Payment, required: PaymentRequired): PaymentPayload | undefined {
  const network = caip2OfV1(payment.network);
  const candidates = payableByV1(required.accepts).filter(
    ({ requirements: r }) => r.network === network && r.scheme === payment.scheme,
  );
  const authorization = "authorization" in payment.payload ? payment.payload.authorization : undefined;
  const accepted = authorization
    ? candidates.find(
        ({ requirements: r }) =>
          ADDRESS.test(r.payTo) &&
          getAddress(r.payTo) === getAddress(authorization.to) &&
          r.amount === authorization.value,
      )?.requirements
    : network?.startsWith("solana:") && candidates.length === 1
      ? candidates[0]?.requirements
      : undefined;
  if (!accepted) return undefined;
  return {
    x402Version: 2,
    resource: required.resource,
    accepted,
    payload: payment.payload,
    ...(required.extensions && { extensions: required.extensions }),
  };
}

/** What a v1 payment pays, as a refusal names it. */
export function describeV1Payment(payment: V1Payment): string {
  return "authorization" in payment.payload
    ? `${payment.payload.authorization.value} by ${payment.scheme} on ${payment.network} to ${payment.payload.authorization.to}`
    : `a transaction by ${payment.scheme} on ${payment.network}`;
}
