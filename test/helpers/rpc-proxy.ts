/**
 * A JSON-RPC proxy on 127.0.0.1 that forwards to a real node and misbehaves on demand: drops
 * connections, delays, answers 429 or 503, refuses log ranges the way providers do, or rewrites
 * answers. Tests decide per request through `behave`; closed, it refuses connections, and started again
 * on its port it is back.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ProxyRequest {
  /** The parsed body: one call or a batch. */
  body:
    | { method: string; params: unknown[]; id: unknown }
    | { method: string; params: unknown[]; id: unknown }[];
  /** 0-based count of requests so far. */
  index: number;
}

export type ProxyAction =
  | { kind: "forward"; delayMs?: number; rewrite?: (answer: unknown) => unknown }
  | { kind: "drop" }
  | { kind: "status"; status: number; body?: string; headers?: Record<string, string> }
  | { kind: "rpc-error"; code: number; message: string; status?: number };

export interface RpcProxy {
  url: string;
  close(): Promise<void>;
}

/** `port`: where to listen (default a free one): the port of a proxy closed earlier brings it "back". */
export async function startRpcProxy(
  target: string,
  behave: (request: ProxyRequest) => ProxyAction,
  { port: wanted = 0 }: { port?: number } = {},
): Promise<RpcProxy> {
  let index = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const body = JSON.parse(text) as ProxyRequest["body"];
      const action = behave({ body, index: index++ });
      try {
        switch (action.kind) {
          case "drop":
            req.socket.destroy();
            return;
          case "status":
            res.writeHead(action.status, { "content-type": "text/html", ...action.headers });
            res.end(action.body ?? "<html>busy</html>");
            return;
          case "rpc-error": {
            const id = Array.isArray(body) ? null : body.id;
            res.writeHead(action.status ?? 200, { "content-type": "application/json" });
            res.end(
              JSON.stringify({ jsonrpc: "2.0", id, error: { code: action.code, message: action.message } }),
            );
            return;
          }
          case "forward": {
            if (action.delayMs) await new Promise((r) => setTimeout(r, action.delayMs));
            const upstream = await fetch(target, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: text,
            });
            let answer = await upstream.text();
            if (action.rewrite) answer = JSON.stringify(action.rewrite(JSON.parse(answer)));
            if (res.destroyed) return;
            res.writeHead(upstream.status, { "content-type": "application/json" });
            res.end(answer);
            return;
          }
        }
      } catch {
        req.socket.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(wanted, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A small seeded PRNG (mulberry32), so a flaky run is the same every time. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
