/**
 * What a failed JSON-RPC request means for the caller, read from the HTTP status, the JSON-RPC error
 * code and message (and `data`, where Tenderly and others put the reason) of the common providers:
 * Alchemy, Infura, QuickNode, Ankr, Cloudflare, Blast, the Base public RPC, geth, reth/op-reth,
 * Erigon and anvil. Providers disagree on codes (-32005, -32602, -32600, -32614 and -32000 all mean
 * "range too large" somewhere, and Infura's -32005 also means "rate limited"), so the message decides.
 */
import { AppError } from "../../common/errors.ts";

/** The caller's next move: split the block range, wait and retry, halve the batch, or give up. */
export type RpcFailureKind = "range" | "retry" | "batch" | "fatal";

/** A JSON-RPC or transport failure, with how to react to it. `shortMessage` is for people. */
export class RpcError extends Error {
  override name = "RpcError";
  constructor(
    readonly kind: RpcFailureKind,
    readonly shortMessage: string,
    readonly details: {
      method?: string;
      status?: number;
      code?: number;
      data?: unknown;
      /** How long the server asked us to wait (Retry-After), in ms. */
      retryAfterMs?: number;
      /** A block span the server said would work (Alchemy, Infura and reth name one). */
      suggestedSpan?: number;
    } = {},
  ) {
    super(shortMessage);
  }
}

/** The RPC kept failing after every allowed attempt. */
export class RpcGaveUpError extends AppError {
  constructor(
    message: string,
    readonly last: unknown,
  ) {
    super(502, "rpc_unavailable", message);
  }
}

// Rate limits: Alchemy "exceeded its compute units per second capacity", Infura "project ID request
// rate exceeded" / "daily request count exceeded", QuickNode "15/second request limit reached", Ankr and
// Cloudflare "Too many requests", Base public RPC "over rate limit".
const RATE =
  /rate.?limit|rate exceeded|too many requests|request limit|requests? per second|\/second|compute units|capacity|throughput|credits|quota|over rate|daily request/;

// Range or result size on eth_getLogs: Alchemy "Log response size exceeded" / "up to a 2K block range",
// Infura "query returned more than 10000 results" / "range 1000000 exceeds limit of 10000", QuickNode
// "eth_getLogs is limited to a 10,000 range", geth "exceed maximum block range", reth "query exceeds
// max block range 100000" / "query exceeds max results 20000, retry with the range A-B", Erigon, Blast
// "Maximum allowed number of requested blocks", Cloudflare "Exceeded max range limit", Ankr "block
// range is too wide", Infura's 10 s limit "query timeout exceeded" (a narrower range answers sooner).
const RANGE =
  /range|more than \d[\d,]* results|max(imum)? results|too many (results|logs|blocks)|response size|response too (large|big)|result(s| set)? (is )?too (large|big)|results? exceed|requested blocks|timeout|timed out|too (large|big|wide|high)/;

// The node is behind or busy: worth the same request again.
const TRANSIENT =
  /header not found|unknown block|block not found|not (yet )?(available|synced|processed)|try again|temporar|unavailable|overload|busy|timeout|timed out|internal error|upstream|backend|gateway|connection|reset|econn|socket|no healthy/;

const BATCH = /batch/;

/** Classifies a JSON-RPC error object (`{code, message, data}`) returned for `method`. */
export function classifyRpcError(
  method: string,
  error: { code?: unknown; message?: unknown; data?: unknown },
  status?: number,
): RpcError {
  const code = typeof error.code === "number" ? error.code : undefined;
  const message = typeof error.message === "string" ? error.message : JSON.stringify(error);
  const text = `${message} ${error.data === undefined ? "" : JSON.stringify(error.data)}`.toLowerCase();
  const details = { method, status, code, data: error.data };
  const short = `${method}: ${message}${code === undefined ? "" : ` (code ${code})`}`;

  if (
    status === 429 ||
    code === 429 ||
    code === -32007 ||
    code === -32029 ||
    code === -32090 ||
    RATE.test(text)
  )
    return new RpcError("retry", short, details);
  if (method === "eth_getLogs" && (RANGE.test(text) || status === 413 || code === -32614)) {
    return new RpcError("range", short, { ...details, suggestedSpan: suggestedSpan(text) });
  }
  if (BATCH.test(text) && /large|exceed|limit|too many|size/.test(text))
    return new RpcError("batch", short, details);
  // geth says "the method X does not exist/is not available": a missing method, not a busy node.
  if (code === -32601 || /method .*(does not exist|not found|not supported|unsupported)/.test(text))
    return new RpcError("fatal", short, details);
  if (TRANSIENT.test(text) || code === -32603 || (status !== undefined && status >= 500))
    return new RpcError("retry", short, details);
  return new RpcError("fatal", short, details);
}

/** Classifies an HTTP answer that is not a JSON-RPC response (a proxy's HTML, an empty body). */
export function classifyHttpStatus(method: string, status: number, body: string): RpcError {
  const short = `${method}: HTTP ${status}${body ? ` ${body.slice(0, 120).replace(/\s+/g, " ")}` : ""}`;
  const details = { method, status };
  if (status === 429 || status === 408 || status >= 500) return new RpcError("retry", short, details);
  if (status === 413) return new RpcError(method === "eth_getLogs" ? "range" : "batch", short, details);
  return new RpcError("fatal", short, details);
}

/**
 * The block span a provider suggests: Alchemy and Infura name a range `[0xA, 0xB]`, reth "the range A-B";
 * others only state their limit ("limited to a 10,000 range", "max block range 5000", "limit of 10000").
 */
export function suggestedSpan(text: string): number | undefined {
  const hexPair = /\[\s*(0x[0-9a-f]+)\s*,\s*(0x[0-9a-f]+)\s*\]/.exec(text);
  if (hexPair) return Number(BigInt(hexPair[2] as string) - BigInt(hexPair[1] as string)) + 1;
  const decPair = /range (\d+)\s*-\s*(\d+)/.exec(text);
  if (decPair) return Number(decPair[2]) - Number(decPair[1]) + 1;
  const limit =
    /(?:limited to an? |max(?:imum)? (?:block )?range\s*[:=]?\s*|range limit\s*[:=]?\s*|limit of |up to an? )(\d[\d,]*)(k?)/.exec(
      text,
    );
  if (limit) return Number((limit[1] as string).replaceAll(",", "")) * (limit[2] === "k" ? 1000 : 1);
  return undefined;
}
