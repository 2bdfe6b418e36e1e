import { describe, expect, it } from "vitest";
import { reasons } from "../../src/facilitator/index.ts";
import { chainFailure, unsentFailure } from "../../src/facilitator/settle-failures.ts";

const NETWORK = "eip155:8453" as const;
const HASH = `0x${"ab".repeat(32)}` as const;

describe("why a settlement failed", () => {
  it("records what the chain decided against a broadcast transaction", () => {
    expect(chainFailure({ status: "reverted", blockNumber: 9n, cost: 1n }, HASH)).toEqual({
      reason: "invalid_transaction_state",
      message: `transaction ${HASH} was mined in block 9 without transferring`,
      blockNumber: 9n,
    });
    expect(chainFailure({ status: "dropped" }, HASH)).toMatchObject({ reason: reasons.SETTLEMENT_DROPPED });
    expect(chainFailure({ status: "settled_elsewhere" }, HASH)).toMatchObject({
      reason: reasons.SETTLED_ELSEWHERE,
    });
  });

  it("releases an unsent one with the key's refusal first, then the payer's lack of funds, then the SDK's reason", () => {
    const sdk = {
      success: false,
      errorReason: "invalid_exact_evm_transaction_simulation_failed",
      errorMessage: "m",
    };
    const answer = { ...sdk, transaction: "", network: NETWORK };
    const refusal = { reason: reasons.KEY_OVER_BUDGET, message: "over" };
    expect(unsentFailure(answer, refusal, "lacks")).toEqual(refusal);
    expect(unsentFailure(answer, undefined, "lacks")).toEqual({
      reason: reasons.INSUFFICIENT_FUNDS,
      message: "lacks",
    });
    expect(unsentFailure(answer, undefined, undefined)).toEqual({ reason: sdk.errorReason, message: "m" });
    expect(unsentFailure({ ...answer, errorReason: undefined }, undefined, undefined)).toMatchObject({
      reason: reasons.UNEXPECTED_SETTLE_ERROR,
    });
  });
});
