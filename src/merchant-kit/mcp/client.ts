/**
 * The client side of x402 over MCP, with the MCP SDK's own client: connect to a host's `/mcp`, and call a
 * tool as x402's MCP transport has a client do it (specs/transports-v2/mcp.md): call it; when the result
 * asks for a payment (`isError` with a `PaymentRequired`), sign one with the buyer's x402 client and call
 * again with it in `_meta["x402/payment"]`; read the settlement from `_meta["x402/payment-response"]`.
 * The demo's buyers pay through it, and the tests call the hosts with it.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { x402Client } from "@x402/core/client";
import type { PaymentPayload, PaymentRequired, SettleResponse } from "@x402/core/types";
import { PAYMENT_META_KEY, paymentRequiredOf, settlementOf } from "./meta.ts";

/**
 * An MCP client connected over Streamable HTTP to `url` (a host's `/mcp`), its requests sent with
 * `options.fetch` (default the global one); `close()` when done.
 */
export async function connectMcp(
  url: string,
  options: { name?: string; fetch?: typeof fetch } = {},
): Promise<Client> {
  const client = new Client({ name: options.name ?? "x402-merchants-buyer", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: options.fetch }));
  return client;
}

/** One tool call with the payment, if any, sent in its `_meta`. */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  payment?: PaymentPayload,
): Promise<CallToolResult> {
  const result = await client.callTool({
    name,
    arguments: args,
    ...(payment && { _meta: { [PAYMENT_META_KEY]: payment } }),
  });
  return result as CallToolResult;
}

/** What a paid call went through: the result, and on the way what was asked, what was signed, what settled. */
export interface PaidToolCall {
  result: CallToolResult;
  /** The first result's `PaymentRequired`; undefined when the tool answered without asking (a free tool, a refusal). */
  required?: PaymentRequired;
  /** The payment sent with the second call. */
  payment?: PaymentPayload;
  /** The settlement in the final result's `_meta`, if any. */
  settlement?: SettleResponse;
}

/**
 * Calls `name` and pays what it asks with `payer` (an `x402Client` with the schemes the buyer pays
 * with registered): x402's MCP client flow. A tool that answers without asking for a payment is not
 * called again; a payment the tool then refuses is the result as it came (`isError`, with its reason).
 *
 * @example
 * const buyer = new x402Client().register("eip155:8453", new ExactEvmScheme(account));
 * const { result, settlement } = await callPaidTool(client, buyer, "api_calc", { expr: "2+2" });
 */
export async function callPaidTool(
  client: Client,
  payer: x402Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<PaidToolCall> {
  const first = await callTool(client, name, args);
  const required = paymentRequiredOf(first);
  if (!required) return { result: first, settlement: settlementOf(first) };
  const payment = await payer.createPaymentPayload(required);
  const result = await callTool(client, name, args, payment);
  return { result, required, payment, settlement: settlementOf(result) };
}
