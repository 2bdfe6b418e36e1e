/**
 * What a transaction the SDK asks the signer to send is for, so that it is recorded before it is broadcast
 * and charged to the right key: a payer's authorization (a row of the authorization ledger) or a receiver's
 * channel action (a row of the channel actions). Nothing else is sent.
 *
 * The token's `transferWithAuthorization` and the x402 proxies' `settle` name their authorization in their
 * arguments (`keyOfCall`). The batch-settlement escrow's calls do not, or not whole (a deposit's ERC-3009
 * nonce is derived on chain; a claim, settle or refund is no payer's authorization): the settlement that
 * asks the SDK for them says what they are for (`withSubject`), and only that call of the escrow is then
 * sent for it.
 */
import { X402_BATCH_SETTLEMENT_ADDRESS } from "../chain/base.ts";
import { scopeSlot } from "../common/request-scope.ts";
import { type AuthorizationKey, keyOfCall } from "./authorization.ts";

export type CallSubject =
  | { kind: "authorization"; key: AuthorizationKey }
  /** `key`: where its gas is reserved and charged (the reservations are keyed like authorizations). */
  | { kind: "action"; id: string; key: AuthorizationKey };

/** The escrow's functions a channel action sends: `multicall` is a refund with its claim. */
const ACTION_CALLS: ReadonlySet<string> = new Set([
  "claimWithSignature",
  "settle",
  "refundWithSignature",
  "multicall",
]);

const current = scopeSlot<CallSubject>("settlement call subject");

/** Runs `fn` (the SDK's settle of one authorization or action) with what its transaction is for. */
export function withSubject<T>(subject: CallSubject, fn: () => Promise<T>): Promise<T> {
  return current.run(subject, fn);
}

/** What a contract call is for; throws (nothing is sent) when it is for nothing this facilitator tracks. */
export function subjectOfCall(
  network: string,
  call: { address: string; functionName: string; args: readonly unknown[] },
): CallSubject {
  if (call.address.toLowerCase() !== X402_BATCH_SETTLEMENT_ADDRESS.toLowerCase()) {
    return { kind: "authorization", key: keyOfCall(network, call) };
  }
  const subject = current.get();
  if (call.functionName === "deposit" && subject?.kind === "authorization") return subject;
  if (ACTION_CALLS.has(call.functionName) && subject?.kind === "action") return subject;
  throw new Error(`refusing to send the escrow's ${call.functionName}: not for the settlement under way`);
}
