/**
 * A small JSON-RPC client over fetch, made for bulk reads: JSON-RPC batches, a request-rate limit,
 * per-request timeouts, and retries of what is worth retrying (429, 5xx, timeouts, dropped connections,
 * lagging nodes) with exponential backoff and jitter, a bounded number of times.
 *
 * It does not decode results: callers read the raw JSON (hex strings), which is what makes the
 * indexer's hot path fast. Range errors of eth_getLogs are not retried here: the caller splits the range.
 */

import { fetchWithin } from "../../common/fetch-within.ts";
import { rpcCalls, rpcResponseBytes } from "../../common/metrics.ts";
import { sleep } from "../../common/sleep.ts";
import { timeoutSignal } from "../../common/timeout-signal.ts";
import { type BackoffOptions, backoffDelay, DEFAULT_BACKOFF } from "./backoff.ts";
import { RateLimiter } from "./rate-limit.ts";
import { classifyHttpStatus, classifyRpcError, RpcError, RpcGaveUpError } from "./rpc-errors.ts";

export interface RpcCall {
  method: string;
  params: unknown[];
}

export interface RetryEvent {
  method: string;
  /** The attempt that failed (1 = the first try). */
  attempt: number;
  delayMs: number;
  reason: string;
}

export interface RpcClientOptions {
  /** The endpoint, http(s). */
  url: string;
  /** Requests (calls, counting each one of a batch) per second; 0 = no limit. Default 0. */
  rps?: number;
  /** Timeout of one HTTP request, ms. Default 30,000. */
  timeoutMs?: number;
  backoff?: BackoffOptions;
  /** Most calls in one HTTP request; halved when the server says the batch is too large. Default 100. */
  maxBatch?: number;
  /** Told about every retry (for logs). */
  onRetry?: (event: RetryEvent) => void;
  /** Aborts waits and requests in flight: the client then throws an AbortError. */
  signal?: AbortSignal;
  random?: () => number;
  fetch?: typeof fetch;
}

/** What the client did so far: for logs and the benchmark. */
export interface RpcStats {
  httpRequests: number;
  calls: number;
  retries: number;
  bytes: number;
}

interface JsonRpcResponse {
  id?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown; data?: unknown };
}

export class RpcClient {
  readonly stats: RpcStats = { httpRequests: 0, calls: 0, retries: 0, bytes: 0 };
  private readonly limiter: RateLimiter;
  private readonly backoff: Required<BackoffOptions>;
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;
  private readonly random: () => number;
  private maxBatch: number;
  private nextId = 1;

  constructor(private readonly options: RpcClientOptions) {
    if (!/^https?:\/\//.test(options.url)) throw new Error(`the RPC URL must be http(s): "${options.url}"`);
    this.limiter = new RateLimiter(options.rps ?? 0);
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.maxBatch = Math.max(1, options.maxBatch ?? 100);
    this.fetch = options.fetch ?? globalThis.fetch;
    this.random = options.random ?? Math.random;
  }

  /** One call. Throws an RpcError of kind "range" (eth_getLogs) or "fatal", or RpcGaveUpError. */
  async call<T>(method: string, params: unknown[]): Promise<T> {
    const [result] = await this.batch<T>([{ method, params }]);
    return result as T;
  }

  /**
   * Many calls, sent in JSON-RPC batches of at most `maxBatch`; results in the order of `calls`.
   * A failed element is retried alone; an element that fails for good fails the whole call.
   */
  async batch<T>(calls: readonly RpcCall[]): Promise<T[]> {
    return this.sendAll<T>(calls, false) as Promise<T[]>;
  }

  /**
   * Like `batch`, but an element the node refuses for good (not a retry, a range or a batch error) is
   * answered with its RpcError instead of failing the rest: a node that pruned the state of one block
   * still answers the calls at the others.
   */
  async settle<T>(calls: readonly RpcCall[]): Promise<(T | RpcError)[]> {
    return this.sendAll<T>(calls, true);
  }

  private async sendAll<T>(calls: readonly RpcCall[], settle: boolean): Promise<(T | RpcError)[]> {
    const results = new Array<T | RpcError>(calls.length);
    let start = 0;
    while (start < calls.length) {
      const size = Math.min(this.maxBatch, calls.length - start);
      await this.sendWithRetries(calls, start, size, results, settle);
      start += size;
    }
    return results;
  }

  /** Sends calls[start, start + size) until every one has its result. */
  private async sendWithRetries<T>(
    calls: readonly RpcCall[],
    start: number,
    size: number,
    results: (T | RpcError)[],
    settle: boolean,
  ): Promise<void> {
    let pending = Array.from({ length: size }, (_, i) => start + i);
    for (let attempt = 1; ; attempt++) {
      let failure: RpcError;
      try {
        const answers = await this.send(pending.map((i) => calls[i] as RpcCall));
        const retry: number[] = [];
        let firstError: RpcError | undefined;
        answers.forEach((answer, k) => {
          const index = pending[k] as number;
          if (answer instanceof RpcError) {
            if (settle && answer.kind === "fatal") {
              results[index] = answer;
              return;
            }
            if (answer.kind !== "retry" && answer.kind !== "batch") throw answer;
            retry.push(index);
            firstError ??= answer;
          } else results[index] = answer as T;
        });
        if (retry.length === 0) return;
        pending = retry;
        failure = firstError as RpcError;
      } catch (error) {
        if (!(error instanceof RpcError)) throw error;
        // A lone call is sent without a batch, so its refusal comes as the whole answer's.
        if (settle && error.kind === "fatal" && pending.length === 1) {
          results[pending[0] as number] = error;
          return;
        }
        if (error.kind === "range" || error.kind === "fatal") throw error;
        failure = error;
      }
      if (failure.kind === "batch" && pending.length > 1) {
        // The server refuses batches this large: remember a smaller size and send the rest in halves.
        this.maxBatch = Math.max(1, Math.floor(pending.length / 2));
        const again = await this.sendAll<T>(
          pending.map((i) => calls[i] as RpcCall),
          settle,
        );
        pending.forEach((index, k) => {
          results[index] = again[k] as T;
        });
        return;
      }
      if (attempt >= this.backoff.attempts) {
        throw new RpcGaveUpError(
          `the RPC failed ${attempt} times in a row, last: ${failure.shortMessage}`,
          failure,
        );
      }
      const delayMs = backoffDelay(attempt, this.backoff, this.random, failure.details.retryAfterMs ?? 0);
      this.stats.retries++;
      this.options.onRetry?.({
        method: failure.details.method ?? "?",
        attempt,
        delayMs,
        reason: failure.shortMessage,
      });
      await sleep(delayMs, this.options.signal);
      this.throwIfAborted();
    }
  }

  /** One HTTP request; returns per call its result or its RpcError. Throws an RpcError for the whole request. */
  private async send(calls: readonly RpcCall[]): Promise<(unknown | RpcError)[]> {
    this.throwIfAborted();
    await this.limiter.take(calls.length);
    this.throwIfAborted();
    const ids = calls.map(() => this.nextId++);
    const single = calls.length === 1;
    const body = single
      ? { jsonrpc: "2.0", id: ids[0], ...(calls[0] as RpcCall) }
      : calls.map((c, i) => ({ jsonrpc: "2.0", id: ids[i], method: c.method, params: c.params }));
    const method = single ? (calls[0] as RpcCall).method : `batch of ${calls.length} ${calls[0]?.method}`;
    this.stats.httpRequests++;
    this.stats.calls += calls.length;
    // Counted by method: a batch of one method in one step.
    const counted = sameMethod(calls);
    if (counted !== "mixed") rpcCalls.inc({ method: counted }, calls.length);
    else for (const call of calls) rpcCalls.inc({ method: call.method });

    const timeout = timeoutSignal(this.timeoutMs);
    const signal = this.options.signal ? AbortSignal.any([timeout, this.options.signal]) : timeout;
    let status: number;
    let text: string;
    try {
      const response = await fetchWithin(
        this.options.url,
        {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify(body),
          signal,
        },
        this.fetch,
      );
      status = response.status;
      text = await response.text();
      if (status === 429) {
        const error = classifyHttpStatus(method, status, text);
        throw new RpcError("retry", error.shortMessage, {
          ...error.details,
          retryAfterMs: retryAfter(response.headers.get("retry-after")),
        });
      }
    } catch (error) {
      if (error instanceof RpcError) throw error;
      this.throwIfAborted();
      const what = timeout.aborted ? `timed out after ${this.timeoutMs} ms` : describeNetworkError(error);
      // A range that takes too long to answer is narrowed like one the server refuses.
      const kind = timeout.aborted && method === "eth_getLogs" ? "range" : "retry";
      throw new RpcError(kind, `${method}: ${what}`, { method });
    }
    this.stats.bytes += text.length;
    // The text's length: JSON-RPC answers are ASCII (hex), so characters are bytes.
    rpcResponseBytes.inc({ method: counted }, text.length);

    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw classifyHttpStatus(method, status >= 200 && status < 300 ? 502 : status, text);
    }
    if (!Array.isArray(parsed)) {
      const answer = parsed as JsonRpcResponse;
      if (answer.error) {
        // One error for a whole batch (or for the single call).
        const error = classifyRpcError(single ? method : (calls[0]?.method ?? method), answer.error, status);
        if (!single && error.kind === "range") throw new RpcError("batch", error.shortMessage, error.details);
        throw error;
      }
      if (!single || status >= 400) throw classifyHttpStatus(method, status >= 400 ? status : 502, text);
      return [answer.result];
    }
    if (status >= 400 && parsed.length === 0) throw classifyHttpStatus(method, status, text);
    const byId = new Map<unknown, JsonRpcResponse>();
    for (const answer of parsed as JsonRpcResponse[]) byId.set(answer?.id, answer);
    return calls.map((call, i) => {
      const answer = byId.get(ids[i]);
      if (!answer)
        return new RpcError("retry", `${call.method}: no answer in the batch`, { method: call.method });
      if (answer.error) return classifyRpcError(call.method, answer.error, status);
      return answer.result;
    });
  }

  private throwIfAborted(): void {
    this.options.signal?.throwIfAborted();
  }
}

/** A batch's method for the metrics: the one all its calls share, else `mixed`. */
function sameMethod(calls: readonly RpcCall[]): string {
  const first = (calls[0] as RpcCall).method;
  return calls.every((call) => call.method === first) ? first : "mixed";
}

function retryAfter(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.min(60_000, Math.max(0, seconds * 1000));
  const date = Date.parse(header);
  return Number.isFinite(date) ? Math.min(60_000, Math.max(0, date - Date.now())) : undefined;
}

/** undici hides the socket error (ECONNRESET, ECONNREFUSED, "other side closed") in `cause`. */
function describeNetworkError(error: unknown): string {
  const e = error as { message?: string; cause?: { code?: string; message?: string } };
  const cause = e.cause?.code ?? e.cause?.message;
  return cause ? `${e.message ?? "network error"} (${cause})` : (e.message ?? String(error));
}
