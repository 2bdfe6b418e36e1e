/**
 * The 412 `permit2_allowance_required` in the kit's error shape. The SDK's middleware answers a Permit2
 * payment from a wallet without the allowance with 412, its reason in `PAYMENT-REQUIRED` and an empty body
 * (`{}`): a buyer reading the body learned nothing. Here the body says what it is and what to do, the
 * headers kept (the dialect of the endpoint then rewrites it, as every refusal of the kit).
 */
import { decodePaymentRequiredHeader } from "@x402/core/http";
import type { Env, MiddlewareHandler } from "hono";
import { errorBody } from "../../../common/errors.ts";

export const ALLOWANCE_REQUIRED = "permit2_allowance_required";

/** The payment middleware `payment`, its 412s answered with the kit's error (its answers are returned). */
export function answerAllowanceRequired<E extends Env>(payment: MiddlewareHandler<E>): MiddlewareHandler<E> {
  return async function allowanceRequired(c, next) {
    const answer = await payment(c, next);
    // A browser's paywall page stays as it is.
    if (
      !(answer instanceof Response) ||
      answer.status !== 412 ||
      !(answer.headers.get("content-type") ?? "").includes("application/json")
    )
      return answer;
    const headers = new Headers(answer.headers);
    await answer.body?.cancel();
    return new Response(JSON.stringify(errorBody(ALLOWANCE_REQUIRED, whatToDo(headers))), {
      status: 412,
      headers,
    });
  };
}

/** The message: why, and the ways out this 402 offers. */
function whatToDo(headers: Headers): string {
  let extensions: string[] = [];
  try {
    const required = decodePaymentRequiredHeader(headers.get("payment-required") ?? "");
    extensions = Object.keys(required.extensions ?? {});
  } catch {
    // No readable header: the message without the 402's particulars.
  }
  const sponsored = ["eip2612GasSponsoring", "erc20ApprovalGasSponsoring"].filter((k) =>
    extensions.includes(k),
  );
  const why =
    "this wallet has not approved Permit2 for the token, which a Permit2 payment (upto, or exact with extra.assetTransferMethod permit2) is taken through; nothing was charged.";
  const sponsoring =
    sponsored.length > 0
      ? ` Pay again with a client that fills the gas sponsoring this 402 declares (${sponsored.join(", ")}): it signs ${sponsored.includes("eip2612GasSponsoring") ? "an EIP-2612 permit" : "a raw approve(Permit2) transaction"} with the payment and the facilitator gives Permit2 the allowance at its own gas (@x402/evm's exact and upto clients do, given an RPC to read the token: new UptoEvmScheme(signer, { rpcUrl })). Or`
      : "";
  return `${why}${sponsoring}${sponsoring ? " approve" : " Approve"} Permit2 for the token once from the wallet (a transaction: it needs ETH for gas), or pay exact by EIP-3009 where the 402 offers it.`;
}
