/**
 * A merchant host's MCP face: its catalogue's tools (tools.ts), each call dispatched in process to the
 * host's own HTTP app as the request its route expects (request.ts) and its answer translated back
 * (answer.ts). The payment is never handled here: the route's x402 middleware verifies and settles it,
 * with the host's ledger, guards and limits, exactly as for a buyer over HTTP.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { DEFAULT_MAX_REQUEST_BODY_SIZE } from "@modelcontextprotocol/sdk/server/requestBody.js";
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import type { PaymentPayload } from "@x402/core/types";
import { AppError, errorBody } from "../../common/errors.ts";
import { answerMcp } from "../../common/mcp/http.ts";
import { currentRequestId } from "../../common/request-log.ts";
import { projectVersion } from "../../common/version.ts";
import type { Merchant } from "../endpoint.ts";
import { toolResult } from "./answer.ts";
import { PAYMENT_META_KEY, paymentRequiredOf, paymentRequiredResult } from "./meta.ts";
import { toolRequest } from "./request.ts";
import { type MerchantTool, merchantTools } from "./tools.ts";

/** Sends a tool's request to the host's app (with the MCP request's server bindings: its client). */
export type Dispatch = (request: Request) => Response | Promise<Response>;

/** What every host tells an MCP client at `initialize`: how its tools are paid. */
const INSTRUCTIONS =
  "Paid tools follow x402's MCP transport (specs/transports-v2/mcp.md in the x402 repository). Called " +
  "without a payment, a paid tool answers isError with x402's PaymentRequired in structuredContent (and " +
  'as the JSON of content[0].text). Sign a PaymentPayload for one of its accepts and call again with it in params._meta["x402/payment"]; ' +
  'the result carries the settlement in _meta["x402/payment-response"]. Input is checked before any ' +
  "payment and a refused call is never charged; each payment pays for one call. Free tools need no payment.";

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A refusal before any request: the route's error shape, never charged. */
function refusal(error: AppError): CallToolResult {
  const body = errorBody(error.code, error.message);
  return { isError: true, content: [{ type: "text", text: JSON.stringify(body) }], structuredContent: body };
}

/**
 * The MCP face of one merchant host, its tools built once.
 *
 * @example
 * const mcp = new MerchantMcp(merchant);
 * app.post(MCP_PATH, (c) => mcp.answer(c.req.raw, (request) => app.fetch(request, c.env)));
 */
export class MerchantMcp {
  readonly tools: readonly MerchantTool[];
  private readonly byName: ReadonlyMap<string, MerchantTool>;

  constructor(private readonly merchant: Merchant) {
    this.tools = merchantTools(merchant);
    this.byName = new Map(this.tools.map((t) => [t.definition.name, t]));
  }

  /** Answers one Streamable HTTP request at `/mcp` (stateless: a server of its own, src/common/mcp/http.ts). */
  answer(request: Request, dispatch: Dispatch): Promise<Response> {
    return answerMcp(request, () => this.server(request, dispatch));
  }

  /**
   * Whether `request` is one MCP call of one of these tools: the unpaid limit leaves it to the request it
   * is dispatched as, which it limits as any buyer's (a call carrying a payment on credit), instead of
   * counting it twice or refusing a payment for the client's unpaid traffic. A body the transport would
   * refuse as too large, a batch, or anything else is not.
   */
  async isToolCall(request: Request): Promise<boolean> {
    if (request.method !== "POST") return false;
    const length = Number(request.headers.get("content-length"));
    if (!(length > 0 && length <= DEFAULT_MAX_REQUEST_BODY_SIZE)) return false;
    let message: unknown;
    try {
      message = JSON.parse(await request.clone().text());
    } catch {
      return false;
    }
    if (!isObject(message) || message.method !== "tools/call" || !("id" in message)) return false;
    const name = isObject(message.params) ? message.params.name : undefined;
    return typeof name === "string" && this.byName.has(name);
  }

  private server(from: Request, dispatch: Dispatch): McpServer {
    const { merchant } = this;
    const mcp = new McpServer(
      { name: `x402-merchants-${merchant.name}`, title: merchant.title, version: projectVersion() },
      { instructions: INSTRUCTIONS },
    );
    // The low-level handlers: the tools' schemas are JSON Schema already, and a call's arguments go to
    // the route as they came, for its own checks (McpServer's would parse them with zod first).
    mcp.server.registerCapabilities({ tools: {} });
    const definitions = this.tools.map((t) => t.definition);
    mcp.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: definitions }));
    mcp.server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
      this.call(request.params, { from, dispatch, signal: extra.signal }),
    );
    return mcp;
  }

  private async call(
    params: CallToolRequest["params"],
    how: { from: Request; dispatch: Dispatch; signal: AbortSignal },
  ): Promise<CallToolResult> {
    const tool = this.byName.get(params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${params.name}`);
    const sent = params._meta?.[PAYMENT_META_KEY];
    // Not a PaymentPayload at all: asked for the payment as if none was sent, and told why (below).
    const payment = isObject(sent) ? (sent as unknown as PaymentPayload) : undefined;
    const args = params.arguments ?? {};
    // The call ends when the MCP client cancels it or its HTTP request goes away.
    const signal = AbortSignal.any([how.from.signal, how.signal]);
    const requestWith = (paid?: PaymentPayload) =>
      toolRequest(tool, args, { from: how.from, payment: paid, requestId: currentRequestId(), signal });
    let request: Request;
    try {
      request = requestWith(payment);
    } catch (error) {
      if (error instanceof AppError) return refusal(error);
      throw error;
    }
    const result = await toolResult(await how.dispatch(request), tool.resource, async () =>
      how.dispatch(requestWith(undefined)),
    );
    if (tool.paid && sent !== undefined && !payment) {
      const required = paymentRequiredOf(result);
      if (required) {
        return paymentRequiredResult({
          ...required,
          error: `_meta["${PAYMENT_META_KEY}"] is not a PaymentPayload object`,
        });
      }
    }
    return result;
  }
}
