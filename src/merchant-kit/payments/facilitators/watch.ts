/**
 * The facilitator as the merchant sees it: reachable or not. The x402 middleware turns a facilitator that
 * fails (down, timing out, answering 5xx) into a 402, which tells a buyer to sign and pay again, forever;
 * and `/healthz` said ok all the while. Here every facilitator call is watched: a call that throws marks
 * the request it served (so the kit answers 503 with `Retry-After` instead, never charged), and the
 * last outcome, or a fresh probe of `/supported`, is what `/healthz` reports.
 */
import type { FacilitatorClient } from "@x402/core/server";
import { SettleError, VerifyError } from "@x402/core/types";
import type { MiddlewareHandler } from "hono";
import { errorBody } from "../../../common/errors.ts";
import { log } from "../../../common/log.ts";
import { bounded, secondsSince, settlements, settleSeconds, verifySeconds } from "../../../common/metrics.ts";
import { notePayment } from "../../../common/request-log.ts";
import { scopeSlot } from "../../../common/request-scope.ts";

/** What a client is told to wait before trying again while the facilitator is away. */
export const FACILITATOR_RETRY_AFTER_S = 30;
/** How long a probe of `/supported` may take, and how long its answer is kept for `/healthz`. */
const PROBE_TIMEOUT_MS = 3_000;
const PROBE_KEPT_MS = 5_000;

export interface FacilitatorHealth {
  reachable: boolean;
  /** Since when it has been unreachable (ISO 8601), when it is. */
  since?: string;
  error?: string;
}

/** A remote facilitator's reasons, as labels: bounded, whatever it answers. */
const settleReason = bounded();

/** The facilitator calls of one request: whether one of them failed. */
const inRequest = scopeSlot<{ failed?: string }>("facilitator calls");

export class WatchedFacilitator implements FacilitatorClient {
  private failedSince: Date | null = null;
  private lastError: string | null = null;
  private probed: { at: number; done: Promise<void> } | null = null;
  /** Refusals of this merchant (401, 403, 429) already logged, by reason, until a call succeeds. */
  private readonly refusalsLogged = new Set<string>();

  constructor(private readonly inner: FacilitatorClient) {}

  async verify(...args: Parameters<FacilitatorClient["verify"]>): ReturnType<FacilitatorClient["verify"]> {
    const start = performance.now();
    let result = "error";
    try {
      const answer = await this.watch(() => this.inner.verify(...args));
      result = answer.isValid ? "valid" : "invalid";
      // The request's line says who paid, and how (src/common/request-log.ts).
      notePayment({ payer: answer.payer, scheme: args[1].scheme });
      return answer;
    } finally {
      verifySeconds.observe({ result }, secondsSince(start));
    }
  }

  /** Counted by outcome and reason: `error` when it threw (the kit answers 503, facilitatorTrouble). */
  async settle(...args: Parameters<FacilitatorClient["settle"]>): ReturnType<FacilitatorClient["settle"]> {
    const start = performance.now();
    let outcome = "error";
    let reason = "facilitator_unavailable";
    try {
      const answer = await this.watch(() => this.inner.settle(...args));
      notePayment(
        answer.success
          ? {
              payer: answer.payer,
              scheme: args[1].scheme,
              // What was settled: an `upto` payment's metered amount, else the requirements'.
              amount: answer.amount ?? args[1].amount,
              transaction: answer.transaction,
              network: answer.network,
            }
          : { settle_error: answer.errorReason ?? "unknown" },
      );
      outcome = answer.success ? "settled" : "failed";
      reason = answer.success ? "none" : settleReason(answer.errorReason ?? "unknown");
      return answer;
    } finally {
      settleSeconds.observe({ outcome }, secondsSince(start));
      settlements.inc({ outcome, reason });
    }
  }

  getSupported(): ReturnType<FacilitatorClient["getSupported"]> {
    return this.watch(() => this.inner.getSupported());
  }

  /**
   * Reachable or not: the last facilitator call's outcome, after a probe of `/supported` (one at most every
   * `PROBE_KEPT_MS`, waited for at most `PROBE_TIMEOUT_MS`).
   */
  async health(): Promise<FacilitatorHealth> {
    const now = Date.now();
    if (!this.probed || now - this.probed.at > PROBE_KEPT_MS) {
      const probe = this.getSupported().then(
        () => undefined,
        () => undefined,
      );
      const limit = new Promise<void>((resolve) => setTimeout(resolve, PROBE_TIMEOUT_MS).unref());
      this.probed = { at: now, done: Promise.race([probe, limit]) };
    }
    await this.probed.done;
    return this.current();
  }

  /** The last facilitator call's error while it fails, else undefined. */
  failing(): string | undefined {
    return this.failedSince ? (this.lastError ?? "unknown") : undefined;
  }

  /**
   * A facilitator that refuses this merchant (no API key, a key that does not allow its payee, a key over
   * its rate or budget: 401, 403, 429) says why in its answer, which the SDK turns into a 402 for the buyer
   * and nothing for the operator. The operator reads it here, once per reason until a call succeeds.
   */
  logRefusal(error: unknown, message: string): void {
    if (!(error instanceof VerifyError || error instanceof SettleError)) return;
    if (![401, 403, 429].includes(error.statusCode)) return;
    const reason = (error instanceof VerifyError ? error.invalidReason : error.errorReason) ?? "refused";
    if (this.refusalsLogged.has(reason)) return;
    this.refusalsLogged.add(reason);
    log("error", "the facilitator refuses this merchant's payments", {
      status: error.statusCode,
      reason,
      error: message.slice(0, 300),
    });
  }

  private current(): FacilitatorHealth {
    if (!this.failedSince) return { reachable: true };
    return { reachable: false, since: this.failedSince.toISOString(), error: this.lastError ?? "unknown" };
  }

  private async watch<T>(call: () => Promise<T>): Promise<T> {
    try {
      const answer = await call();
      this.failedSince = null;
      this.lastError = null;
      this.refusalsLogged.clear();
      return answer;
    } catch (error) {
      // Anything thrown is the facilitator's trouble: a buyer's bad payment comes back as an answer.
      const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
      this.logRefusal(error, message ?? "");
      this.failedSince ??= new Date();
      this.lastError = (message ?? "").slice(0, 300);
      const request = inRequest.get();
      if (request) request.failed = this.lastError;
      throw error;
    }
  }
}

/**
 * Around the x402 middleware: a request whose facilitator call failed gets a 503 with `Retry-After` in the
 * project's error shape, where the middleware would answer 402 (or fail). Nothing was charged: the
 * payment was not verified, or its settlement did not happen. The middleware's first request awaits the
 * facilitator's `/supported`, asked when the host was built (outside any request): if that failed, the
 * middleware answers a bare 500 of its own, which is the facilitator's trouble too.
 */
export function facilitatorTrouble(facilitator: WatchedFacilitator): MiddlewareHandler {
  return async function facilitatorTrouble(c, next) {
    const request: { failed?: string } = {};
    await inRequest.run(request, () => next());
    // A 500 the middleware answered (nothing thrown), while the facilitator is known to fail.
    const failed = request.failed ?? (c.res.status >= 500 && !c.error ? facilitator.failing() : undefined);
    if (failed === undefined || (c.res.status !== 402 && c.res.status < 500)) return;
    c.res = c.json(
      errorBody(
        "facilitator_unavailable",
        `the payment facilitator cannot be reached (${failed}); nothing was charged: try again in ${FACILITATOR_RETRY_AFTER_S} s`,
      ),
      503,
      { "retry-after": String(FACILITATOR_RETRY_AFTER_S) },
    );
  };
}
