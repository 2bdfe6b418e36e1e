/**
 * Reads a batch-settlement action (voucher, claim, settle, refund): what it does, for which receiver and
 * token, whether this facilitator must sign it as the channels' receiverAuthorizer, and what makes it the
 * same action as another (a retry is answered, not sent again).
 *
 * Every channel it touches belongs to `paymentRequirements.payTo` in `paymentRequirements.asset`: the payee
 * the access rules admitted is the receiver whose channels move, whatever the payload says.
 */
import crypto from "node:crypto";
import { PaymentPayloadV2Schema, PaymentRequirementsV2Schema, z } from "@x402/core/schemas";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import {
  CHANNEL_PAYLOAD_TYPE,
  INVALID_PAYLOAD,
  RECEIVER_MISMATCH,
  REFUND_PAYLOAD,
  TOKEN_MISMATCH,
} from "../error-codes.ts";
import { describe, malformed, type Rejection, refused } from "../rejection.ts";
import { checkEnvelope, type EnvelopeSchemas, type Scope } from "../wire.ts";
import { type ChannelActionPayload, ChannelActionSchema, type ChannelConfig } from "./payloads.ts";

/**
 * The SDK's own channel manager asks for claims, settles and refunds with `maxTimeoutSeconds: 0`, which its
 * v2 schema refuses elsewhere: accepted here.
 */
const requirements = PaymentRequirementsV2Schema.extend({ maxTimeoutSeconds: z.number().nonnegative() });
const ACTION_ENVELOPE = {
  payload: PaymentPayloadV2Schema.extend({ accepted: requirements }),
  requirements,
} as unknown as EnvelopeSchemas;

export type ChannelActionKind = ChannelActionPayload["type"];

export interface ChannelAction {
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  action: ChannelActionPayload;
  receiver: `0x${string}`;
  token: `0x${string}`;
  /** Sent without the receiverAuthorizer's signature it needs: this facilitator would sign it. */
  needsAuthorizer: boolean;
  /** Vouchers it claims. */
  vouchers: number;
  /**
   * What makes two requests the same action: the claims (a claim; a refund's, with its amount and nonce);
   * a settle's receiver and token only, completed with the total it sweeps up to when it is sent.
   */
  identity: string[];
}

/** What /verify takes (a voucher, a refund before the server completes it) and what /settle sends. */
const ALLOWED = { verify: new Set(["voucher", "refund"]), settle: new Set(["claim", "settle", "refund"]) };

export function checkChannelAction(
  payload: unknown,
  requirementsIn: unknown,
  scope: Scope,
  operation: "verify" | "settle",
): { ok: true; action: ChannelAction } | Rejection {
  const envelope = checkEnvelope(payload, requirementsIn, scope, ACTION_ENVELOPE);
  if (!envelope.ok) return envelope;
  const parsed = ChannelActionSchema.safeParse(envelope.payload.payload);
  if (!parsed.success) return malformed(INVALID_PAYLOAD, `paymentPayload.payload: ${describe(parsed.error)}`);
  const action = parsed.data;
  if (!ALLOWED[operation].has(action.type)) {
    return refused(
      CHANNEL_PAYLOAD_TYPE,
      operation === "verify"
        ? `a ${action.type} is not verified: send it to /settle`
        : "a voucher moves nothing on chain: /verify it, the server charges it to its channel",
    );
  }
  const refund = action.type === "refund" ? action : undefined;
  if (
    operation === "settle" &&
    refund &&
    (refund.amount === undefined || refund.refundNonce === undefined || !refund.claims)
  ) {
    return refused(
      REFUND_PAYLOAD,
      "a refund is settled as the server completes it: amount, refundNonce and claims (the spec's completed refund payload)",
    );
  }
  const r = envelope.requirements;
  const wrong = wrongChannel(action, r);
  if (wrong) return wrong;
  return {
    ok: true,
    action: {
      payload: envelope.payload,
      requirements: r,
      action,
      receiver: r.payTo as `0x${string}`,
      token: r.asset as `0x${string}`,
      needsAuthorizer: operation === "settle" && needsAuthorizer(action),
      vouchers: action.type === "claim" || action.type === "refund" ? (action.claims?.length ?? 0) : 0,
      identity: identityOf(action),
    },
  };
}

/** An action's id in the facilitator's table: its kind and a digest of what it does. */
export function actionId(kind: ChannelActionKind, identity: readonly string[]): string {
  const digest = crypto.createHash("sha256").update(JSON.stringify(identity.map((f) => f.toLowerCase())));
  return `${kind}:${digest.digest("hex")}`;
}

/** The first channel (or settle) that is not the requirements' receiver's in their token, as a refusal. */
function wrongChannel(action: ChannelActionPayload, r: PaymentRequirements): Rejection | undefined {
  const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  const targets: { receiver: string; token: string }[] =
    action.type === "settle"
      ? [{ receiver: action.receiver, token: action.token }]
      : [
          ...(action.type === "claim" ? [] : [action.channelConfig]),
          ...(action.type === "claim" || action.type === "refund" ? (action.claims ?? []) : []).map(
            (c) => c.voucher.channel,
          ),
        ];
  for (const target of targets) {
    if (!same(target.receiver, r.payTo)) {
      return refused(
        RECEIVER_MISMATCH,
        `receiver ${target.receiver} is not paymentRequirements.payTo ${r.payTo}`,
      );
    }
    if (!same(target.token, r.asset)) {
      return refused(TOKEN_MISMATCH, `token ${target.token} is not paymentRequirements.asset ${r.asset}`);
    }
  }
  // A refund claims its own channel only: its claims are the server's last voucher of that channel.
  if (
    action.type === "refund" &&
    action.claims?.some((c) => configKey(c.voucher.channel) !== configKey(action.channelConfig))
  ) {
    return refused(REFUND_PAYLOAD, "a refund's claims are of the refunded channel only");
  }
  return undefined;
}

/**
 * Whether the SDK would sign for the receiver: a claim without `claimAuthorizerSignature`, a refund without
 * `refundAuthorizerSignature`, or with claims and no `claimAuthorizerSignature`.
 */
function needsAuthorizer(action: ChannelActionPayload): boolean {
  if (action.type === "claim") return !action.claimAuthorizerSignature;
  if (action.type !== "refund") return false;
  return (
    !action.refundAuthorizerSignature ||
    ((action.claims?.length ?? 0) > 0 && !action.claimAuthorizerSignature)
  );
}

function identityOf(action: ChannelActionPayload): string[] {
  const claims = (action.type === "claim" || action.type === "refund" ? (action.claims ?? []) : []).flatMap(
    (c) => [configKey(c.voucher.channel), c.voucher.maxClaimableAmount, c.signature, c.totalClaimed],
  );
  switch (action.type) {
    case "claim":
      return claims;
    case "refund":
      return [configKey(action.channelConfig), action.amount ?? "", action.refundNonce ?? "", ...claims];
    case "settle":
      return [action.receiver, action.token];
    case "voucher":
      return [configKey(action.channelConfig), action.voucher.maxClaimableAmount, action.voucher.signature];
  }
}

function configKey(c: ChannelConfig): string {
  return [
    c.payer,
    c.payerAuthorizer,
    c.receiver,
    c.receiverAuthorizer,
    c.token,
    String(c.withdrawDelay),
    c.salt,
  ]
    .join("/")
    .toLowerCase();
}
