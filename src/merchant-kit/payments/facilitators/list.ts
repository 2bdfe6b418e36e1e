/**
 * The failover's facilitators as it keeps them (payments/facilitators/failover.ts, which makes the calls through
 * them): the order a payment tries them in, what each supports, which failed lately, which verified a
 * payment, and what a failed call means.
 */
import type { FacilitatorClient } from "@x402/core/server";
import {
  FacilitatorResponseError,
  FacilitatorTimeoutError,
  type PaymentPayload,
  type PaymentRequirements,
  SettleError,
  type SupportedResponse,
  VerifyError,
} from "@x402/core/types";
import type { LogWriter } from "../../../common/log.ts";

/** One facilitator of the list. */
export interface NamedFacilitator {
  /** How logs and errors name it: its URL (never its headers). */
  name: string;
  client: FacilitatorClient;
  /** The settings that hold its credentials, named when it refuses them ("CDP_API_KEY_ID ..."). */
  credentials?: string;
}

/** Payments verified and not yet settled whose verifier is remembered; the oldest are forgotten first. */
const MAX_REMEMBERED = 10_000;

/** Headers that could not be made: nothing was sent. */
export class AuthHeadersError extends Error {}

/** No facilitator could do it: what each said, in order. A facilitator's trouble, as the SDK sees it. */
export class FacilitatorsUnavailableError extends FacilitatorResponseError {}

/** A facilitator of the list, with what the list learned of it. */
export interface Entry extends NamedFacilitator {
  supported?: SupportedResponse;
  asking?: Promise<SupportedResponse>;
  restUntil: number;
}

/** How a call failed: an `answer` stands; `notSent` and `refused` changed nothing; `unknown` may have. */
export type Failure = { kind: "answer" | "notSent" | "refused" | "unknown"; reason: string };

/**
 * The facilitators of `list`, in order, and what the failover learned of each: its `/supported`, whether it
 * failed lately (then it is tried after the others for `restMs`), and which verified a payment (asked first
 * to settle it).
 */
export class FacilitatorList {
  private readonly entries: Entry[];
  private readonly verifiers = new Map<string, Entry>();

  constructor(
    list: readonly NamedFacilitator[],
    private readonly restMs: number,
    private readonly log: LogWriter,
  ) {
    this.entries = list.map((f) => ({ ...f, restUntil: 0 }));
  }

  /** The facilitators of the list, in order, each as itself. */
  members(): readonly NamedFacilitator[] {
    return this.entries.map(({ name, client, credentials }) => ({ name, client, credentials }));
  }

  /** Their answers to `/supported` merged: per scheme and network, the first that lists it. */
  async supported(): Promise<SupportedResponse> {
    const answers = await Promise.allSettled(this.entries.map((e) => this.supportedOf(e)));
    const merged: SupportedResponse = { kinds: [], extensions: [], signers: {} };
    const failures: string[] = [];
    answers.forEach((answer, i) => {
      const entry = this.entries[i] as Entry;
      if (answer.status === "rejected") {
        failures.push(`${entry.name}: ${this.note(entry, "supported", answer.reason).reason}`);
        return;
      }
      for (const kind of answer.value.kinds) {
        const taken = merged.kinds.some(
          (k) => k.x402Version === kind.x402Version && k.scheme === kind.scheme && k.network === kind.network,
        );
        if (!taken) merged.kinds.push(kind);
      }
      for (const extension of answer.value.extensions)
        if (!merged.extensions.includes(extension)) merged.extensions.push(extension);
      for (const [network, signers] of Object.entries(answer.value.signers ?? {}))
        merged.signers[network] = [...new Set([...(merged.signers[network] ?? []), ...signers])];
    });
    if (failures.length === this.entries.length)
      throw new FacilitatorsUnavailableError(`no facilitator answered /supported: ${failures.join("; ")}`);
    return merged;
  }

  /**
   * The facilitators that can take this payment, the one that verified it first, then in order, those
   * that failed lately last. One that never answered `/supported` is asked when its turn comes.
   */
  async *candidates(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    first: Entry | undefined,
    failures: string[],
  ): AsyncGenerator<Entry> {
    const now = Date.now();
    const rest = this.entries.filter((e) => e !== first);
    const order = [
      ...(first ? [first] : []),
      ...rest.filter((e) => e.restUntil <= now),
      ...rest.filter((e) => e.restUntil > now),
    ];
    for (const entry of order) {
      let supported = entry.supported;
      if (!supported) {
        try {
          supported = await this.supportedOf(entry);
        } catch (error) {
          failures.push(`${entry.name}: ${this.note(entry, "supported", error).reason}`);
          continue;
        }
      }
      if (takes(supported, payload, requirements)) yield entry;
    }
  }

  /** A facilitator answered: it takes its turn in order again. */
  answered(entry: Entry): void {
    entry.restUntil = 0;
  }

  /** Classifies a failed call, rests the facilitator unless it answered, and logs it. */
  note(entry: Entry, call: "verify" | "settle" | "supported", error: unknown): Failure {
    const failure = classify(error, entry.credentials);
    if (failure.kind === "answer") {
      entry.restUntil = 0;
      return failure;
    }
    entry.restUntil = Date.now() + this.restMs;
    this.log(failure.kind === "refused" ? "error" : "warn", "a facilitator call failed", {
      facilitator: entry.name,
      call,
      outcome: failure.kind,
      error: failure.reason,
    });
    return failure;
  }

  /** The facilitator that verified the payment of `key` (`paymentKey`), while it is not settled. */
  verifierOf(key: string): Entry | undefined {
    return this.verifiers.get(key);
  }

  remember(payload: PaymentPayload, entry: Entry): void {
    const key = paymentKey(payload);
    this.verifiers.delete(key);
    this.verifiers.set(key, entry);
    if (this.verifiers.size > MAX_REMEMBERED) {
      const oldest = this.verifiers.keys().next().value;
      if (oldest !== undefined) this.verifiers.delete(oldest);
    }
  }

  /** The payment of `key` has its last word: no facilitator is asked for it first any more. */
  forget(key: string): void {
    this.verifiers.delete(key);
  }

  private supportedOf(entry: Entry): Promise<SupportedResponse> {
    entry.asking ??= entry.client
      .getSupported()
      .then((supported) => {
        entry.supported = supported;
        entry.restUntil = 0;
        return supported;
      })
      .finally(() => {
        entry.asking = undefined;
      });
    return entry.asking;
  }
}

/** The same payment, whichever call carries it: its signature. */
export function paymentKey(payload: PaymentPayload): string {
  const signature = (payload.payload as { signature?: unknown }).signature;
  return typeof signature === "string" ? signature : JSON.stringify(payload.payload);
}

/**
 * Whether a facilitator that answered `supported` can take this payment: it lists the scheme on the
 * network, and when the payment names the facilitator that must settle it (the `upto` scheme's Permit2
 * witness does), it signs as that one.
 */
function takes(
  supported: SupportedResponse,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
): boolean {
  const kind = supported.kinds.find(
    (k) =>
      k.x402Version === payload.x402Version &&
      k.scheme === requirements.scheme &&
      (k.network === requirements.network ||
        (k.network.endsWith(":*") && requirements.network.startsWith(k.network.slice(0, -1)))),
  );
  if (!kind) return false;
  const pinned = requirements.extra?.facilitatorAddress;
  if (typeof pinned !== "string") return true;
  const signers = [
    kind.extra?.facilitatorAddress,
    ...Object.entries(supported.signers ?? {})
      .filter(([network]) => network === requirements.network || network.endsWith(":*"))
      .flatMap(([, list]) => list),
  ];
  return signers.some((s) => typeof s === "string" && s.toLowerCase() === pinned.toLowerCase());
}

/** Connection errors raised before anything was sent. */
const NOT_SENT = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "CERT_HAS_EXPIRED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
]);

/**
 * What a failed call means. Statuses the client reports: 401/403 (credentials), 404/405 (not a
 * facilitator there) and 429 (rate limit) are refusals before any work; 408 and 5xx may come after work
 * (a settlement submitted, then the server failed); another 4xx in x402's shape is the facilitator's
 * judgement. Errors before the request left (no connection, headers that could not be made) changed
 * nothing; anything else may have.
 */
function classify(error: unknown, credentials?: string): Failure {
  const status =
    error instanceof VerifyError || error instanceof SettleError
      ? error.statusCode
      : Number(/failed \((\d{3})\)/.exec((error as Error)?.message ?? "")?.[1] ?? Number.NaN);
  const message = ((error as Error)?.message ?? String(error)).split("\n")[0]?.slice(0, 200) ?? "";
  if (error instanceof AuthHeadersError) return { kind: "notSent", reason: message };
  if (status === 401 || status === 403)
    return {
      kind: "refused",
      reason: `refused the merchant's credentials${credentials ? `, check ${credentials}` : ""} (${status}: ${message})`,
    };
  if (status === 404 || status === 405 || status === 429) return { kind: "refused", reason: message };
  if (status >= 400 && status < 500 && status !== 408)
    return error instanceof VerifyError || error instanceof SettleError
      ? { kind: "answer", reason: message }
      : { kind: "refused", reason: message };
  if (!Number.isNaN(status)) return { kind: "unknown", reason: message };
  if (error instanceof FacilitatorTimeoutError) return { kind: "unknown", reason: message };
  const code = errorCode(error);
  if (code && NOT_SENT.has(code)) return { kind: "notSent", reason: `${message} (${code})` };
  return { kind: "unknown", reason: code ? `${message} (${code})` : message };
}

/** The system error code under a `fetch failed` (its cause, or the first of an aggregate's). */
function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    const inner = (current as { errors?: unknown[] }).errors?.[0];
    current = (current as { cause?: unknown }).cause ?? inner;
  }
  return undefined;
}
