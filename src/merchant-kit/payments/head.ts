import type { Context, MiddlewareHandler } from "hono";

/** Where a buyer's payment travels: v2's header and v1's. */
const PAYMENT_HEADERS = ["payment-signature", "x-payment"];

/**
 * HEAD of a paid GET route (discovery clients probe with it): GET's answer to a request without a
 * payment, whose body Hono drops: the 402 with `PAYMENT-REQUIRED` (or a 400 for bad input, a 503 while the
 * facilitator is away, as GET would). Never verified, settled or run, even with a payment attached: HEAD
 * must not change anything (RFC 9110 9.3.2) and has no body to deliver what was paid for; the buyer's
 * authorization stays unused, for the GET. Without this, Hono routes HEAD to the GET route while
 * `@x402/hono` matches its routes by the request's method, so HEAD passed the paywall unasked and the
 * paid handler refused to run without a payment (a 500).
 *
 * `payment` is the route's payment middleware, run on the request as an unpaid GET: the answer is the
 * middleware's own, headers and all.
 */
export function headAsUnpaidGet(
  payment: MiddlewareHandler,
  around: MiddlewareHandler = (_c, next) => next(),
): MiddlewareHandler {
  return async function headAsUnpaidGet(c, next) {
    if (c.req.method !== "HEAD") return next();
    await around(c, async () => {
      c.res = await asUnpaidGet(c, payment);
    });
    return c.res;
  };
}

async function asUnpaidGet(c: Context, payment: MiddlewareHandler): Promise<Response> {
  const head = c.req.raw;
  const headers = new Headers(head.headers);
  for (const name of PAYMENT_HEADERS) headers.delete(name);
  c.req.raw = new Request(head.url, { method: "GET", headers, signal: head.signal });
  try {
    const answer = await payment(c, async () => {
      throw new Error(`${c.req.path}: the payment middleware let an unpaid GET through`);
    });
    if (!answer) throw new Error(`${c.req.path}: the payment middleware gave no answer to an unpaid GET`);
    return answer;
  } finally {
    c.req.raw = head;
  }
}
