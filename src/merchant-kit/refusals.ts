/**
 * The refusals a paid route can answer, as its OpenAPI document lists them: those the kit answers for every
 * paid route (here, from what the endpoint declares: its input, method, scheme, effects and time budget)
 * and those the endpoint answers itself (`Endpoint.errors`). A status both give is one response with both
 * reasons. None is charged: the payment middleware settles only answers below 400.
 */
import {
  type AnyEndpoint,
  type ErrorStatus,
  type Errors,
  isMetered,
  offersChannels,
  offersExactPermit2,
  takesPermit2,
} from "./endpoint.ts";
import { DEFAULT_MAX_BODY_BYTES } from "./input.ts";
import { jsonSchemaOf, objectProperties } from "./json-schema.ts";
import { UNPAID_LIMIT } from "./payments/ledger/index.ts";
import { DEFAULT_TIMEOUT_MS, isGuarded } from "./payments/paid-handler.ts";

/** Whether a call carries input the kit checks: a body, or query or path parameters. */
export function takesInput(endpoint: AnyEndpoint): boolean {
  if (endpoint.method !== "GET") return true;
  return Object.keys(objectProperties(jsonSchemaOf(endpoint.input, "input")).properties).length > 0;
}

/** The refusals of a signed-in call (payments/extensions/siwx.ts), on a route that sells a period. */
const SIGN_IN_400 = " A SIGN-IN-WITH-X header that is not a signed message (invalid_sign_in).";
const SIGN_IN_402 =
  " Or a signed message (SIGN-IN-WITH-X) that does not sign in, answered with the error as JSON: it fails a check of its host, path, chain, time or signature (sign_in_invalid), it was used already (sign_in_replayed), or its wallet has no period of this path running, never paid or ended (access_not_paid), or none of its calls left (access_used); PAYMENT-REQUIRED carries a fresh challenge, and what to pay for a new period.";

/** The 402s of a call paid through a payment channel, beside the others. */
const CHANNEL_402 =
  " Through a payment channel: the channel is serving another call (invalid_batch_settlement_evm_channel_busy: try again when it has answered), or the voucher's cumulative amount is not what the merchant has charged so far (invalid_batch_settlement_evm_cumulative_amount_mismatch: the header's channelState and voucherState say what to sign against).";

/**
 * What the kit answers for a paid route besides its 200, by status: the input check and a malformed
 * `PAYMENT-SIGNATURE` (400), the payment middleware (402; 412 for a Permit2 payment, upto's or exact's,
 * without a Permit2 allowance), the ledger (409; 402 and 429 for guarded routes), the body limit (413,
 * every POST), the facilitator or the chain out of reach (503), the time budget (504).
 */
export function kitErrors(endpoint: AnyEndpoint): Errors {
  const guarded = isGuarded(endpoint);
  const seconds = (endpoint.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000;
  const malformed = `A PAYMENT-SIGNATURE header that is not an x402 payment, or an X-PAYMENT header that is not an x402 v1 payment (invalid_payment_signature): call without it to get the requirements. A payment whose payment-identifier id is malformed (invalid_payment_id)${
    endpoint.paymentId === "required"
      ? ", or that carries none: this route requires one (payment_id_required)"
      : ""
  }.`;
  return {
    400: `${
      takesInput(endpoint)
        ? `Bad input (invalid_input, or the body's type or syntax: the message names what), refused before any payment is asked for. ${malformed}`
        : malformed
    }${endpoint.accessSeconds ? SIGN_IN_400 : ""}`,
    402: `Payment required: the call came without a payment, or with one the facilitator refused (the header's error says why). The PAYMENT-REQUIRED header carries what to pay, to whom and on which network; the body says it to x402 v1 clients (x402Version 1, error, accepts: exact by EIP-3009 on the networks v1 names; none, and why, where v1 cannot pay), or is a paywall page for a browser (Accept: text/html), or empty ({}) after a v2 payment. An X-PAYMENT (v1) that pays none of them: no_matching_requirements, PAYMENT-REQUIRED beside.${
      guarded
        ? " Or the paying wallet's balance does not cover this call on top of its payments in flight (insufficient_funds), or a Solana payment draws from an account other than the wallet's own USDC account, the one whose balance is read (payment_source_not_own): refused before any work, with PAYMENT-REQUIRED too."
        : ""
    }${offersChannels(endpoint) ? CHANNEL_402 : ""}${endpoint.accessSeconds ? SIGN_IN_402 : ""}`,
    409: "This payment is already used by another request (payment_in_use): each request needs its own signed payment; the PAYMENT-REQUIRED header says what to pay. Or its payment id was used for another request or by another wallet (payment_id_conflict), bought an answer that was not kept (payment_id_unstored: streamed, or too large), or is still being answered for a concurrent request past this route's time budget (payment_id_in_progress).",
    ...(takesPermit2(endpoint) && {
      412: `${permit2Payments(endpoint)} from a wallet that has not approved Permit2 for the token (permit2_allowance_required, in the body and the PAYMENT-REQUIRED header's error): pay again with the gas sponsoring the 402 declares where its facilitator offers it (eip2612GasSponsoring: an EIP-2612 permit signed with the payment; erc20ApprovalGasSponsoring: a signed, unsent approval), which the facilitator carries out at its own gas, so a wallet holding only the token pays; or approve Permit2 once from the wallet.`,
    }),
    ...(endpoint.method !== "GET" && {
      413: `The body is larger than ${endpoint.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES} bytes (body_too_large), refused before any payment is asked for.`,
    }),
    ...(guarded && {
      429: `This wallet has ${UNPAID_LIMIT} paid calls in the last hour whose work went unpaid, left mid-work or failed (too_many_unpaid_calls): refused before any work; Retry-After says when it may call again.`,
    }),
    503: `The payment facilitator cannot be reached (facilitator_unavailable); Retry-After says when to try again.${
      guarded
        ? " Or the chain the paying wallet's balance is read from cannot be reached (chain_unavailable)."
        : ""
    }`,
    504: `No answer within the call's time budget of ${seconds} s (timeout).`,
  };
}

/** The payments of the endpoint that are Permit2 authorizations, as a 412 names them. */
function permit2Payments(endpoint: AnyEndpoint): string {
  if (!offersExactPermit2(endpoint)) return "An upto payment";
  const exact = "exact payment through Permit2 (extra.assetTransferMethod permit2)";
  return isMetered(endpoint) ? `An upto payment, or an ${exact},` : `An ${exact}`;
}

/** A refusal as documented: its reasons, kit's first, and that it is not charged. */
export interface Refusal {
  status: ErrorStatus;
  description: string;
  /** Whether the endpoint answers it itself too (then the kit's headers may be missing). */
  own: boolean;
}

/** Every refusal of a paid route, in status order: the kit's and the endpoint's own. */
export function refusalsOf(endpoint: AnyEndpoint): Refusal[] {
  return merged(kitErrors(endpoint), endpoint.errors ?? {});
}

/** Every refusal of a free route: its own only (no payment, no budget). */
export function freeRefusals(errors: Errors = {}): Refusal[] {
  return merged({}, errors);
}

function merged(kit: Errors, own: Errors): Refusal[] {
  const statuses = [...new Set([...Object.keys(kit), ...Object.keys(own)].map(Number))].sort((a, b) => a - b);
  return statuses.map((status) => {
    const reasons = [kit[status as ErrorStatus], own[status as ErrorStatus]].filter(Boolean);
    return {
      status: status as ErrorStatus,
      description: `${reasons.join(" ")} Not charged.`,
      own: own[status as ErrorStatus] !== undefined,
    };
  });
}
