/**
 * The merchants' facilitators, tried in order: one `FacilitatorClient` over several (docs/platform.md,
 * "Facilitators"). When one is down (refused connection, time-out, 5xx) or refuses to answer (401, 403,
 * 404, 429), the next verifies and settles; an answer (a payment judged invalid, a settlement that
 * failed) is final.
 *
 * A payment is never settled by two. The chain refuses a second use of an EIP-3009 nonce, so two
 * facilitators submitting one authorization move the money once; what the failover adds is that it never
 * hands a settlement on while the facilitator it left may still be moving it. After a failure that leaves
 * the outcome unknown (a time-out, a connection dropped after the request was sent, a 5xx), the
 * authorization's state is read on the chain, watched for `settledGraceMs`: used by the authorized
 * transfer, the payment is settled (by that transaction, whoever sent it); used otherwise, it never will
 * be; still unused, the next facilitator may settle it, after verifying it itself (a facilitator such as
 * the project's own settles only what it verified). A payment that cannot be checked on the chain (a
 * Permit2 authorization, the `upto` scheme's or `exact`'s through the Permit2 proxy; an RPC that cannot be
 * read) is never handed on after such a failure: its outcome stays unknown, as it would with one facilitator.
 */
import type { FacilitatorClient } from "@x402/core/server";
import type {
  Network,
  PaymentPayload,
  PaymentRequirements,
  SettleResponse,
  SupportedResponse,
  VerifyResponse,
} from "@x402/core/types";
import { isBatchSettlementClaimPayload, isBatchSettlementSettlePayload } from "@x402/evm";
import { type LogWriter, limitedLog } from "../../../common/log.ts";
import { currentRequestId, REQUEST_ID_HEADER } from "../../../common/request-log.ts";
import { sleep } from "../../../common/sleep.ts";
import type { PathHeaders } from "./auth.ts";
import { FacilitatorHttpClient } from "./http-client.ts";
import {
  AuthHeadersError,
  FacilitatorList,
  FacilitatorsUnavailableError,
  type NamedFacilitator,
  paymentKey,
} from "./list.ts";
import type { AuthorizationReader, AuthorizedTransfer, ChainWord } from "./settled-on-chain.ts";

// What callers of the failover name with it: its error, and a facilitator of its list.

export interface FailoverOptions {
  /** Reads authorizations on the payments' chain; without it an unknown settlement is never handed on. */
  chain?: AuthorizationReader;
  /** How long the chain is watched for a settlement whose outcome a facilitator left unknown. */
  settledGraceMs?: number;
  /** How often the chain is read meanwhile. */
  pollMs?: number;
  /** How long a failed facilitator is tried after the others (a success ends it sooner). */
  restMs?: number;
  log?: LogWriter;
}

/** Base makes a block every 2 s: a transaction the facilitator had sent is on chain within a few. */
const SETTLED_GRACE_MS = 10_000;

/** How long an authorization the chain shows used is watched for its transaction, at least: a few blocks. */
const USED_LOOK_MS = 5_000;
const POLL_MS = 1_000;
/** As long as a merchant tells buyers to wait when no facilitator answers (`FACILITATOR_RETRY_AFTER_S`). */
const REST_MS = 30_000;

/** Time-outs of one facilitator's calls: an answer, and a settlement (which may wait for its block). */
export interface FacilitatorTimeouts {
  answerMs: number;
  settleMs: number;
}

/** The SDK client's settle time-out; verify and `/supported` answer without the chain's wait. */
export const DEFAULT_TIMEOUTS: FacilitatorTimeouts = { answerMs: 15_000, settleMs: 90_000 };

/**
 * A facilitator over HTTP at `url` (the SDK client's wire, http-client.ts), with the headers
 * `createAuthHeaders` makes per call (`facilitatorAuthHeaders`), and the `X-Request-Id` of the request the
 * call serves, so that the facilitator's line of it has the same id as the merchant's (src/common/request-log.ts).
 */
export function httpFacilitator(
  url: string,
  createAuthHeaders?: () => Promise<PathHeaders>,
  timeouts: FacilitatorTimeouts = DEFAULT_TIMEOUTS,
): FacilitatorClient {
  const auth = async (): Promise<PathHeaders> => {
    let headers: PathHeaders | undefined;
    try {
      headers = await createAuthHeaders?.();
    } catch (error) {
      throw new AuthHeadersError(`cannot make its auth headers: ${(error as Error).message}`);
    }
    return withRequestId(headers);
  };
  return new FacilitatorHttpClient({
    url,
    createAuthHeaders: auth,
    timeoutMs: timeouts.answerMs,
    settleTimeoutMs: timeouts.settleMs,
  });
}

const NO_HEADERS: PathHeaders = { verify: {}, settle: {}, supported: {} };

/** `headers` and, within a request, its id on each path's. */
function withRequestId(headers: PathHeaders | undefined): PathHeaders {
  const id = currentRequestId();
  if (id === undefined) return headers ?? NO_HEADERS;
  const add = (path: Record<string, string> = {}) => ({ ...path, [REQUEST_ID_HEADER]: id });
  return { verify: add(headers?.verify), settle: add(headers?.settle), supported: add(headers?.supported) };
}

/**
 * The facilitators of `list`, in order, as one client: `getSupported` merges their answers (per scheme
 * and network, the first that lists it), `verify` and `settle` fail over as the module's comment says. The
 * order they are tried in, and what a failed call means, are the list's (facilitator-list.ts).
 *
 * @example
 * const facilitator = new FailoverFacilitator(
 *   [
 *     { name: url, client: httpFacilitator(url, facilitatorAuthHeaders(url, {}, cdpKey)) },
 *     { name: ours, client: httpFacilitator(ours, facilitatorAuthHeaders(ours, { Authorization: "Bearer k" }, null)) },
 *   ],
 *   { chain: networkAuthorizationReader(paymentNetworks(config.payments)) },
 * );
 */
export class FailoverFacilitator implements FacilitatorClient {
  /** The facilitators in the order a payment tries them, and how each fared lately. */
  private readonly list: FacilitatorList;
  private readonly graceMs: number;
  private readonly pollMs: number;
  private readonly log: LogWriter;

  constructor(
    list: readonly NamedFacilitator[],
    private readonly options: FailoverOptions = {},
  ) {
    if (list.length === 0) throw new Error("FailoverFacilitator needs at least one facilitator");
    this.graceMs = options.settledGraceMs ?? SETTLED_GRACE_MS;
    this.pollMs = options.pollMs ?? POLL_MS;
    this.log = options.log ?? limitedLog({ lines: 20, perMs: 60_000 });
    this.list = new FacilitatorList(list, options.restMs ?? REST_MS, this.log);
  }

  /** The facilitators of the list, in order, each as itself (payments/facilitators/offers.ts asks each apart). */
  members(): readonly NamedFacilitator[] {
    return this.list.members();
  }

  getSupported(): Promise<SupportedResponse> {
    return this.list.supported();
  }

  async verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    const failures: string[] = [];
    for await (const entry of this.list.candidates(payload, requirements, undefined, failures)) {
      try {
        const answer = await entry.client.verify(payload, requirements);
        this.list.answered(entry);
        if (answer.isValid) this.list.remember(payload, entry);
        return answer;
      } catch (error) {
        const failure = this.list.note(entry, "verify", error);
        if (failure.kind === "answer") throw error;
        failures.push(`${entry.name}: ${failure.reason}`);
      }
    }
    throw this.unavailable("verify", requirements, failures);
  }

  async settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    const key = paymentKey(payload);
    const transfer = authorizedTransfer(payload, requirements);
    const failures: string[] = [];
    // Set while a facilitator may have moved the payment: nothing more is sent until the chain says no.
    let unknown = false;
    // Set once the payment went on after such a failure: the one left behind may still land it first.
    let handedOn = false;
    let attempts = 0;
    for await (const entry of this.list.candidates(
      payload,
      requirements,
      this.list.verifierOf(key),
      failures,
    )) {
      if (unknown) {
        const word = transfer ? await this.watch(transfer) : undefined;
        if (!word || !transfer) break;
        if (word.state !== "unused") return this.chainAnswer(word, requirements.network, transfer, key);
        unknown = false;
        handedOn = true;
      }
      if (attempts++ > 0 && verifiable(payload)) {
        // Handed on: this facilitator judges the payment itself first (and will settle only what it verified).
        try {
          const judged = await entry.client.verify(payload, requirements);
          if (!judged.isValid)
            return this.lastWord(refusedAnswer(judged, requirements), transfer, handedOn, key);
          this.list.remember(payload, entry);
        } catch (error) {
          const failure = this.list.note(entry, "verify", error);
          if (failure.kind === "answer") throw error;
          failures.push(`${entry.name}: ${failure.reason}`);
          continue;
        }
      }
      try {
        const answer = await entry.client.settle(payload, requirements);
        this.list.answered(entry);
        // The SDK asks once more about a pending settlement: the same facilitator is asked first.
        if (answer.errorReason === "settlement_pending") {
          this.list.remember(payload, entry);
          return answer;
        }
        return this.lastWord(answer, transfer, handedOn, key);
      } catch (error) {
        const failure = this.list.note(entry, "settle", error);
        if (failure.kind === "answer") {
          this.list.forget(key);
          throw error;
        }
        failures.push(`${entry.name}: ${failure.reason}`);
        if (failure.kind === "unknown") unknown = true;
      }
    }
    if (unknown && transfer) {
      const word = await this.watch(transfer);
      if (word && word.state !== "unused" && word.state !== "unknown")
        return this.chainAnswer(word, requirements.network, transfer, key);
    }
    throw this.unavailable("settle", requirements, failures, unknown);
  }

  /**
   * A facilitator's final answer. After a hand-on, a refusal may mean the facilitator left behind landed
   * the payment meanwhile (its transaction first, this one's refused): the chain has the last word.
   */
  private async lastWord(
    answer: SettleResponse,
    transfer: AuthorizedTransfer | undefined,
    handedOn: boolean,
    key: string,
  ): Promise<SettleResponse> {
    this.list.forget(key);
    if (answer.success || !handedOn || !transfer) return answer;
    const word = await this.watch(transfer);
    // Used without its transaction found yet (or only in the node's pending state): the refusal is not the last
    // word, the one left behind may be landing it; the outcome is unknown, never a refusal the chain may undo.
    return word?.state === "settled" || word?.state === "unknown"
      ? this.chainAnswer(word, answer.network, transfer, key)
      : answer;
  }

  /**
   * Reads the authorization until the chain shows it settled or used elsewhere, or `settledGraceMs` has passed;
   * undefined when the chain cannot be read.
   */
  private async watch(transfer: AuthorizedTransfer): Promise<ChainWord | undefined> {
    const chain = this.options.chain;
    if (!chain) return undefined;
    const started = Date.now();
    for (let reads = 1; ; reads++) {
      let word: ChainWord;
      try {
        word = await chain.read(transfer);
      } catch (error) {
        this.log("warn", "cannot read a settlement's authorization on the chain", { error: String(error) });
        return undefined;
      }
      if (word.state !== "unused" && word.state !== "unknown") return word;
      // Used, its transaction not found yet, is read again too, for at least USED_LOOK_MS whatever the grace: the
      // money has moved, and a node may show a block's state before its logs; answering then would refuse a paid
      // call (a failover test under a busy CI run took that moment for the last word, and answered it 402). And
      // at least twice: one slow read must not spend that time.
      const waited = Date.now() - started;
      if (
        word.state === "unused"
          ? waited >= this.graceMs
          : reads >= 2 && waited >= Math.max(this.graceMs, USED_LOOK_MS)
      )
        return word;
      await sleep(this.pollMs);
    }
  }

  /** The settlement's answer from the chain's word: settled by its transaction, or never. */
  private chainAnswer(
    word: ChainWord,
    network: Network,
    transfer: AuthorizedTransfer,
    key: string,
  ): SettleResponse {
    this.list.forget(key);
    if (word.state === "settled")
      return {
        success: true,
        transaction: word.hash,
        network,
        payer: transfer.from,
        amount: String(transfer.value),
      };
    if (word.state === "elsewhere")
      return {
        success: false,
        errorReason: "invalid_exact_evm_nonce_already_used",
        errorMessage: "the authorization was used on chain without this payment's transfer",
        transaction: "",
        network,
        payer: transfer.from,
      };
    throw new FacilitatorsUnavailableError(
      "the settlement's outcome is unknown: its authorization is used on chain but its transaction was not found",
    );
  }

  private unavailable(
    call: "verify" | "settle",
    requirements: PaymentRequirements,
    failures: string[],
    unknown = false,
  ): FacilitatorsUnavailableError {
    const why =
      failures.length > 0
        ? failures.join("; ")
        : `none supports ${requirements.scheme} on ${requirements.network}`;
    return new FacilitatorsUnavailableError(
      unknown
        ? `the settlement's outcome is unknown (${why})`
        : `no facilitator could ${call} the payment (${why})`,
    );
  }
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;

/** The transfer an `exact` EIP-3009 payment authorizes to this merchant, or undefined (another kind). */
function authorizedTransfer(
  payload: PaymentPayload,
  requirements: PaymentRequirements,
): AuthorizedTransfer | undefined {
  const authorization = (payload.payload as { authorization?: { from?: unknown; nonce?: unknown } })
    .authorization;
  const { from, nonce } = authorization ?? {};
  if (requirements.scheme !== "exact" || typeof from !== "string" || typeof nonce !== "string")
    return undefined;
  if (!ADDRESS.test(from) || !BYTES32.test(nonce) || !ADDRESS.test(requirements.asset)) return undefined;
  if (!ADDRESS.test(requirements.payTo) || !/^\d+$/.test(requirements.amount)) return undefined;
  return {
    asset: requirements.asset as `0x${string}`,
    from: from as `0x${string}`,
    to: requirements.payTo as `0x${string}`,
    value: BigInt(requirements.amount),
    nonce: nonce as `0x${string}`,
    network: requirements.network,
  };
}

/**
 * Whether a facilitator verifies this payload before settling it. A batch-settlement claim or sweep is no
 * buyer's payment but the receiver's own action, sent straight to /settle (x402 spec; the SDK's channel
 * manager never verifies one, and facilitators refuse to); the facilitator checks it as it submits it.
 */
function verifiable(payload: PaymentPayload): boolean {
  const inner = payload.payload;
  return !isBatchSettlementClaimPayload(inner) && !isBatchSettlementSettlePayload(inner);
}

/** A refusal from the facilitator a settlement was handed to, in a settlement's shape. */
function refusedAnswer(judged: VerifyResponse, requirements: PaymentRequirements): SettleResponse {
  return {
    success: false,
    errorReason: judged.invalidReason ?? "invalid_payment",
    errorMessage: judged.invalidMessage,
    payer: judged.payer,
    transaction: "",
    network: requirements.network,
  };
}
