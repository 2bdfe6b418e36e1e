import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { describe, expect, it } from "vitest";
import type { LedgerRow } from "../../src/facilitator/authorization-ledger.ts";
import { reasons } from "../../src/facilitator/index.ts";
import { alreadyDelivered, rowAnswer, settleFailure } from "../../src/facilitator/settle-answer.ts";

const NETWORK = "eip155:8453" as const;
const PAYER = "0x00000000000000000000000000000000000a11ce";
const HASH = `0x${"ab".repeat(32)}` as const;

/** A ledger row of an EIP-3009 authorization by PAYER, in `state`. */
function row(state: LedgerRow["state"], fields: Partial<LedgerRow> = {}): LedgerRow {
  return {
    network: NETWORK,
    asset: "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
    payer: PAYER,
    nonce: `0x${"01".repeat(32)}`,
    digest: "d",
    state,
    payment_payload: {
      x402Version: 2,
      payload: {
        signature: "0x",
        authorization: { from: PAYER, value: "1", validBefore: "9", nonce: `0x${"01".repeat(32)}` },
      },
    } as unknown as PaymentPayload,
    payment_requirements: { scheme: "exact" } as PaymentRequirements,
    tx_hash: null,
    tx_nonce: null,
    settled_amount: null,
    block_number: null,
    error_reason: null,
    error_message: null,
    claimed_at: null,
    updated_at: new Date(0),
    x402_version: 2,
    ...fields,
  };
}

describe("what /settle answers from a ledger row", () => {
  it("answers a settled row with its transaction, and what upto took", () => {
    expect(rowAnswer(NETWORK, row("settled", { tx_hash: HASH }))).toEqual({
      success: true,
      payer: PAYER,
      transaction: HASH,
      network: NETWORK,
    });
    const upto = row("settled", {
      tx_hash: HASH,
      payment_requirements: { scheme: "upto" } as PaymentRequirements,
      settled_amount: "7",
    });
    expect(rowAnswer(NETWORK, upto, { status: "success" })).toMatchObject({
      amount: "7",
      extensionResponses: { bazaar: { status: "success" } },
    });
  });

  it("answers a pending row with its hash, and a failed one with the hash only when it was mined", () => {
    expect(rowAnswer(NETWORK, row("pending", { tx_hash: HASH }))).toMatchObject({
      success: false,
      errorReason: reasons.SETTLEMENT_PENDING,
      transaction: HASH,
      payer: PAYER,
    });
    const dropped = row("failed", { tx_hash: HASH, error_reason: reasons.SETTLEMENT_DROPPED });
    expect(rowAnswer(NETWORK, dropped)).toMatchObject({
      errorReason: reasons.SETTLEMENT_DROPPED,
      transaction: "",
    });
    const reverted = row("failed", { tx_hash: HASH, block_number: 5n });
    expect(rowAnswer(NETWORK, reverted)).toMatchObject({
      errorReason: "invalid_transaction_state",
      transaction: HASH,
    });
  });

  it("answers a row being submitted, or released back to verified, with its reason", () => {
    expect(rowAnswer(NETWORK, row("submitting"))).toMatchObject({
      errorReason: reasons.SETTLEMENT_IN_PROGRESS,
      errorMessage: "another request is submitting this authorization",
    });
    expect(rowAnswer(NETWORK, row("verified"))).toMatchObject({
      errorReason: reasons.UNEXPECTED_SETTLE_ERROR,
    });
    const released = row("verified", { error_reason: reasons.INSUFFICIENT_FUNDS, error_message: "low" });
    expect(rowAnswer(NETWORK, released)).toMatchObject({
      errorReason: reasons.INSUFFICIENT_FUNDS,
      errorMessage: "low",
    });
  });

  it("leaves out an empty message and payer, and tells a later caller the nonce is used", () => {
    expect(settleFailure(NETWORK, "r")).toEqual({
      success: false,
      errorReason: "r",
      transaction: "",
      network: NETWORK,
    });
    const delivered = rowAnswer(NETWORK, row("settled", { tx_hash: HASH }));
    expect(alreadyDelivered(NETWORK, delivered)).toMatchObject({
      success: false,
      errorReason: reasons.NONCE_ALREADY_USED,
      payer: PAYER,
      transaction: "",
    });
  });
});
