/**
 * Gas sponsoring around the SDK's verify and settle (docs/facilitator.md, "Gas sponsoring"): what
 * checks.ts decides for a payment, done. The SDK's own schemes do the sponsoring they know how to do (an
 * EIP-2612 permit goes into the proxy's `settleWithPermit`, the settlement's own transaction; a raw approval
 * goes to the extension's signer, approval.ts); this module decides, before they sign anything, whether
 * they may, and hands them the payload without its extensions when the wallet needs none.
 *
 * A payer's sponsored payments are decided and settled one at a time in this process: what one does (a
 * permit spends the token's nonce, an approval gives the allowance) changes the next one's decision, which
 * must read it from the chain, not race it.
 */
import type { FacilitatorExtension, PaymentPayload, SettleResponse } from "@x402/core/types";
import type { FacilitatorEvmSigner } from "@x402/evm";
import { EIP2612_GAS_SPONSORING } from "@x402/extensions";
import type { Chain, PublicClient, Transport } from "viem";
import type { Database } from "../../common/db/index.ts";
import type { GasBudgets } from "../access/index.ts";
import type { CheckedPayment } from "../authorization.ts";
import { settleFailure } from "../settle-answer.ts";
import type { Submitter } from "../submitter.ts";
import { approvalSponsoring, withApproval } from "./approval.ts";
import { type Decision, decideSponsoring } from "./checks.ts";
import { sponsoringOf, withoutSponsoring } from "./extension.ts";

export interface Sponsoring {
  /** The extensions the SDK's facilitator registers (and `/supported` lists). */
  readonly extensions: readonly FacilitatorExtension[];
  /** /verify: the payload the SDK judges, or why the sponsoring it asks for is refused. */
  forVerify(
    payment: CheckedPayment,
  ): Promise<{ payload: PaymentPayload } | { refused: { reason: string; message: string } }>;
  /**
   * /settle: `settle` (the SDK's, of the payload given) run as the sponsoring decides; a refusal is answered
   * without calling it, nothing sent.
   */
  settle(
    payment: CheckedPayment,
    settle: (payload: PaymentPayload) => Promise<SettleResponse>,
  ): Promise<SettleResponse>;
}

export interface SponsoringOptions {
  db: Database;
  client: PublicClient<Transport, Chain>;
  network: string;
  submitter: Submitter;
  signer: FacilitatorEvmSigner;
  budgets: GasBudgets;
  confirmationTimeoutMs: number;
  pollingIntervalMs: number;
}

export function createSponsoring(options: SponsoringOptions): Sponsoring {
  const checks = { client: options.client, facilitator: options.submitter.address };
  const tails = new Map<string, Promise<unknown>>();
  /** One sponsored payment of a payer's token at a time. */
  const oneAtATime = <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    const run = (tails.get(key) ?? Promise.resolve()).then(fn, fn);
    const tail = run.catch(() => undefined);
    tails.set(key, tail);
    tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return run;
  };
  return {
    extensions: [EIP2612_GAS_SPONSORING, approvalSponsoring(options)],
    async forVerify(payment) {
      const decision = await decideSponsoring(checks, payment);
      if (decision.kind === "refused") return { refused: decision };
      return { payload: payloadFor(payment, decision) };
    },
    settle(payment, settle) {
      if (!sponsoringOf(payment.payload)) return settle(payment.payload);
      const { key, terms } = payment;
      return oneAtATime(`${key.network}/${key.asset}/${key.payer}`, async () => {
        const decision = await decideSponsoring(checks, payment);
        if (decision.kind === "refused")
          return settleFailure(payment.requirements.network, decision.reason, decision.message, terms.payer);
        const payload = payloadFor(payment, decision);
        if (decision.kind !== "erc20Approval") return settle(payload);
        return withApproval({ key, payer: terms.payer, approval: decision.approval }, () => settle(payload));
      });
    },
  };
}

function payloadFor(
  payment: CheckedPayment,
  decision: Exclude<Decision, { kind: "refused" }>,
): PaymentPayload {
  return decision.kind === "plain" ? withoutSponsoring(payment.payload) : payment.payload;
}
