/**
 * A merchant's catalogue as MCP tools: one tool per listed paid endpoint and per free route, named after
 * its path, described with its price, its input schema the route's own. Nothing here is written twice:
 * names, descriptions, prices and schemas all come from the catalogue that makes the HTTP routes, and a
 * call is that route's request (request.ts).
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import {
  type AnyEndpoint,
  type BodyType,
  exactTransfersOf,
  type FreeRoute,
  isMetered,
  isMeteredOnly,
  type Merchant,
  offersChannels,
  offersExactPermit2,
  resourceUrl,
} from "../endpoint.ts";
import { type JsonSchema, jsonSchemaOf } from "../json-schema.ts";
import { summaryOf } from "../summary.ts";

/** One tool: what `tools/list` shows, and the route a call is sent to. */
export interface MerchantTool {
  definition: Tool;
  method: "GET" | "POST";
  /** The route's path as the catalogue writes it (`/pay/:agent_id`). */
  path: string;
  /** The payment's resource, and the address of a file answer (an embedded resource's `uri`). */
  resource: string;
  /** false for a free route: a payment sent with its call is not passed on. */
  paid: boolean;
  /** POST only: how the body is sent. */
  body?: BodyType;
  /** Input properties that are files: base64 (or a data: URL) over MCP, a form's file over HTTP. */
  files: readonly string[];
  /** The route streams when asked (`stream: true`): over MCP it is asked not to, and answers whole. */
  unstreamed: boolean;
}

/**
 * A path as a tool name: its words in snake case, `/api/seo/alt-check` -> `api_seo_alt_check`,
 * `/tweets/mediaUpload` -> `tweets_media_upload`, `/pay/:agent_id` -> `pay_agent_id`. Within the
 * `[A-Za-z0-9_-]{1,64}` every MCP client accepts.
 */
export function toolNameOf(path: string): string {
  return path
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase())
    .join("_");
}

/** What a call costs, for the tool's description. */
function priceOf(endpoint: AnyEndpoint): string {
  return `${schemePrice(endpoint)}${exactPermit2Text(endpoint)}${channelText(endpoint)}`;
}

/** How an exact payment is signed, when it may be a Permit2 transfer. */
function exactPermit2Text(endpoint: AnyEndpoint): string {
  if (!offersExactPermit2(endpoint)) return "";
  const permit2 =
    "as a Permit2 transfer through x402's exact proxy (the exact option with extra.assetTransferMethod permit2; the wallet approves Permit2 for the token once)";
  return exactTransfersOf(endpoint).includes("eip3009")
    ? ` The exact price is signed as an EIP-3009 authorization or, for wallets that sign Permit2, ${permit2}.`
    : ` The exact price is signed ${permit2}.`;
}

function schemePrice(endpoint: AnyEndpoint): string {
  const metered = `you authorise at most $${endpoint.price} in USDC and are charged what the call used (the settlement's \`amount\`)`;
  if (isMeteredOnly(endpoint)) return `Paid per call through x402's upto scheme: ${metered}.`;
  if (isMetered(endpoint)) {
    return `Paid per call through x402: $${endpoint.price} in USDC with the exact scheme, or with upto ${metered}.`;
  }
  return `Paid per call through x402: $${endpoint.price} in USDC.`;
}

/** How a call is paid through a payment channel, when it may be. */
function channelText(endpoint: AnyEndpoint): string {
  if (!offersChannels(endpoint)) return "";
  const charged = isMetered(endpoint) ? "what the call used" : "the price";
  return ` Or through a payment channel (x402's batch-settlement scheme): one deposit, then a signed voucher per call, no transaction per call; charged ${charged} (the settlement's \`extra.chargedAmount\`).`;
}

/** A file property as MCP sends it: text, since a tool's arguments are JSON. */
function fileProperty(schema: JsonSchema): JsonSchema {
  const said = typeof schema.description === "string" ? `${schema.description} ` : "";
  return {
    type: "string",
    contentEncoding: "base64",
    description: `${said}The file's bytes in base64, or a data: URL (data:<media type>;base64,...) that also names its type.`,
  };
}

/**
 * The route's input schema as the tool's: the same JSON Schema the OpenAPI document gives, with files
 * as base64 text and, for a route that streams, no `stream` or `stream_options` (MCP answers whole).
 */
function inputOf(endpoint: AnyEndpoint): {
  schema: Tool["inputSchema"];
  files: string[];
  unstreamed: boolean;
} {
  const schema = jsonSchemaOf(endpoint.input, "input");
  const properties = { ...((schema.properties ?? {}) as Record<string, JsonSchema>) };
  const files = Object.entries(properties)
    .filter(([, p]) => p.format === "binary" || p.contentEncoding === "binary")
    .map(([name]) => name);
  for (const name of files) properties[name] = fileProperty(properties[name] as JsonSchema);
  const unstreamed = (endpoint.outputMedia ?? []).includes("text/event-stream") && "stream" in properties;
  if (unstreamed) {
    delete properties.stream;
    delete properties.stream_options;
  }
  const required = ((schema.required ?? []) as string[]).filter((name) => name in properties);
  return {
    schema: { ...schema, type: "object", properties, ...(required.length > 0 ? { required } : {}) },
    files,
    unstreamed,
  };
}

function paidTool(merchant: Merchant, endpoint: AnyEndpoint, name: string): MerchantTool {
  const { schema, files, unstreamed } = inputOf(endpoint);
  const writes = endpoint.effects?.includes("writes") ?? false;
  return {
    definition: {
      name,
      title: summaryOf(endpoint.description),
      description: `${endpoint.description}\n\n${priceOf(endpoint)} Refused input is never charged.`,
      inputSchema: schema,
      annotations: { readOnlyHint: endpoint.method === "GET" && !writes },
    },
    method: endpoint.method,
    path: endpoint.path,
    resource: resourceUrl(merchant, endpoint),
    paid: true,
    ...(endpoint.method === "POST" && { body: endpoint.body ?? "json" }),
    files,
    unstreamed,
  };
}

function freeTool(merchant: Merchant, route: FreeRoute, name: string): MerchantTool {
  return {
    definition: {
      name,
      title: summaryOf(route.description),
      description: `${route.description}\n\nFree: no payment.`,
      inputSchema: { type: "object", properties: {} },
      annotations: { readOnlyHint: true },
    },
    method: route.method,
    path: route.path,
    resource: `${merchant.publicUrl}${route.path}`,
    paid: false,
    files: [],
    unstreamed: false,
  };
}

/**
 * The merchant's tools, in catalogue order: its listed paid endpoints (an unlisted one is served but not
 * advertised, here as in its listings), then its free routes. A name two routes share (the same path
 * under two methods) is prefixed with each one's method.
 *
 * @example
 * merchantTools(utilityMerchant(host)).map((t) => t.definition.name); // ["api_seo_alt_check", ...]
 */
export function merchantTools(merchant: Merchant): MerchantTool[] {
  const routes = [
    ...merchant.endpoints.filter((e) => e.listed !== false).map((e) => ({ kind: "paid" as const, route: e })),
    ...(merchant.free ?? []).map((r) => ({ kind: "free" as const, route: r })),
  ];
  const counts = new Map<string, number>();
  for (const { route } of routes) {
    const name = toolNameOf(route.path);
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  const tools = routes.map(({ kind, route }) => {
    const base = toolNameOf(route.path);
    const name = (counts.get(base) ?? 0) > 1 ? `${route.method.toLowerCase()}_${base}` : base;
    return kind === "paid" ? paidTool(merchant, route, name) : freeTool(merchant, route, name);
  });
  const seen = new Set<string>();
  for (const { definition } of tools) {
    if (seen.has(definition.name))
      throw new Error(`${merchant.name}: two routes make the tool ${definition.name}`);
    seen.add(definition.name);
  }
  return tools;
}
