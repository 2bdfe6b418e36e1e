/**
 * POST /verify of a payer's authorization (exact with EIP-3009 or Permit2, upto with Permit2, a
 * batch-settlement deposit): the SDK's checks (signature, recipient, amount, time window, balance, a simulated
 * transfer or deposit), plus what only a ledger knows: an authorization this facilitator is settling or has
 * settled is no longer valid, even before its transaction is mined. A valid payment gets a ledger row, which
 * is what later allows /settle. (A batch-settlement voucher or refund is verified by channels/actions.ts.)
 *
 * For speed (a verification is on every paid request's path), the usual exact case makes one chain round trip
 * and one ledger statement besides the SDK's CPU work (secp256k1 recovery):
 * - the SDK's chain reads (the payer's code, read twice by the SDK, and the simulated transfer) start
 *   together, before the SDK asks for them, and overlap with its recovery (see chain-reads.ts);
 * - the ledger's upsert itself refuses a row being settled or settled, so the row is read only when the
 *   upsert or the SDK refused, to say why;
 * - an authorization already used on chain fails the SDK's simulation (the token, or Permit2, refuses a
 *   used nonce); only then is the nonce read, to say so plainly.
 * The answers and their precedence (ledger, then used on chain, then the SDK's reason) are those of the
 * checks made one after the other, except that a failed diagnosis read leaves the SDK's refusal as is.
 */
import type { x402Facilitator } from "@x402/core/facilitator";
import type { VerifyResponse } from "@x402/core/types";
import { eip3009ABI } from "@x402/evm";
import { type Chain, getAddress, type PublicClient, parseSignature, type Transport } from "viem";
import type { Database } from "../common/db/index.ts";
import { log } from "../common/log.ts";
import { type CheckedPayment, transferOf } from "./authorization.ts";
import { findAuthorization, type LedgerRow, recordVerified } from "./authorization-ledger.ts";
import type { ChainReads, ContractRead } from "./chain-reads.ts";
import { INSUFFICIENT_FUNDS, NONCE_ALREADY_USED, UNEXPECTED_VERIFY_ERROR } from "./error-codes.ts";
import { fundsSuspected, lackOfFunds } from "./funds.ts";
import { authorizationUsed } from "./outcome.ts";
import type { Sponsoring } from "./sponsoring/index.ts";
import { checkPayment, type Scope } from "./wire.ts";

export interface VerificationOptions {
  db: Database;
  sdk: x402Facilitator;
  client: PublicClient<Transport, Chain>;
  /** The reads the SDK's signer makes: the ones verification starts early are shared with it. */
  reads: ChainReads;
  scope: Scope;
  /** Whether the gas sponsoring a payment asks for is done, and the payload the SDK judges (sponsoring/). */
  sponsoring: Sponsoring;
}

/** Ledger states in which an authorization may be (re)verified: nothing of it is on chain or on its way. */
const REVERIFIABLE: ReadonlySet<LedgerRow["state"]> = new Set(["verified", "failed"]);

export function createVerification({ db, sdk, client, reads, scope, sponsoring }: VerificationOptions) {
  return async function verify(payload: unknown, requirements: unknown): Promise<VerifyResponse> {
    const checked = checkPayment(payload, requirements, scope);
    if (!checked.ok)
      return { isValid: false, invalidReason: checked.reason, invalidMessage: checked.message };
    const { payment } = checked;
    const payer = payment.terms.payer;
    const used = (message: string): VerifyResponse => ({
      isValid: false,
      invalidReason: NONCE_ALREADY_USED,
      invalidMessage: message,
      payer,
    });

    const hold = reads.hold({ code: [payer], calls: simulationOf(payment) });
    let result: VerifyResponse;
    try {
      // Refused sponsoring is refused before the SDK reads or simulates anything of the payment.
      const judged = await sponsoring.forVerify(payment);
      if ("refused" in judged) {
        const { reason, message } = judged.refused;
        return { isValid: false, invalidReason: reason, invalidMessage: message, payer };
      }
      result = await sdk.verify(judged.payload, payment.requirements);
    } catch (error) {
      log("error", "verification threw", { error });
      // Still a refusal the ledger and the chain may explain better, below.
      result = {
        isValid: false,
        invalidReason: UNEXPECTED_VERIFY_ERROR,
        invalidMessage: (error as Error)?.message,
        payer,
      };
    } finally {
      hold.release();
    }
    // The usual case costs one statement: the upsert itself refuses a row that is being settled.
    if (result.isValid && (await recordVerified(db, payment))) return result;

    // A refusal, or a row on its way: the ledger's word comes first, whatever the chain says.
    const row = await findAuthorization(db, payment.key);
    if (row && !REVERIFIABLE.has(row.state)) {
      return used(
        `this authorization is already ${row.state}${row.tx_hash ? ` (transaction ${row.tx_hash})` : ""}`,
      );
    }
    if (result.isValid) return used("this authorization is being settled"); // it moved on, then back
    // A used nonce is worth saying plainly (the SDK's own diagnosis reads it through Multicall3, which a
    // devnet may lack). Asked directly, and only now.
    const onChain = await authorizationUsed(client, {
      method: transferOf(payment.signed),
      asset: payment.requirements.asset as `0x${string}`,
      payer,
      nonce: payment.terms.nonce,
    }).catch(() => false);
    if (onChain) return used("this authorization was already used on chain");
    const lacking = fundsSuspected(result.invalidReason) ? await lackOfFunds(client, payment) : undefined;
    return lacking
      ? { isValid: false, invalidReason: INSUFFICIENT_FUNDS, invalidMessage: lacking, payer }
      : result;
  };
}

/**
 * The transfer the SDK simulates for an exact payment's ECDSA signature (65 bytes), built as it builds it
 * (same ABI, same arguments) so that its call shares this one. Other signatures (smart wallets) and upto
 * payments are simulated by the SDK on its own.
 */
function simulationOf(payment: CheckedPayment): ContractRead[] {
  if (payment.signed.method !== "eip3009") return [];
  const { authorization: a, signature } = payment.signed.payload;
  if (signature.length !== 132) return [];
  try {
    const { v, yParity, r, s } = parseSignature(signature);
    return [
      {
        address: getAddress(payment.requirements.asset),
        abi: eip3009ABI,
        functionName: "transferWithAuthorization",
        args: [
          getAddress(a.from),
          getAddress(a.to),
          BigInt(a.value),
          BigInt(a.validAfter),
          BigInt(a.validBefore),
          a.nonce,
          v ?? yParity,
          r,
          s,
        ],
      },
    ];
  } catch {
    // Something the SDK's own parsing refuses too (e.g. a bad v): its simulation then fails by itself.
    return [];
  }
}
