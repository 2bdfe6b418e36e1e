/**
 * What became of each request to a paid route, for the metrics (src/common/metrics.ts): a request whose
 * handler ran is a paid request, counted by how its run ended (`countPaid`, called where the ledger
 * records it); any other answer of 400 or more is a refusal, counted by reason (`countRefusals`, first in
 * the route's chain). Nothing here reads a body: a refusal's reason is its error's code, or what its status
 * and the request say.
 */
import type { Context, MiddlewareHandler } from "hono";
import { AppError } from "../../common/errors.ts";
import { paidRequests, refusals } from "../../common/metrics.ts";
import type { MerchantEnv, PaidLabels } from "../merchant-env.ts";
import type { Outcome } from "./ledger/index.ts";
import { paymentHeader } from "./ledger/index.ts";

/** How a paid request ended: the ledger's outcome, or a settled payment whose writes were lost. */
export type PaidOutcome = Outcome | "write_failed";

export function countPaid(labels: PaidLabels, outcome: PaidOutcome): void {
  paidRequests.inc({ ...labels, outcome });
}

/** Counts the requests of a paid route that ran no handler and answered 400 or more, by reason. */
export function countRefusals(merchant: string): MiddlewareHandler<MerchantEnv> {
  return async function countRefusals(c, next) {
    await next();
    if (c.var.run || c.res.status < 400) return;
    refusals.inc({ merchant, reason: refusalReason(c) });
  };
}

/** The refusals of the unpaid limit, which answers before any route (src/common/rate-limit.ts). */
export function countUnpaidLimit(merchant: string): void {
  refusals.inc({ merchant, reason: "unpaid_limit" });
}

/**
 * A refusal's reason: the code of the error thrown (bad input, a malformed payment, a payment in use,
 * insufficient funds...), else what the payment middleware's answer says: a 402 to a request without a
 * payment asks for one (`payment_required`, a HEAD's too: its payment is never read), to one with a
 * payment refuses it (`payment_invalid`: the facilitator's verification, or requirements it does not
 * match); the kit's 503 is the facilitator out of reach.
 */
function refusalReason(c: Context<MerchantEnv>): string {
  if (c.error instanceof AppError) return c.error.code;
  switch (c.res.status) {
    case 402:
      return c.req.method !== "HEAD" && paymentHeader(c.req.raw) !== undefined
        ? "payment_invalid"
        : "payment_required";
    case 412:
      return "permit2_allowance_required";
    case 413:
      return "body_too_large";
    case 503:
      return "facilitator_unavailable";
    default:
      return c.error ? "internal" : `status_${c.res.status}`;
  }
}
