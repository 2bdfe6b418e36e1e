/**
 * A tool call as the HTTP request its route expects: the path's parameters and the query (GET), the JSON
 * body or the form (POST) from the call's arguments, and the payment as x402's HTTP transport carries it
 * (`PAYMENT-SIGNATURE`, base64 JSON). The host answers it as it answers any buyer, so a call over MCP meets
 * the same input checks, payment checks, ledger, guards and limits.
 */
import { encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import { BadInputError } from "../../common/errors.ts";
import { pathParams } from "../endpoint.ts";
import type { MerchantTool } from "./tools.ts";

/** Headers of the MCP request a dispatched request keeps: who the client is (the unpaid limit, the log). */
const KEPT_HEADERS = ["user-agent", "x-forwarded-for", "forwarded"];

export interface ToolRequestOptions {
  /** The MCP request, whose origin and client headers the dispatched request keeps. */
  from: Request;
  /** The payment from `_meta["x402/payment"]`, for a paid tool. */
  payment?: PaymentPayload;
  /** The request id its line in the log shares with the MCP request's. */
  requestId?: string;
  signal?: AbortSignal;
}

/** A query or form value as text: a number or boolean as JSON writes it, an object as its JSON. */
function text(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** The entries a query or form gets from the arguments: a list as one entry per item, null as nothing. */
function entries(args: Record<string, unknown>): [string, unknown[]][] {
  return Object.entries(args)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => [k, Array.isArray(v) ? v : [v]]);
}

/** A file argument's bytes and type: base64, or a data: URL that names the type. */
function fileOf(name: string, value: unknown): File {
  if (typeof value !== "string") {
    throw new BadInputError(`${name}: send the file as base64 text or a data: URL`, "invalid_input", name);
  }
  const dataUrl = /^data:([^;,]*)(?:;[^;,]*)*;base64,/i.exec(value);
  const base64 = dataUrl ? value.slice(dataUrl[0].length) : value;
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(base64.replace(/\s+/g, ""))) {
    throw new BadInputError(`${name}: the file is not base64`, "invalid_input", name);
  }
  // No name: a file's name would claim a format (its extension) that its bytes alone should say.
  return new File([Buffer.from(base64, "base64")], name, { type: dataUrl?.[1] ?? "" });
}

/**
 * The route's request for a call of `tool` with `args`. Refuses (BadInputError) what cannot become one:
 * a missing path parameter, a file that is not base64; everything else is the route's to check.
 */
export function toolRequest(
  tool: MerchantTool,
  args: Record<string, unknown>,
  options: ToolRequestOptions,
): Request {
  const names = pathParams(tool.path);
  const rest = { ...args };
  let path = tool.path;
  for (const name of names) {
    const value = args[name];
    if (value === undefined || value === null || value === "") {
      throw new BadInputError(`${name}: required`, "invalid_input", name);
    }
    path = path.replace(new RegExp(`:${name}(?![A-Za-z0-9_])`), encodeURIComponent(text(value)));
    // A GET's path parameter is part of its input as the path; a POST's body is its input alone.
    if (tool.method === "GET") delete rest[name];
  }
  if (tool.unstreamed) {
    delete rest.stream_options;
    rest.stream = false;
  }
  const url = new URL(path, new URL(options.from.url).origin);
  const headers = new Headers({ accept: "application/json" });
  for (const name of KEPT_HEADERS) {
    const value = options.from.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  if (options.requestId) headers.set("x-request-id", options.requestId);
  if (tool.paid && options.payment)
    headers.set("payment-signature", encodePaymentSignatureHeader(options.payment));
  const init: RequestInit = { method: tool.method, headers, signal: options.signal };
  if (tool.method === "GET") {
    if (!tool.paid) return new Request(url, init);
    for (const [name, values] of entries(rest))
      for (const v of values) url.searchParams.append(name, text(v));
    return new Request(url, init);
  }
  if (tool.body === "multipart") {
    const form = new FormData();
    for (const [name, values] of entries(rest)) {
      if (tool.files.includes(name)) {
        form.append(name, fileOf(name, values[0]));
        continue;
      }
      // `name[]`: a list of one stays a list (the kit's forms read `name[]` as the list `name`).
      const key = Array.isArray(rest[name]) ? `${name}[]` : name;
      for (const v of values) form.append(key, text(v));
    }
    return new Request(url, { ...init, body: form });
  }
  headers.set("content-type", "application/json");
  return new Request(url, { ...init, body: JSON.stringify(rest) });
}
