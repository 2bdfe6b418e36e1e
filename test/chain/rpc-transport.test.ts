import http from "node:http";
import type { AddressInfo } from "node:net";
import { BaseError, createPublicClient, HttpRequestError, RpcRequestError, TimeoutError } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpcTransport } from "../../src/chain/rpc-transport.ts";

/** A JSON-RPC node whose answer to each method the test picks. */
let answer: (method: string, res: http.ServerResponse) => void;
let server: http.Server;
let url: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => answer(JSON.parse(body).method, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const json = (res: http.ServerResponse, value: unknown, status = 200) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", id: 1, ...(value as object) }));
};
const client = (target = url) =>
  createPublicClient({ transport: rpcTransport(target, { timeout: 300, retryCount: 0 }) });
/** What the facilitator's submitter looks for to tell a node's refusal from a lost request. */
const answered = (error: unknown) =>
  error instanceof BaseError && error.walk((e) => e instanceof RpcRequestError) !== null;

describe("the facilitator's RPC transport (viem's http transport's errors, over undici request)", () => {
  it("reads results, and reports a node's JSON-RPC error as an answered request", async () => {
    answer = (_, res) => json(res, { result: "0x2a" });
    expect(await client().getBlockNumber()).toBe(42n);

    answer = (_, res) => json(res, { error: { code: -32000, message: "nonce too low" } });
    const refused = await client()
      .request({ method: "eth_sendRawTransaction", params: ["0x00"] })
      .catch((e: unknown) => e);
    expect(answered(refused)).toBe(true);
    expect(String(refused)).toContain("nonce too low");
  });

  it("reports an HTTP failure, a timeout and an unreachable node as not answered", async () => {
    answer = (_, res) => {
      res.writeHead(502, { "content-type": "text/plain" });
      res.end("bad gateway");
    };
    const bad = await client()
      .getBlockNumber()
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(BaseError);
    expect((bad as BaseError).walk((e) => e instanceof HttpRequestError)).not.toBeNull();
    expect(answered(bad)).toBe(false);

    answer = () => undefined; // never answers
    const slow = await client()
      .getBlockNumber()
      .catch((e: unknown) => e);
    expect((slow as BaseError).walk((e) => e instanceof TimeoutError)).not.toBeNull();
    expect(answered(slow)).toBe(false);

    const down = await client("http://127.0.0.1:1")
      .getBlockNumber()
      .catch((e: unknown) => e);
    expect((down as BaseError).walk((e) => e instanceof HttpRequestError)).not.toBeNull();
    expect(answered(down)).toBe(false);
  });

  it("is a viem http transport: a JSON-RPC error under an HTTP error status is still an answer, retries as viem's", async () => {
    const transport = rpcTransport(url)({ retryCount: 0 });
    expect(transport.config.type).toBe("http");
    expect(transport.value).toEqual({ url });

    answer = (_, res) => json(res, { error: { code: -32603, message: "internal" } }, 500);
    const refused = await client()
      .getBlockNumber()
      .catch((e: unknown) => e);
    expect(answered(refused)).toBe(true);

    // viem retries a 5xx: the second attempt's answer is the result.
    let calls = 0;
    answer = (_, res) => {
      calls += 1;
      if (calls === 1) {
        res.writeHead(503);
        res.end();
      } else json(res, { result: "0x7" });
    };
    const retrying = createPublicClient({ transport: rpcTransport(url, { timeout: 300, retryCount: 1 }) });
    expect(await retrying.getBlockNumber({ cacheTime: 0 })).toBe(7n);
    expect(calls).toBe(2);
  });

  it("ends a call its caller aborts with the caller's reason", async () => {
    answer = () => undefined; // never answers
    const controller = new AbortController();
    const transport = rpcTransport(url, { timeout: 5_000, retryCount: 0 })({ retryCount: 0 });
    const call = transport.config
      .request({ method: "eth_blockNumber" }, { signal: controller.signal })
      .catch((e: unknown) => e);
    controller.abort(new Error("caller left"));
    expect(String(await call)).toContain("caller left");
  });
});
