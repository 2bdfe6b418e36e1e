import { PaymentPayloadV2Schema, PaymentRequirementsV2Schema } from "@x402/core/schemas";
import type { Network, PaymentPayload, PaymentRequirements } from "@x402/core/types";
import {
  authorizationDigest,
  authorizationKey,
  type CheckedPayment,
  Eip3009PayloadSchema,
  ExactPermit2PayloadSchema,
  isPermit2Payload,
  type Signed,
  termsOf,
  UptoPermit2PayloadSchema,
} from "./authorization.ts";
import type { ChannelAuthorizers } from "./channels/authorizers.ts";
import { ChannelDepositSchema } from "./channels/payloads.ts";
import {
  INVALID_NETWORK,
  INVALID_PAYLOAD,
  INVALID_PAYMENT_REQUIREMENTS,
  INVALID_X402_VERSION,
  RECEIVER_MISMATCH,
  UNCLAIMABLE_CHANNEL,
  UNSUPPORTED_ASSET,
  UNSUPPORTED_PAYLOAD_TYPE,
  UNSUPPORTED_SCHEME,
} from "./error-codes.ts";
import { describe, malformed, type Rejection, refused } from "./rejection.ts";
import { sponsoringFields } from "./sponsoring/index.ts";
import { fromV1, versionOf } from "./v1.ts";

/**
 * What this facilitator settles: one network, the tokens it is willing to pay gas for, and the channels it
 * relays deposits into (those whose claims someone it knows can sign).
 */
export interface Scope {
  network: Network;
  /** Lower-case token addresses. */
  assets: ReadonlySet<string>;
  authorizers: ChannelAuthorizers;
}

/**
 * Reads the body of POST /verify and /settle: `{x402Version, paymentPayload, paymentRequirements}`, of x402
 * v2 or v1 (the v1 packages send the same envelope, `x402Version: 1`). The body's version is the payload's:
 * a v1 payload is not judged under a v2 body's word, nor the reverse.
 */
export function parseRequestBody(
  body: unknown,
): { ok: true; payload: PaymentPayload; requirements: PaymentRequirements } | Rejection {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return malformed(
      INVALID_PAYLOAD,
      "the body must be a JSON object {x402Version, paymentPayload, paymentRequirements}",
    );
  }
  const { x402Version, paymentPayload, paymentRequirements } = body as Record<string, unknown>;
  if (x402Version !== 2 && x402Version !== 1) {
    return malformed(
      INVALID_X402_VERSION,
      `x402Version must be 2 (or 1, the exact scheme on a network v1 names), not ${JSON.stringify(x402Version ?? null)}`,
    );
  }
  if (paymentPayload === undefined) return malformed(INVALID_PAYLOAD, "paymentPayload is missing");
  if (paymentRequirements === undefined)
    return malformed(INVALID_PAYMENT_REQUIREMENTS, "paymentRequirements is missing");
  const inner = (paymentPayload as { x402Version?: unknown } | null)?.x402Version;
  if (inner !== x402Version) {
    return malformed(
      INVALID_X402_VERSION,
      `paymentPayload.x402Version ${JSON.stringify(inner ?? null)} is not the body's ${x402Version}`,
    );
  }
  return {
    ok: true,
    payload: paymentPayload as PaymentPayload,
    requirements: paymentRequirements as PaymentRequirements,
  };
}

/**
 * Checks a payment is one this facilitator can judge (x402 v2, the exact or the upto scheme or a
 * batch-settlement deposit, or x402 v1's exact scheme translated into v2; its network and assets, a payload
 * of the scheme's shape) and derives its ledger key. The signature, amounts and time window are the SDK's
 * to check.
 */
export function checkPayment(
  payload: unknown,
  requirements: unknown,
  scope: Scope,
): { ok: true; payment: CheckedPayment } | Rejection {
  const version = versionOf(payload);
  // A v1 payment is judged as the v2 one it is (v1.ts): the same checks, ledger row and settlement.
  const v2 =
    version === 1
      ? fromV1(payload, requirements, scope.network)
      : { ok: true as const, payload, requirements };
  if (!v2.ok) return v2;
  const envelope = checkEnvelope(v2.payload, v2.requirements, scope);
  if (!envelope.ok) return envelope;
  const { payload: p, requirements: r } = envelope;
  const signed = parseSigned(r.scheme, p.payload);
  if (!signed.ok) return signed;
  const terms = termsOf(signed.signed);
  // The payee the access rules admitted (requirements.payTo) is the one paid: a channel's receiver.
  if (signed.signed.method === "deposit" && terms.payTo.toLowerCase() !== r.payTo.toLowerCase()) {
    return refused(
      RECEIVER_MISMATCH,
      `the channel's receiver ${terms.payTo} is not paymentRequirements.payTo ${r.payTo}`,
    );
  }
  if (signed.signed.method === "deposit") {
    const unclaimable = unclaimableChannel(signed.signed.payload.channelConfig, scope.authorizers);
    if (unclaimable) return unclaimable;
  }
  return {
    ok: true,
    payment: {
      payload: p,
      requirements: r,
      signed: signed.signed,
      terms,
      key: authorizationKey(scope.network, r.asset, signed.signed),
      digest: authorizationDigest(
        signed.signed,
        signed.signed.method === "permit2" ? sponsoringFields(p) : [],
      ),
      version,
    },
  };
}

/**
 * A deposit into a channel nobody known here can claim, refused before anything is read or signed: its
 * transaction would cost this facilitator a deposit's gas and pay the receiver nothing (channels/authorizers.ts).
 */
function unclaimableChannel(
  config: { receiver: string; receiverAuthorizer: string },
  authorizers: ChannelAuthorizers,
): Rejection | undefined {
  const { receiver, receiverAuthorizer } = config;
  if (authorizers.knows(receiver, receiverAuthorizer)) return undefined;
  const self = authorizers.self ? `, nor this facilitator (${authorizers.self})` : "";
  return refused(
    UNCLAIMABLE_CHANNEL,
    `the channel's receiverAuthorizer ${receiverAuthorizer} is neither its receiver ${receiver}${self}, nor an authorizer ${receiver} registered here: nobody this facilitator knows can sign its claims, so it relays no deposit into it (docs/facilitator.md)`,
  );
}

/** The v2 schemas an envelope is read with; batch-settlement's channel actions relax one (channels/wire.ts). */
export interface EnvelopeSchemas {
  payload: typeof PaymentPayloadV2Schema;
  requirements: typeof PaymentRequirementsV2Schema;
}

const V2: EnvelopeSchemas = { payload: PaymentPayloadV2Schema, requirements: PaymentRequirementsV2Schema };

/**
 * What every payment this facilitator judges has: x402 v2, a scheme it serves (the same in the payload and
 * the requirements), its network, an asset it pays gas for. The scheme's own payload is the caller's.
 */
export function checkEnvelope(
  payload: unknown,
  requirements: unknown,
  scope: Scope,
  schemas: EnvelopeSchemas = V2,
): { ok: true; payload: PaymentPayload; requirements: PaymentRequirements } | Rejection {
  const version = (payload as { x402Version?: unknown } | null)?.x402Version;
  if (version !== 2) {
    return malformed(
      INVALID_X402_VERSION,
      `paymentPayload.x402Version must be 2, not ${JSON.stringify(version ?? null)}`,
    );
  }
  const parsedPayload = schemas.payload.safeParse(payload);
  if (!parsedPayload.success)
    return malformed(INVALID_PAYLOAD, `paymentPayload: ${describe(parsedPayload.error)}`);
  const parsedRequirements = schemas.requirements.safeParse(requirements);
  if (!parsedRequirements.success) {
    return malformed(
      INVALID_PAYMENT_REQUIREMENTS,
      `paymentRequirements: ${describe(parsedRequirements.error)}`,
    );
  }
  const p = parsedPayload.data as PaymentPayload;
  const r = { ...parsedRequirements.data, extra: parsedRequirements.data.extra ?? {} } as PaymentRequirements;

  for (const [where, scheme] of [
    ["paymentRequirements", r.scheme],
    ["paymentPayload.accepted", p.accepted.scheme],
  ]) {
    if (scheme !== "exact" && scheme !== "upto" && scheme !== "batch-settlement") {
      return refused(
        UNSUPPORTED_SCHEME,
        `${where}.scheme "${scheme}" is not supported (only "exact", "upto" and "batch-settlement")`,
      );
    }
  }
  if (r.scheme !== p.accepted.scheme) {
    return refused(
      UNSUPPORTED_SCHEME,
      `paymentPayload.accepted.scheme "${p.accepted.scheme}" is not the requirements' "${r.scheme}"`,
    );
  }
  for (const [where, network] of [
    ["paymentRequirements", r.network],
    ["paymentPayload.accepted", p.accepted.network],
  ]) {
    if (network !== scope.network) {
      return refused(
        INVALID_NETWORK,
        `${where}.network "${network}" is not supported (only "${scope.network}")`,
      );
    }
  }
  if (!scope.assets.has(r.asset.toLowerCase())) {
    return refused(
      UNSUPPORTED_ASSET,
      `asset ${r.asset} is not settled here (only ${[...scope.assets].join(", ")})`,
    );
  }
  return { ok: true, payload: p, requirements: r };
}

/**
 * The signed payload of a scheme: exact takes EIP-3009 authorizations, or Permit2 ones spent through the
 * exact proxy; upto takes Permit2 ones spent through the upto proxy.
 */
function parseSigned(
  scheme: string,
  payload: Record<string, unknown>,
): { ok: true; signed: Signed } | Rejection {
  if (scheme === "batch-settlement") return parseDeposit(payload);
  if (scheme === "upto") {
    if (!isPermit2Payload(payload)) {
      return refused(
        UNSUPPORTED_PAYLOAD_TYPE,
        "the upto scheme is paid with a Permit2 authorization (permit2Authorization)",
      );
    }
    const permit2 = UptoPermit2PayloadSchema.safeParse(payload);
    if (!permit2.success)
      return malformed(INVALID_PAYLOAD, `paymentPayload.payload: ${describe(permit2.error)}`);
    return { ok: true, signed: { method: "permit2", payload: permit2.data } };
  }
  if (isPermit2Payload(payload)) {
    const permit2 = ExactPermit2PayloadSchema.safeParse(payload);
    if (!permit2.success)
      return malformed(INVALID_PAYLOAD, `paymentPayload.payload: ${describe(permit2.error)}`);
    return { ok: true, signed: { method: "permit2", payload: permit2.data } };
  }
  const eip3009 = Eip3009PayloadSchema.safeParse(payload);
  if (!eip3009.success)
    return malformed(INVALID_PAYLOAD, `paymentPayload.payload: ${describe(eip3009.error)}`);
  return { ok: true, signed: { method: "eip3009", payload: eip3009.data } };
}

/**
 * batch-settlement's payer authorization: a deposit into a channel. Its other payloads (voucher, claim,
 * settle, refund) are the receiver's actions, read by channels/wire.ts.
 */
function parseDeposit(payload: Record<string, unknown>): { ok: true; signed: Signed } | Rejection {
  if (payload.type !== "deposit") {
    return refused(
      UNSUPPORTED_PAYLOAD_TYPE,
      `batch-settlement payloads are of type deposit, voucher, claim, settle or refund, not ${JSON.stringify(payload.type ?? null)}`,
    );
  }
  const deposit = ChannelDepositSchema.safeParse(payload);
  if (!deposit.success)
    return malformed(INVALID_PAYLOAD, `paymentPayload.payload: ${describe(deposit.error)}`);
  const transfer = deposit.data.deposit.authorization.permit2Authorization ? "permit2" : "eip3009";
  return { ok: true, signed: { method: "deposit", transfer, payload: deposit.data } };
}
