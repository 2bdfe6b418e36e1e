/**
 * The gas sponsoring a payment asks for, read from its extensions with the SDK's own extractors: an EIP-2612
 * permit giving Permit2 the allowance (`eip2612GasSponsoring`), or a signed raw `approve(Permit2, amount)`
 * transaction for this facilitator to fund and broadcast (`erc20ApprovalGasSponsoring`). As `@x402/evm`'s
 * schemes read them: the permit first when a payload carries both.
 */
import type { PaymentPayload } from "@x402/core/types";
import {
  type Eip2612GasSponsoringInfo,
  type Erc20ApprovalGasSponsoringInfo,
  extractEip2612GasSponsoringInfo,
  extractErc20ApprovalGasSponsoringInfo,
} from "@x402/extensions";

export const EIP2612_KEY = "eip2612GasSponsoring";
export const ERC20_APPROVAL_KEY = "erc20ApprovalGasSponsoring";

export type Sponsoring =
  | { kind: "eip2612"; info: Eip2612GasSponsoringInfo }
  | { kind: "erc20Approval"; info: Erc20ApprovalGasSponsoringInfo };

/** What the payment asks for, or undefined (no extension, or one without the buyer's fields: nothing to do). */
export function sponsoringOf(payload: PaymentPayload): Sponsoring | undefined {
  const permit = extractEip2612GasSponsoringInfo(payload);
  if (permit) return { kind: "eip2612", info: permit };
  const approval = extractErc20ApprovalGasSponsoringInfo(payload);
  return approval ? { kind: "erc20Approval", info: approval } : undefined;
}

/**
 * The fields the payer's sponsoring request binds, for the ledger's digest of the payment (authorization.ts):
 * /settle must carry the permit or approval /verify accepted.
 */
export function sponsoringFields(payload: PaymentPayload): string[] {
  const sponsoring = sponsoringOf(payload);
  if (!sponsoring) return [];
  if (sponsoring.kind === "eip2612") {
    const i = sponsoring.info;
    return ["eip2612", i.from, i.asset, i.spender, i.amount, i.nonce, i.deadline, i.signature];
  }
  const i = sponsoring.info;
  return ["erc20Approval", i.from, i.asset, i.spender, i.amount, i.signedTransaction];
}

/** The payload without its sponsoring extensions: what is settled when the wallet needs none. */
export function withoutSponsoring(payload: PaymentPayload): PaymentPayload {
  const extensions = payload.extensions;
  if (!extensions || !(EIP2612_KEY in extensions || ERC20_APPROVAL_KEY in extensions)) return payload;
  const { [EIP2612_KEY]: _permit, [ERC20_APPROVAL_KEY]: _approval, ...rest } = extensions;
  return { ...payload, extensions: rest };
}
