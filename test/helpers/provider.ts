/**
 * A JSON-RPC provider in front of anvil (beside rpc-proxy.ts, which misbehaves on demand: this one
 * behaves as a provider kind does), on 127.0.0.1, that counts what its clients cost it: HTTP
 * requests, calls (each call of a batch) and the bytes it answers. As `hosted`, it is a Base endpoint as
 * most are: `trace_*` and `debug_*` refused ("method not found", as geth answers) and `web3_clientVersion`
 * naming op-geth; otherwise it passes everything through, trace_filter included. `untimed` drops the logs'
 * `blockTimestamp`, as nodes before 2025 do. Used by the indexer's tests and `bench:index -- --cost`.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface RpcCost {
  httpRequests: number;
  calls: number;
  bytes: number;
  /** Calls by method. */
  methods: Record<string, number>;
  /** Every call, in order. */
  seen: { method: string; params: unknown[] }[];
}

export interface Provider {
  url: string;
  cost: RpcCost;
  reset(): void;
  close(): Promise<void>;
}

interface Call {
  jsonrpc: "2.0";
  id: number | string;
  method: string;
  params?: unknown[];
}

export const OP_GETH_VERSION = "op-geth/v1.101503.1-stable/linux-amd64/go1.23.4";

export async function startProvider(
  upstream: string,
  { hosted, untimed = false }: { hosted: boolean; untimed?: boolean },
): Promise<Provider> {
  const cost: RpcCost = { httpRequests: 0, calls: 0, bytes: 0, methods: {}, seen: [] };
  const local = (call: Call): object | undefined => {
    if (!hosted) return undefined;
    if (/^(trace|debug)_/.test(call.method))
      return {
        jsonrpc: "2.0",
        id: call.id,
        error: { code: -32601, message: `the method ${call.method} does not exist/is not available` },
      };
    if (call.method === "web3_clientVersion") return { jsonrpc: "2.0", id: call.id, result: OP_GETH_VERSION };
    return undefined;
  };
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Call | Call[];
    const calls = Array.isArray(body) ? body : [body];
    cost.httpRequests++;
    cost.calls += calls.length;
    for (const call of calls) {
      cost.methods[call.method] = (cost.methods[call.method] ?? 0) + 1;
      cost.seen.push({ method: call.method, params: call.params ?? [] });
    }
    const answered = new Map<Call, object | undefined>(calls.map((call) => [call, local(call)]));
    const onward = calls.filter((call) => answered.get(call) === undefined);
    if (onward.length > 0) {
      const reply = await fetch(upstream, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(onward),
      });
      const replies = (await reply.json()) as { id: Call["id"]; result?: unknown }[];
      if (untimed)
        for (const r of replies)
          if (Array.isArray(r.result))
            for (const log of r.result as Record<string, unknown>[]) delete log.blockTimestamp;
      const byId = new Map(replies.map((r) => [r.id, r]));
      for (const call of onward) answered.set(call, byId.get(call.id));
    }
    const out = JSON.stringify(
      Array.isArray(body) ? calls.map((c) => answered.get(c)) : answered.get(calls[0] as Call),
    );
    cost.bytes += Buffer.byteLength(out);
    response.writeHead(200, { "content-type": "application/json" }).end(out);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cost,
    reset() {
      Object.assign(cost, { httpRequests: 0, calls: 0, bytes: 0, methods: {}, seen: [] });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
