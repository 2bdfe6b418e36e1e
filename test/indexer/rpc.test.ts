import { describe, expect, it } from "vitest";
import { backoffDelay, DEFAULT_BACKOFF } from "../../src/indexer/rpc/backoff.ts";
import { RpcClient } from "../../src/indexer/rpc/client.ts";
import { RateLimiter } from "../../src/indexer/rpc/rate-limit.ts";
import {
  classifyRpcError,
  RpcError,
  RpcGaveUpError,
  suggestedSpan,
} from "../../src/indexer/rpc/rpc-errors.ts";

describe("RPC error classification", () => {
  const logs = (message: string, code = -32000, data?: unknown) =>
    classifyRpcError("eth_getLogs", { code, message, data }).kind;

  it("recognises the range and result-size refusals of the common providers", () => {
    for (const [message, code] of [
      ["Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range", -32602],
      ["query returned more than 10000 results. Try with this block range [0x10, 0x20].", -32005],
      ["range 1000000 exceeds limit of 10000", -32602],
      ["eth_getLogs is limited to a 10,000 range", -32614],
      ["exceed maximum block range: 5000", -32000],
      ["query exceeds max results 20000, retry with the range 25766988-25775072", -32602],
      ["block range is larger than max block range, block range = 5120, max block range = 5000", -32000],
      ["Maximum allowed number of requested blocks is 5000", -32000],
      ["Exceeded max range limit for eth_getLogs: 800", -32000],
      ["block range too high", -32600],
      ["query timeout exceeded", -32005],
    ] as const) {
      expect(logs(message, code), message).toBe("range");
    }
    // Tenderly puts the reason in `data`.
    expect(logs("invalid params", -32602, { payload: "range 9009594 is bigger than range limit 2000" })).toBe(
      "range",
    );
  });

  it("retries rate limits, overloaded and lagging nodes, and gives up on the rest", () => {
    for (const message of [
      "Your app has exceeded its compute units per second capacity",
      "project ID request rate exceeded",
      "15/second request limit reached - reduce calls per second",
      "Too Many Requests",
      "header not found",
      "upstream connect error",
    ]) {
      expect(logs(message, -32005), message).toBe("retry");
      expect(classifyRpcError("eth_getBlockByNumber", { code: -32000, message }).kind, message).toBe("retry");
    }
    expect(
      classifyRpcError("eth_getBlockByNumber", { code: -32602, message: "invalid argument 0" }).kind,
    ).toBe("fatal");
    expect(classifyRpcError("eth_call", { code: -32601, message: "the method does not exist" }).kind).toBe(
      "fatal",
    );
    // geth's wording contains "not available", which elsewhere means a node that is catching up.
    const geth = { code: -32601, message: "the method trace_filter does not exist/is not available" };
    expect(classifyRpcError("trace_filter", geth).kind).toBe("fatal");
    expect(classifyRpcError("trace_filter", { message: "Method not found" }).kind).toBe("fatal");
    expect(
      classifyRpcError("eth_getBlockByNumber", { code: -32600, message: "batch size too large" }).kind,
    ).toBe("batch");
    // A range message is only a range error for eth_getLogs.
    expect(
      classifyRpcError("eth_getBlockByNumber", { code: -32602, message: "block range too large" }).kind,
    ).toBe("fatal");
  });

  it("reads the span a provider suggests or states", () => {
    expect(suggestedSpan("this block range should work: [0x123c9b2, 0x123cba5]")).toBe(
      0x123cba5 - 0x123c9b2 + 1,
    );
    expect(suggestedSpan("retry with the range 100-149")).toBe(50);
    expect(suggestedSpan("eth_getlogs is limited to a 10,000 range")).toBe(10_000);
    expect(suggestedSpan("up to a 2k block range")).toBe(2_000);
    expect(suggestedSpan("max block range = 5000")).toBe(5_000);
    expect(suggestedSpan("log response size exceeded")).toBeUndefined();
  });
});

describe("backoff and rate", () => {
  it("waits a random time under an exponential, capped ceiling", () => {
    const options = { ...DEFAULT_BACKOFF, baseMs: 100, maxMs: 1_000 };
    expect(backoffDelay(1, options, () => 0.999)).toBe(100);
    expect(backoffDelay(3, options, () => 0.5)).toBe(200);
    expect(backoffDelay(10, options, () => 0.999)).toBe(999);
    expect(backoffDelay(1, options, () => 0, 5_000)).toBe(5_000);
  });

  it("holds the request rate to N a second after a one-second burst", async () => {
    // The clock and the waits are the test's: what is checked is how long the limiter asks to wait.
    let now = 10_000;
    const waits: number[] = [];
    const limiter = new RateLimiter(
      10,
      () => now,
      async (ms) => {
        waits.push(ms);
      },
    );
    for (let i = 0; i < 10; i++) await limiter.take();
    expect(waits).toEqual([]);
    // Three more in the same instant wait 0.3 s in all: the rate is 10 a second.
    await limiter.take(3);
    expect(waits).toEqual([300]);
    // Idle time earns a burst again.
    now += 10_000;
    await limiter.take(5);
    expect(waits).toEqual([300]);
  });
});

/** A fetch that answers JSON-RPC requests from a script. */
function fakeFetch(answer: (body: unknown, n: number) => Response | Promise<Response>) {
  let n = 0;
  const bodies: unknown[] = [];
  const fn = (async (_url: string | URL | Request, init?: RequestInit) => {
    const sent = JSON.parse(String(init?.body));
    // One call goes out as a plain object: the script always sees a list, and answers one object back.
    const single = !Array.isArray(sent);
    const body = single ? [sent] : sent;
    bodies.push(body);
    const response = await answer(body, n++);
    if (!single) return response;
    const text = await response.text();
    if (!text.startsWith("{") && !text.startsWith("["))
      return new Response(text, { status: response.status });
    const value = JSON.parse(text);
    return json(
      Array.isArray(value) ? value[0] : value,
      response.status,
      Object.fromEntries(response.headers),
    );
  }) as typeof fetch;
  return { fn, bodies };
}
const json = (value: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(value), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
const results = (body: unknown, f: (call: { id: number; params: unknown[] }) => unknown) =>
  (body as { id: number; params: unknown[] }[]).map((c) => ({ jsonrpc: "2.0", id: c.id, result: f(c) }));

describe("RpcClient", () => {
  const fast = { baseMs: 1, maxMs: 2, attempts: 5 };

  it("sends batches, matches answers by id whatever their order, and retries only the calls that failed", async () => {
    const { fn, bodies } = fakeFetch((body, n) => {
      const calls = body as { id: number; params: [number] }[];
      const answers = calls.map((c) => ({ jsonrpc: "2.0", id: c.id, result: c.params[0] * 10 })).reverse();
      if (n === 0)
        answers[0] = {
          jsonrpc: "2.0",
          id: calls[calls.length - 1]?.id as number,
          error: { code: 429, message: "Too many requests" },
        } as never;
      return json(answers);
    });
    const client = new RpcClient({ url: "http://rpc.test", fetch: fn, backoff: fast, maxBatch: 3 });
    const out = await client.batch<number>([1, 2, 3, 4].map((i) => ({ method: "m", params: [i] })));
    expect(out).toEqual([10, 20, 30, 40]);
    // [1,2,3] with 3 refused, then [3] again, then [4].
    expect((bodies as { params: [number] }[][]).map((b) => b.map((c) => c.params[0]))).toEqual([
      [1, 2, 3],
      [3],
      [4],
    ]);
    expect(client.stats.retries).toBe(1);
  });

  it("halves batches the server finds too large", async () => {
    const { fn, bodies } = fakeFetch((body) => {
      const calls = body as unknown[];
      if (calls.length > 2)
        return json({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "batch size too large" } });
      return json(results(body, (c) => c.params[0]));
    });
    const client = new RpcClient({ url: "http://rpc.test", fetch: fn, backoff: fast, maxBatch: 8 });
    const out = await client.batch([1, 2, 3, 4, 5].map((i) => ({ method: "m", params: [i] })));
    expect(out).toEqual([1, 2, 3, 4, 5]);
    expect((bodies as unknown[][]).map((b) => b.length)).toEqual([5, 2, 2, 1]);
  });

  it("honours Retry-After, gives up after the allowed attempts, and passes range errors to the caller", async () => {
    const waits: number[] = [];
    const { fn } = fakeFetch(() => json({ error: "slow down" }, 429, { "retry-after": "0.05" }));
    const client = new RpcClient({
      url: "http://rpc.test",
      fetch: fn,
      backoff: fast,
      onRetry: (e) => waits.push(e.delayMs),
    });
    await expect(client.call("eth_blockNumber", [])).rejects.toThrow(RpcGaveUpError);
    expect(waits).toEqual([50, 50, 50, 50]);

    const range = new RpcClient({
      url: "http://rpc.test",
      fetch: fakeFetch((body) =>
        json({
          jsonrpc: "2.0",
          id: (body as { id: number }).id,
          error: { code: -32005, message: "query returned more than 10000 results" },
        }),
      ).fn,
      backoff: fast,
    });
    const error = await range.call("eth_getLogs", [{}]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect((error as RpcError).kind).toBe("range");
  });

  it("retries dropped connections and bodies that are not JSON", async () => {
    const { fn } = fakeFetch((body, n) => {
      if (n === 0) throw new TypeError("fetch failed", { cause: { code: "ECONNRESET" } });
      if (n === 1) return new Response("<html>bad gateway</html>", { status: 200 });
      return json({ jsonrpc: "2.0", id: (body as { id: number }[])[0]?.id, result: "0x10" });
    });
    const reasons: string[] = [];
    const client = new RpcClient({
      url: "http://rpc.test",
      fetch: fn,
      backoff: fast,
      onRetry: (e) => reasons.push(e.reason),
    });
    expect(await client.call("eth_blockNumber", [])).toBe("0x10");
    expect(reasons).toEqual([
      "eth_blockNumber: fetch failed (ECONNRESET)",
      expect.stringMatching(/HTTP 502/),
    ]);
  });
});
