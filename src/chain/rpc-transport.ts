/**
 * The JSON-RPC transport of the facilitator and of the merchants' funds reads: viem's HTTP transport
 * in all that its callers see (a `type: "http"` transport under viem's own retries and error mapping, with
 * the errors viem's `http` throws: `RpcRequestError` for a JSON-RPC error answer, `HttpRequestError`
 * for an HTTP failure, `TimeoutError` past the timeout), whose requests are made with undici's `request`
 * on a keep-alive pool.
 *
 * Why not `http(url, { fetchFn })`: every verification and settlement makes several RPC calls, and on a
 * local node what surrounds a call costs more than the call. `fetch` cost 0.7-1.4 ms of CPU per
 * `getCode` against anvil on 127.0.0.1 (2 cores), undici's `request` 0.3 ms. viem's `http` still builds a
 * WHATWG `Request` and a `TimeoutError` (a stack and a formatted message) for every call, used or not:
 * 3-5% of a facilitator's CPU under load (docs/benchmarks-log.md). Here an error is built only when there is one.
 */
import { Agent, request } from "undici";
import {
  createTransport,
  HttpRequestError,
  RpcRequestError,
  TimeoutError,
  type Transport,
  type TransportConfig,
} from "viem";

export interface RpcTransportOptions {
  /** Per request, in ms (viem's default: 10 s). */
  timeout?: number;
  /** Retries of a failed request, as viem decides which (default 3). */
  retryCount?: number;
}

/** Answers past this are refused, as viem's `http` refuses them (its default). */
const MAX_RESPONSE_BYTES = 10_485_760;

export type RpcTransport = Transport<"http", { url: string }>;

export function rpcTransport(url: string, options: RpcTransportOptions = {}): RpcTransport {
  const dispatcher = new Agent();
  let id = 0;
  return ({ timeout: clientTimeout, retryCount: clientRetryCount }) => {
    const timeout = clientTimeout ?? options.timeout ?? 10_000;
    const retryCount = options.retryCount ?? clientRetryCount;
    const call = async (
      { method, params }: { method: string; params?: unknown },
      callOptions?: { signal?: AbortSignal },
    ): Promise<unknown> => {
      const body = { method, params };
      const signals = [AbortSignal.timeout(timeout), ...(callOptions?.signal ? [callOptions.signal] : [])];
      const signal = signals.length === 1 ? signals[0] : AbortSignal.any(signals);
      let status: number;
      let text: string;
      try {
        const response = await request(url, {
          dispatcher,
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params }),
          signal,
        });
        status = response.statusCode;
        text = await response.body.text();
      } catch (error) {
        if (callOptions?.signal?.aborted) throw callOptions.signal.reason;
        if (signal?.aborted) throw new TimeoutError({ body, url });
        throw new HttpRequestError({ body, cause: error as Error, url });
      }
      if (text.length > MAX_RESPONSE_BYTES) {
        throw new HttpRequestError({
          body,
          details: `the answer is larger than ${MAX_RESPONSE_BYTES} bytes`,
          status,
          url,
        });
      }
      let data: { result?: unknown; error?: { code: number; message: string; data?: unknown } } | undefined;
      try {
        data = JSON.parse(text || "{}");
      } catch {
        data = undefined;
      }
      // A JSON-RPC error answer goes through viem's error mapping whatever the HTTP status, as with `http`.
      if (data && typeof data.error?.code === "number" && typeof data.error.message === "string") {
        throw new RpcRequestError({ body, error: data.error, url });
      }
      if (status < 200 || status >= 300 || !data) {
        throw new HttpRequestError({ body, details: text.slice(0, 500) || `HTTP ${status}`, status, url });
      }
      return data.result;
    };
    return createTransport(
      {
        key: "http",
        name: "HTTP JSON-RPC",
        request: call as TransportConfig["request"],
        retryCount,
        timeout,
        type: "http",
      },
      { url },
    );
  };
}
