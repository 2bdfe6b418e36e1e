/**
 * The HTTP side of twitterapi.io (`https://api.twitterapi.io`, header `x-api-key`): one GET or multipart POST,
 * its answer parsed losslessly (ids past 2^53 stay exact), and every way it can fail turned into the provider
 * contract's errors. Their failures come two ways: an HTTP status (429 rate limit, 402 no credit, 401/403 a key
 * they refuse, 404) or HTTP 200 with `{"status": "error", "msg": ...}`.
 *
 * - rate limited, out of credit, the operator's key refused: 503 with Retry-After (the operator's problem, never
 *   the caller's; the key is never in a message);
 * - not found (HTTP 404, or an error whose message says so): `null`, for the provider to answer `null`;
 * - anything else, or an answer that is not JSON: 502; no answer in time: 504.
 */

import { UpstreamError } from "../../../../common/errors.ts";
import { fetchWithin } from "../../../../common/fetch-within.ts";
import { timeoutSignal } from "../../../../common/timeout-signal.ts";
import {
  countUpstream,
  DEFAULT_UPSTREAM_MAX_BYTES,
  failure,
  noAnswerOutcome,
  readText,
  retryAfterSeconds,
  statusOutcome,
} from "../../../../merchant-kit/index.ts";
import { Slots } from "../slots.ts";
import { parseLossless } from "./lossless-json.ts";

export const DEFAULT_BASE_URL = "https://api.twitterapi.io";
export const DEFAULT_TIMEOUT_MS = 20_000;
const PROVIDER = "social-data provider (twitterapi.io)";
/** How long to tell callers to wait when the operator must act (credit, key): a retry is unlikely to help sooner. */
const OPERATOR_WAIT_S = 300;

export type Json = Record<string, unknown>;

/**
 * Calls in flight on the one key at once. twitterapi.io limits each key's requests a second; past this
 * many, a burst of paid calls waits its turn here (within its time limit) instead of being refused there.
 */
export const DEFAULT_MAX_IN_FLIGHT = 8;

export interface TwitterApiClientOptions {
  apiKey: string;
  baseUrl?: string;
  timeoutMs?: number;
  /** Default `DEFAULT_MAX_IN_FLIGHT`. */
  maxInFlight?: number;
}

export class TwitterApiClient {
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly slots: Slots;

  constructor(private readonly options: TwitterApiClientOptions) {
    this.slots = new Slots(options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT);
    if (!options.apiKey) throw new Error("twitterapi.io needs an API key");
    this.baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** GET `path` with `params`; `null` when twitterapi.io says what was asked for is not there. */
  get(path: string, params: Record<string, string | undefined>, signal: AbortSignal): Promise<Json | null> {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") url.searchParams.set(k, v);
    return this.call(url, { method: "GET" }, signal);
  }

  /**
   * POST a multipart form (the media upload). Its `{"status": "error"}` answers other than rate limits and
   * credit come back as they are, for the caller to tell a bad session from other trouble.
   */
  postForm(path: string, form: FormData, signal: AbortSignal): Promise<Json | null> {
    return this.call(new URL(this.baseUrl + path), { method: "POST", body: form }, signal, true);
  }

  private async call(
    url: URL,
    init: RequestInit,
    callerSignal: AbortSignal,
    raw = false,
  ): Promise<Json | null> {
    const call = { provider: PROVIDER, url: url.toString(), signal: callerSignal };
    const timeout = timeoutSignal(this.timeoutMs);
    const signal = AbortSignal.any([callerSignal, timeout]);
    let text: string;
    let response: Response;
    let release: (() => void) | undefined;
    let answered = false;
    try {
      release = await this.slots.take(signal);
      response = await fetchWithin(url, {
        ...init,
        headers: { accept: "application/json", "x-api-key": this.options.apiKey },
        signal,
        redirect: "error",
      });
      answered = true;
      // A 404 is its answer "not there".
      countUpstream(PROVIDER, response.status === 404 ? "ok" : statusOutcome(response.status));
      text = await readText(response, DEFAULT_UPSTREAM_MAX_BYTES, { provider: PROVIDER });
    } catch (error) {
      if (release && !answered) countUpstream(PROVIDER, noAnswerOutcome(callerSignal, timeout));
      throw failure(call, error, timeout, this.timeoutMs);
    } finally {
      release?.();
    }
    const body = tryParse(text);
    const message = this.messageOf(body);
    if (response.status === 429)
      throw rateLimited(retryAfterSeconds(response.headers.get("retry-after")), message);
    const failed =
      !response.ok || (typeof body === "object" && body !== null && (body as Json).status === "error");
    if (response.status === 402 || (failed && isCreditMessage(message))) throw noCredit(message);
    if (response.status === 401 || response.status === 403) throw keyRefused(response.status, message);
    if (response.status === 404) return null;
    if (!response.ok) {
      throw new UpstreamError(`the ${PROVIDER} answered HTTP ${response.status}${suffix(message)}`);
    }
    if (body === undefined || typeof body !== "object" || body === null || Array.isArray(body)) {
      throw new UpstreamError(
        `the ${PROVIDER} answered something that is not a JSON object`,
        "upstream_invalid",
      );
    }
    const json = body as Json;
    if (json.status === "error") {
      if (message && /rate ?limit|too many requests|qps/i.test(message)) throw rateLimited(30, message);
      if (raw) return json;
      if (message && /api ?key|unauthori[sz]ed/i.test(message)) throw keyRefused(200, message);
      if (message && NOT_FOUND.test(message)) return null;
      throw new UpstreamError(`the ${PROVIDER} answered an error${suffix(message)}`);
    }
    return json;
  }

  /** Their message (`msg`, `message` or FastAPI's `detail`), short, and never with the key in it. */
  messageOf(body: unknown): string | undefined {
    if (typeof body !== "object" || body === null) return undefined;
    const b = body as Json;
    const m = [b.msg, b.message, b.detail].find((x) => typeof x === "string" && x.length > 0) as
      | string
      | undefined;
    return m?.replaceAll(this.options.apiKey, "[key]").slice(0, 200);
  }
}

/** Messages that mean "what you asked about is not there". */
const NOT_FOUND = /not (be )?found|does ?n[o']t exist|no such|not exist|suspended/i;

function isCreditMessage(message: string | undefined): boolean {
  return (
    message !== undefined && /credit|balance|recharge|top ?up|insufficient|payment required/i.test(message)
  );
}

const suffix = (message: string | undefined) => (message ? `: ${message}` : "");

function rateLimited(wait: number, message: string | undefined): UpstreamError {
  return new UpstreamError(
    `the ${PROVIDER} is rate limiting this server${suffix(message)}; try again in ${wait} s`,
    "upstream_rate_limited",
    503,
    { "retry-after": String(wait) },
  );
}

function noCredit(message: string | undefined): UpstreamError {
  return new UpstreamError(
    `the ${PROVIDER} has no credit left on this server's account${suffix(message)}; the operator must top it up`,
    "upstream_no_credit",
    503,
    { "retry-after": String(OPERATOR_WAIT_S) },
  );
}

function keyRefused(status: number, message: string | undefined): UpstreamError {
  return new UpstreamError(
    `the ${PROVIDER} refused this server's API key (HTTP ${status})${suffix(message)}; the operator must check its configuration`,
    "upstream_misconfigured",
    503,
    { "retry-after": String(OPERATOR_WAIT_S) },
  );
}

function tryParse(text: string): unknown {
  try {
    return parseLossless(text);
  } catch {
    return undefined;
  }
}
