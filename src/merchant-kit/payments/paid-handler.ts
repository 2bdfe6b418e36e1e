import type { Socket } from "node:net";
import { SETTLEMENT_OVERRIDES_HEADER } from "@x402/core/server";
import type { Context, MiddlewareHandler, Next } from "hono";
import { abortable } from "../../common/abortable.ts";
import { AppError, ConflictError, errorBody, UpstreamError } from "../../common/errors.ts";
import type { Unfinished } from "../../common/lifecycle.ts";
import { spareFromCut } from "../../common/listen.ts";
import { log } from "../../common/log.ts";
import { holdRequestLine } from "../../common/request-log.ts";
import { type ChannelRequest, channelRequest, inChannelRequest } from "../channels/index.ts";
import {
  type AnyEndpoint,
  CHANNEL_SCHEME,
  isMetered,
  type MerchantServices,
  schemesOf,
} from "../endpoint.ts";
import type { MerchantEnv, PaidRun } from "../merchant-env.ts";
import { countPaid } from "./counted.ts";
import { DEFAULT_TIMEOUTS } from "./facilitators/index.ts";
import {
  type FundsReader,
  foreignSource,
  type Outcome,
  openWriteUnit,
  type PaymentLedger,
  paymentHeader,
  paymentOf,
  settlementOf,
  UNPAID_LIMIT,
  UNPAID_WINDOW_SECONDS,
} from "./ledger/index.ts";
import { type HashedRequest, inReceiptRequest, requestHash } from "./receipts/index.ts";
import { paidStream, Streamed, type StreamSettle } from "./streamed.ts";

export const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * How long a stop waits, at most, for paid calls between their settlement and their commit: a facilitator's
 * settle time-out (`DEFAULT_TIMEOUTS.settleMs`), then the chain's grace and the commit. Past it the call's
 * settlement is as unknown to the merchant as to the facilitator client, which has given up on it too.
 */
export const SETTLING_MAX_MS = DEFAULT_TIMEOUTS.settleMs + 30_000;

/** What the kit needs to run paid handlers: the ledger, the payer's funds, and a 402's requirements. */
export interface PaidRunner {
  /** The merchant's name, for the metrics (payments/counted.ts). */
  merchant: string;
  ledger: PaymentLedger;
  funds: FundsReader;
  /**
   * How this request's verified payment is settled later (a streamed answer's): found now, used at the end;
   * `release` gives a channel's reservation back when the stream ends with nothing to charge.
   */
  settlement(c: Context<MerchantEnv>): Promise<StreamSettle & { release(): Promise<void> }>;
  /** The `PAYMENT-REQUIRED` header of this request's route, with `error` set, for refusals after verify. */
  paymentRequired(c: Context<MerchantEnv>, error: string): Promise<Record<string, string>>;
  /**
   * The calls between their handler's answer (the middleware then settles) and their outcome recorded, a
   * writing call's transaction committed: a stop waits for them (src/common/lifecycle.ts, `Unfinished`).
   */
  settling?: Unfinished;
}

/**
 * Runs an endpoint's handler for a verified payment (`@x402/hono`'s middleware sits in front, and settles
 * after it when the answer is below 400), once per authorization and never for more than the payer can
 * pay. In order:
 * 1. the payment's ledger row is taken: a concurrent request with the same payment gets 409
 *    `payment_in_use` (with the route's `PAYMENT-REQUIRED`, so a client can pay anew); for an endpoint
 *    that writes or costs upstream, only if the payer's balance covers it on top of its payments in
 *    flight, else 402 `insufficient_funds` (on Solana, only from the payer's own USDC account, else 402
 *    `payment_source_not_own`: ledger/svm-funds.ts);
 * 2. an endpoint that writes gets a transaction as its database, left open for `settleAndRecord`;
 * 3. what the handler needs is loaded (`load`), then the handler runs under its time budget (a 504 when it
 *    runs out);
 * 4. a metered call's answer (`upto`, or a channel's on an endpoint that offers `upto`) carries what the
 *    handler metered, which the middleware settles instead of the authorized maximum. A channel's charge
 *    is its state's, in the merchant's database (channels/): for a writing call it is written in the call's
 *    transaction, so the writes and the charge commit together.
 * Every refusal answers >= 400, so nothing is charged. A guarded call that its caller leaves, or whose
 * upstream or engine fails once the handler runs, is charged nothing and counts against the payer (ledger.ts,
 * unpaid calls): a payer with too many recently is refused with 429 `too_many_unpaid_calls` before any work.
 */
export function paidHandler(
  endpoint: AnyEndpoint,
  resource: string,
  services: MerchantServices,
  runner: PaidRunner,
): MiddlewareHandler<MerchantEnv> {
  const guarded = isGuarded(endpoint);
  const writes = endpoint.effects?.includes("writes") ?? false;
  // The scheme a payment used, when the route offers one only: not read from each payment (13 µs a decode).
  const [only, ...more] = schemesOf(endpoint);
  const offered = more.length === 0 ? only : undefined;
  return async function paidHandler(c) {
    const header = paymentHeader(c.req.raw);
    // The payment middleware sits in front: no header here means the route was wired without it.
    if (!header) throw new Error(`${endpoint.path} reached its handler without a payment`);
    const payment = paymentOf(header);
    const { key } = payment;
    // The scheme the buyer chose among those the 402 offered (verified: one the route offers): under upto,
    // or through a channel, the handler of an endpoint that offers upto meters the call.
    const scheme = offered ?? payment.scheme ?? "unknown";
    const channel = scheme === CHANNEL_SCHEME;
    const metered = isMetered(endpoint) && (scheme === "upto" || channel);
    if (guarded) {
      const foreign = await foreignSource(key);
      if (foreign) {
        throw new AppError(402, "payment_source_not_own", foreign, {
          headers: await runner.paymentRequired(c, "payment_source_not_own"),
        });
      }
      const reservation = await runner.ledger.reserve(key, resource, c.var.arrivedAt, runner.funds);
      if (reservation.status === "in_use") throw await inUse(c, runner);
      if (reservation.status === "unpaid") {
        throw new AppError(
          429,
          "too_many_unpaid_calls",
          `this wallet has ${UNPAID_LIMIT} paid calls in the last ${UNPAID_WINDOW_SECONDS / 60} minutes whose work was done and not paid (it left them while they ran, or they failed): try again in ${reservation.retryAfter} s`,
          { headers: { "Retry-After": String(reservation.retryAfter) } },
        );
      }
      if (reservation.status === "insufficient") {
        throw new AppError(
          402,
          "insufficient_funds",
          `this wallet holds ${reservation.balance} atomic units of the token and has ${reservation.inFlight} in payments not yet settled: not enough for this call's ${key.amount} as well; wait for them to settle or add funds`,
          { headers: await runner.paymentRequired(c, "insufficient_funds") },
        );
      }
    } else if (!(await runner.ledger.take(key, resource))) {
      throw await inUse(c, runner);
    }
    const run: PaidRun = {
      key,
      price: payment.price,
      handled: false,
      labels: { merchant: runner.merchant, route: endpoint.path, scheme },
    };
    c.set("run", run);
    if (writes) run.unit = await openWriteUnit(services.db);
    // The channel's charge goes in the writing call's transaction (channels/storage.ts).
    const request = channelRequest();
    if (channel && run.unit && request) request.tx = run.unit.db;
    let charged: bigint | undefined;
    const meter = metered
      ? (atomic: bigint) => {
          if (atomic < 0n || atomic > payment.price) {
            throw new Error(
              `${endpoint.path} metered ${atomic}, outside 0..${payment.price} (its authorization)`,
            );
          }
          charged = atomic;
        }
      : undefined;
    await endpoint.load?.();
    // Its caller gone before the work starts (a stop's drain cut the connection while the call waited for its
    // funds or the database): nothing is done, so nothing is charged or counted against the payer. Run, the
    // call would settle after the stop has stopped waiting for such calls (a budget misses an abort that
    // came before it).
    if (c.req.raw.signal.aborted) {
      throw new AppError(503, "caller_gone", "the caller went away before the call ran: nothing was done");
    }
    const budget = startBudget(endpoint.timeoutMs ?? DEFAULT_TIMEOUT_MS, c.req.raw.signal);
    let response: Response;
    try {
      const result = await budget.race(
        endpoint.handler(c.var.input, {
          payer: key.payer,
          signal: budget.signal,
          services: run.unit ? { ...services, db: run.unit.db } : services,
          request: c.req.raw,
          ...(meter && { meter }),
        }),
      );
      if (result instanceof Streamed) {
        if (run.unit) throw new Error(`${endpoint.path} streamed an answer of a writing call`);
        response = await handOff(c, run, result, { budget, metered, guarded, runner });
        return response;
      }
      response = result instanceof Response ? result : c.json(result);
      if (metered && response.status < 400) {
        // A handler that answers without saying what it cost is a bug: refused (500), so not charged.
        if (charged === undefined) throw new Error(`${endpoint.path} answered without metering its call`);
        response = withSettlementAmount(response, charged);
      }
    } catch (error) {
      // Stops what the handler may have left running (a stream it could not hand off).
      budget.abort(error);
      budget.end();
      if (guarded) run.unpaid = unpaidOutcome(c.req.raw.signal, error);
      throw error;
    }
    budget.end();
    if (guarded && response.status >= 400 && c.req.raw.signal.aborted) run.unpaid = "abandoned";
    run.handled = response.status < 400;
    if (run.handled) {
      // From here the middleware settles: a stop waits for the outcome, and its drain does not cut the
      // connection that is to carry the answer and its receipt.
      const tracked = runner.settling?.start(`${endpoint.path} settling (payer ${key.payer})`);
      const spared = spareFromCut((c.env as { incoming?: { socket?: Socket } } | undefined)?.incoming);
      run.settling = () => {
        tracked?.();
        spared();
      };
    }
    return response;
  };
}

/**
 * A streamed answer leaves the payment middleware unsettled, and the kit settles it once the stream has
 * ended (payments/streamed.ts says why and for how much). The middleware settles only answers below 400,
 * so it is handed this placeholder, which never leaves the process: `settleAndRecord`, around the
 * middleware, answers the stream in its place. The requirements it settles are found now, while the
 * request is whole, so that a failure there is an answer, not a broken stream.
 */
async function handOff(
  c: Context<MerchantEnv>,
  run: PaidRun,
  streamed: Streamed,
  how: { budget: Budget; metered: boolean; guarded: boolean; runner: PaidRunner },
): Promise<Response> {
  const settle = await how.runner.settlement(c);
  // The middleware gives a channel's reservation back when it sees the placeholder: not while streaming.
  const request = channelRequest();
  if (request) request.handedOff = true;
  // The request's line waits for the stream's end, and says how it ended (src/common/request-log.ts).
  const line = holdRequestLine();
  const body = paidStream(streamed, {
    signal: how.budget.signal,
    upto: how.metered,
    price: run.price,
    settle,
    release: settle.release,
    callerLeft: () => c.req.raw.signal.aborted,
    leave: () => how.budget.abort(new UpstreamError("the caller went away", "aborted", 504)),
    finish: async (outcome, receipt) => {
      how.budget.end();
      // Unpaid, as any call: counted against a guarded endpoint's payer, given back otherwise.
      const recorded: Outcome =
        outcome === "settled" || outcome === "unsettled"
          ? outcome
          : !how.guarded
            ? "released"
            : outcome === "unpaid-left"
              ? "abandoned"
              : "failed";
      countPaid(run.labels, recorded);
      const settlement = recorded === "settled" ? settlementOf(run.key, receipt) : undefined;
      await how.runner.ledger.finish(run.key, recorded, undefined, settlement).catch((error: unknown) => {
        log("error", "a streamed call's outcome could not be recorded", { payer: run.key.payer, error });
      });
      line?.({ stream: outcome });
    },
  });
  run.stream = new Response(body, { status: 200, headers: streamed.init.headers });
  return new Response(null, { status: STREAM_HANDED_OFF });
}

/** The placeholder's status: any refusal's keeps the middleware from settling. */
const STREAM_HANDED_OFF = 500;

/**
 * How a guarded call whose handler threw counts against its payer: `abandoned` when the caller left,
 * `failed` when what it depends on failed or timed out (an `UpstreamError`: an upstream's or an engine's
 * error, the call's time budget), it crashed (anything but an `AppError`) or it was refused after its work
 * (`afterWork`: a page past its CPU budget), in each case after work the merchant may have paid for; none for
 * a refusal (any other `AppError`, whatever its status: bad input, a provider not configured), which the
 * handler decides before its work.
 */
function unpaidOutcome(caller: AbortSignal, failure: unknown): PaidRun["unpaid"] {
  if (caller.aborted) return "abandoned";
  if (failure instanceof AppError)
    return failure instanceof UpstreamError || failure.afterWork ? "failed" : undefined;
  return "failed";
}

/**
 * Whether the payer's funds are reserved before the endpoint runs: it writes or costs upstream, or it is
 * metered (its cost is known only once it has run, and the payer must then be able to pay it).
 */
export function isGuarded(endpoint: AnyEndpoint): boolean {
  return (endpoint.effects?.length ?? 0) > 0 || isMetered(endpoint);
}

/** The answer, telling the payment middleware to settle `atomic` instead of the authorized maximum. */
function withSettlementAmount(response: Response, atomic: bigint): Response {
  const copy = new Response(response.body, response);
  copy.headers.set(SETTLEMENT_OVERRIDES_HEADER, JSON.stringify({ amount: atomic.toString() }));
  return copy;
}

/**
 * Wraps the payment middleware: after it has settled (or not), records the outcome in the ledger and
 * ends a writing handler's transaction: committed only with a settled payment, rolled back otherwise.
 * A commit that fails after the payment settled is the one case a payer is charged for nothing: it
 * answers 500 with the settlement's receipt (PAYMENT-RESPONSE) and is logged as an error. Not through a
 * channel: there the charge is in the same transaction (channels/storage.ts), so nothing is charged either.
 * A channel call whose state could not be saved (the database failed as its charge was written) is not
 * answered: 500, nothing delivered, nothing charged.
 */
export function settleAndRecord(ledger: PaymentLedger): MiddlewareHandler<MerchantEnv> {
  return async function settleAndRecord(c, next) {
    c.set("arrivedAt", Date.now());
    try {
      await recorded(c, next);
    } finally {
      c.var.run?.settling?.();
    }
  };

  async function recorded(c: Context<MerchantEnv>, next: Next): Promise<void> {
    let request: ChannelRequest | undefined;
    // A signed receipt states the request it paid for: hashed when one is signed (payments/receipts/receipts.ts).
    await inReceiptRequest(
      () => requestHash(hashedRequest(c)),
      () =>
        inChannelRequest(() => {
          request = channelRequest();
          return next();
        }),
    );
    const run = c.var.run;
    if (!run) return;
    if (run.stream) {
      // The headers set on the way (CORS) carry over to the stream.
      c.res = run.stream;
      return;
    }
    let settled = run.handled && c.res.status < 400 && c.res.headers.has("PAYMENT-RESPONSE");
    if (settled && request?.unsaved !== undefined) {
      settled = false;
      c.res = unsavedChannel(c, run, request.unsaved);
      // Hono carries the settled answer's headers over to the one that replaces it: not its receipt.
      c.res.headers.delete("PAYMENT-RESPONSE");
    }
    const outcome: Outcome = !run.handled ? (run.unpaid ?? "released") : settled ? "settled" : "unsettled";
    // The transaction that settled it, where the ledger keeps it (a Solana payment's: ledger/svm-funds.ts).
    const settlement = settled ? settlementOf(run.key, c.res.headers.get("PAYMENT-RESPONSE")) : undefined;
    if (!run.unit) {
      countPaid(run.labels, outcome);
      await ledger.finish(run.key, outcome, undefined, settlement);
      return;
    }
    let committed = false;
    try {
      if (settled) await ledger.finish(run.key, outcome, run.unit.db, settlement);
      await run.unit.finish(settled);
      committed = settled;
    } catch (error) {
      await run.unit.finish(false).catch(() => undefined);
      await releaseChannel(request, committed);
      if (!settled) {
        countPaid(run.labels, outcome);
        throw error;
      }
      countPaid(run.labels, "write_failed");
      log("error", "a settled payment's write could not be committed", {
        payer: run.key.payer,
        nonce: run.key.nonce,
        path: c.req.path,
        error,
      });
      c.res = writeFailed(c, run);
      // A channel's charge was in the transaction that failed: no receipt says otherwise.
      if (run.labels.scheme === CHANNEL_SCHEME) c.res.headers.delete("PAYMENT-RESPONSE");
      return;
    }
    await releaseChannel(request, committed);
    countPaid(run.labels, outcome);
    if (!settled) await ledger.finish(run.key, outcome);
  }
}

/** The request as its hash reads it: the body as the input's check left it (JSON as text, a form parsed). */
/** The request a handler serves, as `requestHash` reads it. */
export function hashedRequest(c: Context<MerchantEnv>): HashedRequest {
  return {
    method: c.req.method,
    url: c.req.url,
    contentType: c.req.header("content-type"),
    form: () => c.req.parseBody({ all: true }) as ReturnType<HashedRequest["form"]>,
    bytes: async () => new Uint8Array(await c.req.arrayBuffer()),
  };
}

/**
 * After a writing call's transaction ended: when it did not commit, the channel reservation the call held
 * is given back (the release written inside the transaction was undone with it), outside it.
 */
async function releaseChannel(request: ChannelRequest | undefined, committed: boolean): Promise<void> {
  if (committed || !request?.release) return;
  const release = request.release;
  request.release = undefined;
  await release().catch((error: unknown) => {
    log("warn", "a channel's reservation could not be given back; it expires on its own", { error });
  });
}

/** The answer of a writing call whose commit failed after its payment was settled. */
function writeFailed(c: Context<MerchantEnv>, run: PaidRun): Response {
  // A channel's charge was in the transaction that failed: nothing was charged, and no receipt says so.
  if (run.labels.scheme === CHANNEL_SCHEME) {
    return c.json(
      errorBody(
        "write_failed",
        "the write could not be saved: nothing was stored and nothing was charged to the channel; try again",
      ),
      500,
    );
  }
  const receipt = c.res.headers.get("PAYMENT-RESPONSE") as string;
  return c.json(
    errorBody(
      "write_failed_after_payment",
      "the payment settled but the write could not be saved: nothing was stored; the merchant has been told (PAYMENT-RESPONSE carries the settlement)",
    ),
    500,
    { "PAYMENT-RESPONSE": receipt },
  );
}

/**
 * The answer of a channel call whose charge could not be saved. The SDK logs the failure and goes on, and
 * a deposit's call would be answered with the deposit on chain and no charge recorded: the work is withheld
 * instead, and its receipt too (a client would count a charge the merchant does not have). The deposit is
 * the payer's, in its channel.
 */
function unsavedChannel(c: Context<MerchantEnv>, run: PaidRun, error: unknown): Response {
  log("error", "a channel's charge could not be saved: the answer is withheld", {
    payer: run.key.payer,
    path: c.req.path,
    error,
  });
  return c.json(
    errorBody(
      "channel_state_unsaved",
      "the merchant could not record this call's charge, so it is not answered: nothing was charged (a deposit stays in your channel); try again",
    ),
    500,
  );
}

async function inUse(c: Context<MerchantEnv>, runner: PaidRunner): Promise<AppError> {
  return new ConflictError(
    "this payment is already used by another request: each request needs its own signed payment",
    "payment_in_use",
    { headers: await runner.paymentRequired(c, "payment_in_use") },
  );
}

/** A call's time budget: its signal aborts after `ms` (a 504) or when the caller leaves. */
export interface Budget {
  signal: AbortSignal;
  /** `work`, or the budget's reason once it runs out. */
  race<T>(work: Promise<T>): Promise<T>;
  abort(reason: unknown): void;
  /** The call is over: no more time-out. */
  end(): void;
}

export function startBudget(ms: number, caller: AbortSignal): Budget {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new UpstreamError(`no answer within ${ms} ms`, "timeout", 504)),
    ms,
  );
  const onCallerGone = () => controller.abort(new UpstreamError("the caller went away", "aborted", 504));
  caller.addEventListener("abort", onCallerGone, { once: true });
  return {
    signal: controller.signal,
    race: (work) => abortable(work, controller.signal),
    abort: (reason) => controller.abort(reason),
    end: () => {
      clearTimeout(timer);
      caller.removeEventListener("abort", onCallerGone);
    },
  };
}
