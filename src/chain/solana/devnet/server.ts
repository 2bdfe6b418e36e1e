import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { SolanaChain } from "./chain.ts";
import { METHODS } from "./rpc.ts";
import { Params, RpcError } from "./rpc-params.ts";

/** The largest request body: a batch of transactions (each at most 1,232 bytes on the wire) fits many times. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

interface Request {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: unknown;
}

/**
 * JSON-RPC 2.0 over HTTP POST, one request or a batch, answered from the chain synchronously: litesvm runs in
 * this process, so a request is served whole before the next is read and no two transactions race.
 */
export async function serveRpc(
  chain: SolanaChain,
  host: string,
  port: number,
): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    handle(chain, request, response).catch((error) => {
      if (!response.headersSent)
        reply(response, 500, { error: { code: -32603, message: String(error) }, id: null, jsonrpc: "2.0" });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return { url: `http://${host}:${address.port}`, server };
}

async function handle(chain: SolanaChain, request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (request.method !== "POST") {
    reply(response, 405, {
      error: { code: -32600, message: "JSON-RPC requests are POSTed" },
      id: null,
      jsonrpc: "2.0",
    });
    return;
  }
  const body = await readBody(request);
  if (body === null) {
    reply(response, 413, {
      error: { code: -32600, message: `request larger than ${MAX_BODY_BYTES} bytes` },
      id: null,
      jsonrpc: "2.0",
    });
    return;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    reply(response, 200, { error: { code: -32700, message: "Parse error" }, id: null, jsonrpc: "2.0" });
    return;
  }
  if (Array.isArray(parsed)) {
    if (parsed.length === 0)
      reply(response, 200, { error: { code: -32600, message: "Invalid request" }, id: null, jsonrpc: "2.0" });
    else
      reply(
        response,
        200,
        parsed.map((item) => answer(chain, item)),
      );
    return;
  }
  reply(response, 200, answer(chain, parsed));
}

/** One request's answer; an RpcError is the caller's, anything else is the devnet's (-32603). */
export function answer(chain: SolanaChain, request: unknown): Record<string, unknown> {
  const {
    jsonrpc,
    id = null,
    method,
    params,
  } = (typeof request === "object" && request !== null ? request : {}) as Request;
  if (jsonrpc !== "2.0" || typeof method !== "string") {
    return { error: { code: -32600, message: "Invalid request" }, id, jsonrpc: "2.0" };
  }
  const run = Object.hasOwn(METHODS, method) ? METHODS[method] : undefined;
  if (!run) return { error: { code: -32601, message: "Method not found" }, id, jsonrpc: "2.0" };
  try {
    return { id, jsonrpc: "2.0", result: run(Params.of(params), chain) };
  } catch (error) {
    if (error instanceof RpcError) {
      const rpcError = {
        code: error.code,
        message: error.message,
        ...(error.data === undefined ? {} : { data: error.data }),
      };
      return { error: rpcError, id, jsonrpc: "2.0" };
    }
    return {
      error: { code: -32603, message: `Internal error: ${(error as Error).message}` },
      id,
      jsonrpc: "2.0",
    };
  }
}

async function readBody(request: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function reply(response: ServerResponse, status: number, body: unknown): void {
  const text = stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  response.end(text);
}

/**
 * JSON with u64s as plain numbers, as the validator prints them: lamports, slots and `rentEpoch` (2^64-1) go
 * past 2^53, and clients such as @solana/kit read them back as bigints.
 */
export function stringify(value: unknown): string {
  return JSON.stringify(value, (_, item) => (typeof item === "bigint" ? `\u0000u64:${item}` : item)).replace(
    /"\\u0000u64:(\d+)"/g,
    "$1",
  );
}
