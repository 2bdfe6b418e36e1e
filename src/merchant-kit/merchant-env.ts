/**
 * What the kit's middlewares pass along a paid request (Hono's variables), and the paid run among them. A
 * file of its own: input.ts sets the input, payments/paid-handler.ts the run and payments/counted.ts reads
 * it, and each imported the others' types from them, in a circle.
 */
import type { openWriteUnit, PaymentKey } from "./payments/ledger/index.ts";

/**
 * Hono variables the kit's middlewares pass along a paid request: the validated input, when the request
 * arrived, and its paid run once the handler has taken the payment's ledger row.
 */
export type MerchantEnv = { Variables: { input: unknown; arrivedAt: number; run?: PaidRun } };

/** A paid request's labels: its merchant, its route's pattern and the scheme it was paid with. */
export interface PaidLabels {
  merchant: string;
  route: string;
  scheme: string;
}

/** A paid request's run, from the ledger row taken to the outcome recorded. */
export interface PaidRun {
  key: PaymentKey;
  /** What the call costs at most (`exact` its price): a channel's deposit moves more than the call costs. */
  price: bigint;
  /** What its count in the metrics is labelled with. */
  labels: PaidLabels;
  /** The handler answered below 400 (so the middleware went on to settle). */
  handled: boolean;
  /** A guarded call not answered after its work began: its caller left, or it failed (`unpaidOutcome`). */
  unpaid?: "abandoned" | "failed";
  /** A streamed answer, sent in place of what the payment middleware saw; its outcome recorded at its end. */
  stream?: Response;
  unit?: Awaited<ReturnType<typeof openWriteUnit>>;
  /**
   * Ends the call's place among the calls a stop waits for (`PaidRunner.settling`) and its connection's
   * spare from the drain's cut (src/common/listen.ts), taken when its handler answered below 400: from then
   * on the middleware settles, and its outcome must be recorded (its write committed) before the process exits.
   */
  settling?: () => void;
}
