/**
 * A paid answer sent as it is produced (server-sent events of a chat reply), and settled for what reached
 * the caller.
 *
 * `@x402/hono` cannot pass a stream through: it reads the whole answer (`await res.arrayBuffer()`) before it
 * settles, because its receipt is a header (`PAYMENT-RESPONSE`) and the amount an `upto` payment settles is
 * a header of the answer (`setSettlementOverrides`), both needed before the first byte. A handler that
 * returns a `Streamed` therefore hands its stream to the kit (payments/paid-handler.ts): the middleware
 * lets the call go unsettled, and the kit sends the parts as the engine produces them, then settles through
 * the same resource server and facilitator once the stream has ended, and puts the receipt in the stream's
 * last event, the headers being long gone. The settlement never precedes the work; what it charges:
 *
 * - the stream completed: `exact` its price, `upto` its meter with everything delivered (`complete`);
 *   a channel (`batch-settlement`) as `upto` on a metered endpoint, as `exact` otherwise;
 * - the engine failed or the time budget ran out: `exact` nothing, `upto` its meter for the parts
 *   delivered (nothing when none was);
 * - the caller left: `exact` its price once a part was delivered (the caller chose to leave a reply it was
 *   receiving), else nothing; `upto` its meter for the parts delivered.
 *
 * A part is delivered once it is handed to the connection: the stream is pulled (a high-water mark of 0), so
 * a part is produced only when the connection can take it.
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { abortable } from "../../common/abortable.ts";
import { AppError } from "../../common/errors.ts";
import { log } from "../../common/log.ts";

/** How a streamed answer ended, for its last bytes. */
export interface StreamEnding {
  /** What ended it early: the engine's failure or the call's time budget (none: it completed). */
  error?: AppError;
  /** What the call was charged, in the token's atomic units (0: nothing). */
  charged: bigint;
  /** The `PAYMENT-RESPONSE` a settlement answered (base64 JSON), when one was attempted. */
  paymentResponse?: string;
}

export interface StreamedInit {
  /** The answer's headers, its content type among them. */
  headers: Record<string, string>;
  /** Sent first, as soon as the stream starts; costs nothing (a reply's opening event). */
  head: string;
  /** The parts, in order, as they are produced; each one sent costs what `meter` says. */
  parts: AsyncIterable<string>;
  /**
   * `upto` only: what the call costs once the first `delivered` parts reached the caller, `complete` when the
   * parts ran to their end (the engine's own count of its work is then known), at most the authorization.
   */
  meter(delivered: number, complete: boolean): bigint;
  /** The last bytes, once the payment's outcome is known (not sent to a caller that left). */
  end(ending: StreamEnding): string;
}

/** What a handler returns to stream its answer. */
export class Streamed {
  constructor(readonly init: StreamedInit) {}
}

/** What the kit settles with: `undefined` is the authorized amount (exact), else an `upto` amount. */
export type StreamSettle = (
  amount: bigint | undefined,
) => Promise<{ success: boolean; paymentResponse?: string }>;

/** How a streamed call ended, for the ledger (payments/ledger.ts's outcomes). */
export type StreamOutcome = "settled" | "unsettled" | "unpaid-left" | "unpaid-failed";

export interface PaidStreamOptions {
  /** Aborted when the caller leaves or the call's time budget ends; its reason says which. */
  signal: AbortSignal;
  /** The call is paid with `upto`: settled at its meter, not at its price. */
  upto: boolean;
  /** The authorized amount (exact's price), what `charged` says when exact settles. */
  price: bigint;
  settle: StreamSettle;
  /** Called when the stream ends with nothing to charge: what the payment holds is let go (a channel). */
  release?: () => Promise<void>;
  /** Called once, when the stream has ended and its payment is known; `receipt`: its PAYMENT-RESPONSE, if any. */
  finish(outcome: StreamOutcome, receipt?: string): Promise<void>;
  /** Whether the caller has left (its connection closed). */
  callerLeft(): boolean;
  /** Called when the caller left: stops the work. */
  leave(): void;
}

/** The body of a streamed paid answer: its head, its parts as produced, then its end once settled. */
export function paidStream(streamed: Streamed, options: PaidStreamOptions): ReadableStream<Uint8Array> {
  const { init } = streamed;
  const parts = init.parts[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  let delivered = 0;
  let gone = false;
  let concluded: Promise<string> | undefined;

  const conclude = (how: "complete" | "failed" | "left", error?: AppError) => {
    concluded ??= (async () => {
      const amount = chargeOf(how, delivered, options.upto, init);
      if (amount === null) {
        await options
          .release?.()
          .catch((e: unknown) => log("warn", "a payment could not be released", { error: e }));
        await options.finish(how === "left" ? "unpaid-left" : "unpaid-failed");
        return init.end({ ...(error && { error }), charged: 0n });
      }
      const settlement = await options.settle(options.upto ? amount : undefined).catch(() => ({
        success: false,
        paymentResponse: undefined,
      }));
      await options.finish(settlement.success ? "settled" : "unsettled", settlement.paymentResponse);
      return init.end({
        ...(error && { error }),
        charged: settlement.success ? (options.upto ? amount : options.price) : 0n,
        ...(settlement.paymentResponse && { paymentResponse: settlement.paymentResponse }),
      });
    })();
    return concluded;
  };

  const pull = async (controller: ReadableStreamDefaultController<Uint8Array>) => {
    let ending: string;
    try {
      const next = await abortable(parts.next(), options.signal);
      if (gone) return;
      if (!next.done) {
        controller.enqueue(encoder.encode(next.value));
        delivered++;
        return;
      }
      ending = await conclude("complete");
    } catch (error) {
      // The caller's leaving aborts the work too, which may be seen here before the stream is cancelled.
      if (gone || options.callerLeft()) {
        await conclude("left");
        return;
      }
      ending = await conclude("failed", asAppError(error));
    }
    if (gone) return;
    controller.enqueue(encoder.encode(ending));
    controller.close();
  };

  const cancel = async () => {
    gone = true;
    options.leave();
    // Not awaited: a generator waiting on a stalled engine returns only once the abort reaches it.
    parts.return?.().catch(() => undefined);
    await conclude("left");
  };

  // The server reads the stream once the request's middlewares have returned: its parts, its settlement
  // and what they log run in the request's context all the same (its id on their lines: common/log.ts).
  const within = AsyncLocalStorage.snapshot();
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        controller.enqueue(encoder.encode(init.head));
      },
      pull: (controller) => within(pull, controller),
      cancel: () => within(cancel),
    },
    { highWaterMark: 0 },
  );
}

/** What a stream that ended `how` is charged: null for nothing (no settlement at all). */
function chargeOf(
  how: "complete" | "failed" | "left",
  delivered: number,
  upto: boolean,
  init: StreamedInit,
): bigint | null {
  if (upto) return how === "complete" || delivered > 0 ? init.meter(delivered, how === "complete") : null;
  if (how === "complete" || (how === "left" && delivered > 0)) return 0n;
  return null;
}

/** A failure while streaming as what the caller is told; anything but an `AppError` is the handler's bug. */
function asAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  log("error", "a streamed answer failed", { error });
  return new AppError(500, "internal_error", "the answer failed while it was being sent", { cause: error });
}
