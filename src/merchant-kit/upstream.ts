/**
 * Calls to the operator's configured providers (language, search, image). These URLs come from our own
 * configuration, never from a caller, so they use plain `fetch` rather than the SSRF guard; what they still
 * need is a time limit, a size cap on the answer, and errors that say which provider failed without
 * leaking its key. Every failure is an `UpstreamError` (502, or 504 on timeout), which is never charged.
 */

import { AppError, UpstreamError } from "../common/errors.ts";
import { fetchWithin } from "../common/fetch-within.ts";
import { upstreamCalls } from "../common/metrics.ts";
import { timeoutSignal } from "../common/timeout-signal.ts";
import type { Errors } from "./endpoint.ts";

/** Default time limit of one provider call. */
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 25_000;
/** Default cap of a JSON answer (a generated PNG in base64 needs the larger cap of the image adapter). */
export const DEFAULT_UPSTREAM_MAX_BYTES = 5 * 1024 * 1024;

export interface UpstreamCall {
  /** The provider's name for error messages, e.g. "language provider (anthropic)". */
  provider: string;
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  /** Sent as JSON when given. */
  json?: unknown;
  /** Sent as multipart/form-data when given (and `json` is not): an upload, e.g. audio to transcribe. */
  form?: FormData;
  timeoutMs?: number;
  maxBytes?: number;
  signal?: AbortSignal;
}

/**
 * How an upstream call ended, for the metrics: answered (`ok`, or `failed`, `refused` (401, 403),
 * `rate_limited` by its status), or not (`timeout`, `unreachable`, `aborted`: the caller left).
 */
export type UpstreamOutcome =
  | "ok"
  | "failed"
  | "refused"
  | "rate_limited"
  | "timeout"
  | "unreachable"
  | "aborted";

/** Counts one call to `provider` (an `UpstreamCall`'s name: the operator's configuration bounds them). */
export function countUpstream(provider: string, outcome: UpstreamOutcome): void {
  upstreamCalls.inc({ provider, outcome });
}

/** An answer's outcome by its status. */
export function statusOutcome(status: number): UpstreamOutcome {
  if (status >= 200 && status < 300) return "ok";
  if (status === 429) return "rate_limited";
  return status === 401 || status === 403 ? "refused" : "failed";
}

/** A call that got no answer: the caller's abort, the time limit, or anything else. */
export function noAnswerOutcome(
  callerSignal: AbortSignal | undefined,
  timeout: AbortSignal,
): UpstreamOutcome {
  if (callerSignal?.aborted) return "aborted";
  return timeout.aborted ? "timeout" : "unreachable";
}

/**
 * The refusals of an endpoint that calls the operator's `provider` (a language model, a search backend...),
 * for its `errors`: without one, only the 503 of `notConfigured`; with one, how a call to it can fail.
 */
export function providerErrors(provider: string, configured: boolean, settings: string): Errors {
  if (!configured)
    return { 503: `This server has no ${provider} configured (provider_not_configured: ${settings}).` };
  return {
    502: `The ${provider} failed or answered something unusable (upstream_failed, upstream_invalid, upstream_too_large).`,
    503: `The ${provider} is rate limiting this server (upstream_rate_limited); Retry-After says when to try again.`,
    504: `The ${provider} gave no answer within its time limit (upstream_timeout).`,
  };
}

/** The 503 every provider endpoint answers when the operator has not configured its provider. */
export function notConfigured(what: string, settings: string): AppError {
  return new AppError(
    503,
    "provider_not_configured",
    `this endpoint has no ${what} configured on this server (${settings}); nothing was charged`,
  );
}

/**
 * Sends the request and returns the response once its status is 2xx; a non-2xx answer becomes a 502
 * naming the status and the provider's own error message (Anthropic and OpenAI both put it in
 * `error.message`). The caller reads the body (`readJson`, or the stream for SSE).
 */
export async function upstreamFetch(
  call: UpstreamCall,
): Promise<{ response: Response; signal: AbortSignal }> {
  const timeoutMs = call.timeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
  const timeout = timeoutSignal(timeoutMs);
  const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
  const headers: Record<string, string> = { accept: "application/json", ...call.headers };
  if (call.json !== undefined) headers["content-type"] = "application/json";
  let response: Response;
  try {
    response = await fetchWithin(call.url, {
      method: call.method ?? (call.json === undefined && call.form === undefined ? "GET" : "POST"),
      headers,
      body: call.json === undefined ? call.form : JSON.stringify(call.json),
      signal,
      redirect: "error",
    });
  } catch (error) {
    countUpstream(call.provider, noAnswerOutcome(call.signal, timeout));
    throw failure(call, error, timeout, timeoutMs);
  }
  countUpstream(call.provider, statusOutcome(response.status));
  if (!response.ok) {
    const text = await readText(response, 64 * 1024, call).catch(() => "");
    // Rate limited: the caller can come back, and should be told when (the provider's own wait, if it gave one).
    if (response.status === 429) {
      const wait = retryAfterSeconds(response.headers.get("retry-after"));
      throw new UpstreamError(
        `the ${call.provider} is rate limiting this server${providerMessage(text)}; try again in ${wait} s`,
        "upstream_rate_limited",
        503,
        { "retry-after": String(wait) },
      );
    }
    throw new UpstreamError(
      `the ${call.provider} answered HTTP ${response.status}${providerMessage(text)}`,
      "upstream_failed",
    );
  }
  return { response, signal };
}

/** What to tell a caller after an upstream's 429: its Retry-After in whole seconds (1 s to an hour), else 30. */
export function retryAfterSeconds(header: string | null): number {
  const seconds = header !== null && /^\d+$/.test(header.trim()) ? Number(header.trim()) : undefined;
  const date = seconds === undefined && header ? Date.parse(header) : Number.NaN;
  const wait = seconds ?? (Number.isFinite(date) ? Math.ceil((date - Date.now()) / 1000) : 30);
  return Math.min(3_600, Math.max(1, wait));
}

/** `upstreamFetch` then the body as JSON (bounded by `maxBytes`). */
export async function upstreamJson(call: UpstreamCall): Promise<unknown> {
  const { response, signal } = await upstreamFetch(call);
  const text = await readText(response, call.maxBytes ?? DEFAULT_UPSTREAM_MAX_BYTES, call).catch((error) => {
    throw error instanceof AppError ? error : failure(call, error, signal, call.timeoutMs);
  });
  try {
    return JSON.parse(text);
  } catch {
    throw new UpstreamError(`the ${call.provider} answered something that is not JSON`, "upstream_invalid");
  }
}

/** Reads a body as text, cancelling the download once it passes `maxBytes` (a 502 naming `call.provider`). */
export async function readText(
  response: Response,
  maxBytes: number,
  call: Pick<UpstreamCall, "provider">,
): Promise<string> {
  return (await readBytes(response, maxBytes, call)).toString("utf8");
}

/**
 * Reads a body as bytes, cancelling the download once it passes `maxBytes`: a 502 `upstream_too_large`
 * naming `call.provider`, the one answer every upstream reader gives for an answer over its cap.
 */
export async function readBytes(
  response: Response,
  maxBytes: number,
  call: Pick<UpstreamCall, "provider">,
): Promise<Buffer> {
  if (!response.body) return Buffer.alloc(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new UpstreamError(
        `the ${call.provider} answered more than ${maxBytes} bytes`,
        "upstream_too_large",
      );
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** ": <message>" from an `{"error": {"message"}}` body (Anthropic, OpenAI, most gateways), else "". */
function providerMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; detail?: unknown };
    const message =
      typeof body.error === "string" ? body.error : (body.error?.message ?? body.detail ?? undefined);
    if (typeof message === "string" && message) return `: ${message.slice(0, 300)}`;
  } catch {
    // Not JSON: the status alone says enough.
  }
  return "";
}

/** A network failure or an abort as an `UpstreamError`; the caller's own abort keeps its reason. */
export function failure(
  call: UpstreamCall,
  error: unknown,
  timeout?: AbortSignal,
  timeoutMs?: number,
): Error {
  if (error instanceof AppError) return error;
  if (call.signal?.aborted)
    return call.signal.reason instanceof Error ? call.signal.reason : new Error("aborted");
  if (timeout?.aborted)
    return new UpstreamError(
      `the ${call.provider} gave no answer within ${timeoutMs} ms`,
      "upstream_timeout",
      504,
    );
  return new UpstreamError(`the ${call.provider} could not be reached`, "upstream_failed");
}
