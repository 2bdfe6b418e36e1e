import type { Context } from "hono";
import { ConflictError, UpstreamError } from "../../common/errors.ts";
import type { AnyEndpoint, MerchantServices } from "../catalogue.ts";
import type { MerchantEnv } from "../input.ts";
import { paymentHeader, paymentKeyOf } from "./payment-key.ts";
import type { ReplayLocks } from "./replay-lock.ts";

export const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * Runs an endpoint's handler for a verified payment, once per authorization: the replay lock is taken
 * first (a concurrent request with the same payment gets 409 and, answering >= 400, is not charged), the
 * handler runs under a time budget, and a failed handler gives the lock back (nothing was charged).
 * `@x402/hono` settles only when the answer is below 400.
 */
export function paidHandler(
  endpoint: AnyEndpoint,
  resource: string,
  services: MerchantServices,
  locks: ReplayLocks,
) {
  return async function paidHandler(c: Context<MerchantEnv>): Promise<Response> {
    const header = paymentHeader(c.req.raw);
    // The payment middleware sits in front: no header here means the route was wired without it.
    if (!header) throw new Error(`${endpoint.path} reached its handler without a payment`);
    const key = paymentKeyOf(header);
    if (!(await locks.take(key, resource))) {
      throw new ConflictError(
        "this payment is already used by another request: each request needs its own signed payment",
        "payment_in_use",
      );
    }
    let succeeded = false;
    try {
      const response = await withBudget(
        endpoint.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        c.req.raw.signal,
        (signal) => endpoint.handler(c.var.input, { payer: key.payer, signal, services, request: c.req.raw }),
      ).then((result) => (result instanceof Response ? result : c.json(result)));
      succeeded = response.status < 400;
      return response;
    } finally {
      if (!succeeded) await locks.release(key);
    }
  };
}

/** Runs `work` with a signal that aborts after `ms` or when the caller leaves; a 504 when time runs out. */
async function withBudget<T>(
  ms: number,
  caller: AbortSignal,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new UpstreamError(`no answer within ${ms} ms`, "timeout", 504)),
    ms,
  );
  const onCallerGone = () => controller.abort(new UpstreamError("the caller went away", "aborted", 504));
  caller.addEventListener("abort", onCallerGone, { once: true });
  try {
    return await Promise.race([
      work(controller.signal),
      new Promise<never>((_, reject) => {
        controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    caller.removeEventListener("abort", onCallerGone);
  }
}
