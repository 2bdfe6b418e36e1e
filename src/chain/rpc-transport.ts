/**
 * The JSON-RPC transport of the facilitator and of the merchants' funds reads: viem's `http` transport, unchanged (its timeouts, retries, error
 * types and revert decoding), whose HTTP requests are made with undici's `request` on a keep-alive pool
 * instead of the global `fetch`.
 *
 * Why: every verification and settlement makes several RPC calls, and `fetch` costs far more than the
 * call itself on a local node: measured against anvil on 127.0.0.1 (2 cores), `getCode` took 0.55-0.8 ms
 * and 0.7-1.4 ms of CPU through `fetch`, 0.3 ms and 0.3 ms this way (no WHATWG streams, no Request and
 * Response machinery around a body of a few hundred bytes).
 */
import { Agent, request } from "undici";
import { type HttpTransport, type HttpTransportConfig, http } from "viem";

export function rpcTransport(
  url: string,
  options: Pick<HttpTransportConfig, "timeout" | "retryCount" | "batch"> = {},
): HttpTransport {
  return http(url, { ...options, fetchFn: requestFetch(new Agent()) });
}

/**
 * A `fetch` for viem's JSON-RPC client only: POST a string body, read the whole answer. It answers with
 * the part of a `Response` viem reads (`ok`, `status`, `statusText`, `headers`, `text()`; no `body`
 * stream, so viem reads the text and checks its size itself). An aborted request rejects with an
 * `AbortError`, which viem turns into its timeout error as with `fetch`.
 */
function requestFetch(dispatcher: Agent): typeof fetch {
  return async (input, init) => {
    const response = await request(String(input), {
      dispatcher,
      method: "POST",
      headers: init?.headers as Record<string, string> | undefined,
      body: init?.body as string | undefined,
      signal: init?.signal ?? undefined,
    });
    const text = await response.body.text();
    const headers = new Headers();
    for (const [name, value] of Object.entries(response.headers)) {
      if (typeof value === "string") headers.set(name, value);
    }
    return {
      ok: response.statusCode >= 200 && response.statusCode < 300,
      status: response.statusCode,
      statusText: "",
      headers,
      body: null,
      text: async () => text,
    } as unknown as Response;
  };
}
