/**
 * POST /verify: the SDK's checks of an exact EIP-3009 payment (signature, recipient, amount, time window,
 * balance, a simulated transfer), plus what only a ledger knows: an authorization this facilitator is
 * settling or has settled is no longer valid, even before its transaction is mined. A valid payment gets
 * a ledger row, which is what later allows /settle.
 */
import type { x402Facilitator } from "@x402/core/facilitator";
import type { VerifyResponse } from "@x402/core/types";
import type { Chain, PublicClient, Transport } from "viem";
import { usdcAbi } from "../chain/usdc.ts";
import type { Database } from "../platform/db/index.ts";
import { NONCE_ALREADY_USED, UNEXPECTED_VERIFY_ERROR } from "./errors.ts";
import { findAuthorization, recordVerified } from "./ledger.ts";
import { checkPayment, type Scope } from "./wire.ts";

export interface VerificationOptions {
  db: Database;
  sdk: x402Facilitator;
  client: PublicClient<Transport, Chain>;
  scope: Scope;
}

export function createVerification({ db, sdk, client, scope }: VerificationOptions) {
  return async function verify(payload: unknown, requirements: unknown): Promise<VerifyResponse> {
    const checked = checkPayment(payload, requirements, scope);
    if (!checked.ok)
      return { isValid: false, invalidReason: checked.reason, invalidMessage: checked.message };
    const { payment } = checked;
    const payer = payment.eip3009.authorization.from;
    const used = (message: string): VerifyResponse => ({
      isValid: false,
      invalidReason: NONCE_ALREADY_USED,
      invalidMessage: message,
      payer,
    });

    const row = await findAuthorization(db, payment.key);
    if (row && row.state !== "verified" && row.state !== "failed") {
      return used(
        `this authorization is already ${row.state}${row.tx_hash ? ` (transaction ${row.tx_hash})` : ""}`,
      );
    }
    let result: VerifyResponse;
    try {
      // Asked directly: the SDK's own diagnosis reads it through Multicall3, which a devnet may lack.
      const onChain = await client.readContract({
        address: payment.requirements.asset as `0x${string}`,
        abi: usdcAbi,
        functionName: "authorizationState",
        args: [payment.eip3009.authorization.from, payment.eip3009.authorization.nonce],
      });
      if (onChain) return used("this authorization was already used on chain");
      result = await sdk.verify(payment.payload, payment.requirements);
    } catch (error) {
      console.error(JSON.stringify({ level: "error", msg: "verification threw", error: String(error) }));
      return {
        isValid: false,
        invalidReason: UNEXPECTED_VERIFY_ERROR,
        invalidMessage: (error as Error)?.message,
        payer,
      };
    }
    if (!result.isValid) return result;
    if (!(await recordVerified(db, payment))) return used("this authorization is being settled");
    return result;
  };
}
