/**
 * Retries charged once: x402's `payment-identifier` extension on every paid route (docs/platform.md,
 * "Retries charged once"). A buyer that lost an answer signs a fresh payment and sends the request again
 * with the same id; the merchant answers it with the answer it kept and settles nothing. The id is bound
 * to its payer and to the request (method, path, query, body: x402 #2307), so it buys that answer and no
 * other. Two middlewares share a request's state:
 * - `answerOnce`, outside the payment middleware: it reads the id (400 for a malformed one, or for none on
 *   a route that requires one) before anything is verified, and once the answer is settled keeps it, gives
 *   the id back when nothing was charged, or swaps in the kept answer of a retry;
 * - `claimPaymentId`, after verification (so the payer is proven, and a forged payment cannot read another
 *   wallet's answer): it claims the id, or finds it bought (the kept answer, handed to the payment
 *   middleware as a refusal so that it settles nothing), bound to another request (409), or being done by
 *   a concurrent request, whose answer it waits for.
 */
import { createHash, randomUUID } from "node:crypto";
import type { PaymentPayload } from "@x402/core/types";
import { PAYMENT_IDENTIFIER } from "@x402/extensions/payment-identifier";
import type { Context, MiddlewareHandler } from "hono";
import { AppError, BadInputError, ConflictError } from "../../../common/errors.ts";
import { log } from "../../../common/log.ts";
import { REQUEST_ID_HEADER } from "../../../common/request-log.ts";
import type { AnyEndpoint } from "../../endpoint.ts";
import type { MerchantEnv } from "../../merchant-env.ts";
import { decodedPayment } from "../decoded.ts";
import { paymentHeader, paymentOf } from "../ledger/index.ts";
import { DEFAULT_TIMEOUT_MS, hashedRequest } from "../paid-handler.ts";
import { requestHash } from "../receipts/index.ts";
import type { AnswerStore, Claim, StoredAnswer } from "./answer-store.ts";
import { checkedPaymentId } from "./payment-id-check.ts";
import { type PaymentIdSettings, paymentIdRequired } from "./payment-id-settings.ts";

/** The largest answer kept: a larger one (an image, a long transcript) is charged once and not answered again. */
export const MAX_STORED_ANSWER_BYTES = 4 * 1024 * 1024;

/** What a claim may take beyond the handler's budget: the settlement, a deposit landing on chain. */
const SETTLE_SECONDS = 60;

/** How often a retry waiting for a concurrent one's answer looks again. */
const POLL_MS = 100;

/** The header that tells a buyer its answer is the one its id bought before, sent again. */
export const REPLAYED_HEADER = "Payment-Id-Replayed";

/** Headers not kept with an answer: the connection's, the request's own, and what the host adds to each. */
const NOT_KEPT = new Set([
  "content-length",
  "connection",
  "date",
  "transfer-encoding",
  "keep-alive",
  "set-cookie",
]);
const requestsOwn = (name: string) =>
  name === REQUEST_ID_HEADER.toLowerCase() || name.startsWith("access-control-");
const keptHeader = (name: string) => !NOT_KEPT.has(name) && !requestsOwn(name);

/** A paid request's id, from `answerOnce` to `claimPaymentId` and back. */
interface IdState {
  id: string;
  requestHash: string;
  paymentHash: string;
  /** Set when this request holds the id (it does the work). */
  owner?: string;
  /** Set when the id bought this answer before: sent in place of what the payment middleware answered. */
  replay?: Response;
}

const states = new WeakMap<Request, IdState>();

export interface PaymentIdOptions {
  store: AnswerStore;
  settings: PaymentIdSettings;
}

/** The id a payment carries: absent (undefined), or one the extension's rules accept (else a 400). */
export function paymentIdOf(payload: PaymentPayload): string | undefined {
  if (payload.extensions?.[PAYMENT_IDENTIFIER] === undefined) return undefined;
  const { id, validation } = checkedPaymentId(payload);
  if (!validation.valid) {
    throw new BadInputError(
      `the payment's ${PAYMENT_IDENTIFIER} is not valid: ${(validation.errors ?? []).join("; ")}`,
      "invalid_payment_id",
    );
  }
  return id ?? undefined;
}

/**
 * The outer half (before `settleAndRecord`, after the input's check): reads the id, and once the payment
 * middleware has answered, keeps a charged answer, gives back the id of an uncharged one, or sends a
 * retry the answer its id bought.
 */
export function answerOnce(endpoint: AnyEndpoint, options: PaymentIdOptions): MiddlewareHandler<MerchantEnv> {
  const required = endpoint.paymentId === "required";
  return async function answerOnce(c, next) {
    const header = paymentHeader(c.req.raw);
    // No payment (the 402 is answered) or a HEAD (never charged): no id to keep.
    if (header === undefined || c.req.method === "HEAD") return next();
    let payload: PaymentPayload;
    try {
      payload = decodedPayment(header);
    } catch {
      // Not a payment: refused further in (payments/malformed.ts).
      return next();
    }
    const id = paymentIdOf(payload);
    if (id === undefined) {
      if (required) {
        throw new BadInputError(
          `${endpoint.path} requires a payment id: add the ${PAYMENT_IDENTIFIER} extension's id to the payment (@x402/extensions/payment-identifier), so that a retry is answered again and charged once`,
          "payment_id_required",
        );
      }
      return next();
    }
    const state: IdState = {
      id,
      requestHash: await requestHashOf(c),
      paymentHash: createHash("sha256").update(header).digest("hex"),
    };
    // The same payment sent again (a client that resends its request as it was): its authorization is
    // spent, so it would not verify again, and its payer was proven when it did.
    const resent = await options.store.resent(state.id, state.requestHash, state.paymentHash);
    if (resent) return replayed(resent);
    states.set(c.req.raw, state);
    await next();
    if (state.replay) {
      // Hono would copy the placeholder's headers onto the kept answer: only this request's own (CORS, its
      // id) are carried over.
      const own = [...c.res.headers].filter(([name]) => requestsOwn(name));
      for (const [name, value] of own) state.replay.headers.set(name, value);
      c.res = undefined;
      c.res = state.replay;
      return;
    }
    if (state.owner) await keep(c, state, state.owner, options.store);
  };
}

/**
 * The inner half (after the payment is verified, before the handler): this request takes the id and runs,
 * or gets what the id bought, or is refused (the id bound to another request or payer), or waits for a
 * concurrent request with the same id and request to be answered.
 */
export function claimPaymentId(
  endpoint: AnyEndpoint,
  options: PaymentIdOptions,
): MiddlewareHandler<MerchantEnv> {
  const leaseSeconds = Math.ceil((endpoint.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000) + SETTLE_SECONDS;
  const ttlSeconds = Math.max(options.settings.ttlSeconds, leaseSeconds);
  return async function claimPaymentId(c, next) {
    const state = states.get(c.req.raw);
    if (!state) return next();
    // The payer of a verified payment: its signature is known to be the payer's.
    const payer = paymentOf(paymentHeader(c.req.raw) as string).key.payer.toLowerCase();
    const owner = randomUUID();
    const deadline = Date.now() + leaseSeconds * 1000;
    const { id, requestHash, paymentHash } = state;
    const claim = { id, payer, requestHash, paymentHash, owner, leaseSeconds, ttlSeconds };
    for (;;) {
      const found: Claim = await options.store.claim(claim);
      switch (found.kind) {
        case "owner":
          state.owner = owner;
          return next();
        case "answered":
          state.replay = replayed(found.answer);
          // Any refusal keeps the payment middleware from settling: this payment is never used.
          return new Response(null, { status: 500 });
        case "conflict":
          throw new ConflictError(
            "this payment id was used for another request (or by another wallet): an id buys one request's answer; use a new id for a new request. Nothing was charged",
            "payment_id_conflict",
          );
        case "unstored":
          throw new ConflictError(
            "this payment id already bought this request, whose answer was streamed or too large to keep: it is not charged again, and not answered again; use a new id to ask again",
            "payment_id_unstored",
          );
      }
      // Running: another request with this id and this request does the work; its answer is this one's.
      if (Date.now() > deadline || c.req.raw.signal.aborted) {
        throw new AppError(
          409,
          "payment_id_in_progress",
          "a request with this payment id is still being answered: nothing was charged for this one; try again shortly",
          { headers: { "Retry-After": "5" } },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  };
}

/**
 * After the payment middleware: an answer that carries a settlement (the call was charged: any status, a
 * writing call's `write_failed_after_payment` too) is kept for the id; a streamed one is charged at its end
 * and cannot be kept, so the id is marked used; anything else was not charged and the id is given back.
 */
async function keep(
  c: Context<MerchantEnv>,
  state: IdState,
  owner: string,
  store: AnswerStore,
): Promise<void> {
  try {
    if (c.var.run?.stream) return await store.answered(state.id, owner, undefined);
    if (!c.res.headers.has("PAYMENT-RESPONSE")) return await store.release(state.id, owner);
    const body = new Uint8Array(await c.res.arrayBuffer());
    const headers = [...c.res.headers].filter(([name]) => keptHeader(name));
    const status = c.res.status;
    // Read, so sent from the bytes: its headers (CORS too) as they were.
    c.res = new Response(body, c.res);
    const fits = body.byteLength <= MAX_STORED_ANSWER_BYTES;
    await store.answered(state.id, owner, fits ? { status, headers, body } : undefined);
  } catch (error) {
    // The buyer has its answer; a retry with the id would wait for the lease and run again.
    log("error", "a payment id's answer could not be kept", { id: state.id, path: c.req.path, error });
  }
}

/** A kept answer, as sent again. */
function replayed(answer: StoredAnswer): Response {
  const response = new Response(answer.body.byteLength === 0 ? null : answer.body, {
    status: answer.status,
    headers: answer.headers,
  });
  response.headers.set(REPLAYED_HEADER, "true");
  return response;
}

/**
 * What the id is bound to: the request's hash as a charge's receipt states it (`requestHash`: the method, the
 * path, the query in order of name, the body, a form's fields and files in order of name), without its 0x.
 */
async function requestHashOf(c: Context<MerchantEnv>): Promise<string> {
  return (await requestHash(hashedRequest(c))).slice(2);
}

/** The merchant with its endpoints' ids required where the operator says so (X402M_PAYMENT_ID_REQUIRED). */
export function withPaymentIds<M extends { endpoints: readonly AnyEndpoint[] }>(
  merchant: M,
  settings: Pick<PaymentIdSettings, "required">,
): M {
  if (settings.required.length === 0) return merchant;
  return {
    ...merchant,
    endpoints: merchant.endpoints.map((endpoint) =>
      paymentIdRequired(settings, endpoint.path) ? { ...endpoint, paymentId: "required" as const } : endpoint,
    ),
  };
}
