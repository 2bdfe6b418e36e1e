import {
  type AnyEndpoint,
  type ErrorDialect,
  exactTransfersOf,
  exampleJson,
  isMetered,
  isMeteredOnly,
  type Merchant,
  offersChannels,
  offersExactPermit2,
  pathParams,
  templatePath,
} from "./endpoint.ts";
import { type HostInfo, hostInfo, type OpenApiContact } from "./host-info.ts";
import { type JsonSchema, jsonSchemaOf, objectProperties } from "./json-schema.ts";
import { base64JsonHeader, componentSchemas, errorSchemaRef } from "./openapi-schemas.ts";
import { type PaymentInfo, paymentInfo } from "./payment-info.ts";
import { isGuarded } from "./payments/paid-handler.ts";
import { freeRefusals, type Refusal, refusalsOf, takesInput } from "./refusals.ts";
import type { PaymentSettings } from "./routes.ts";
import { summaryOf } from "./summary.ts";

export interface OpenApiParameter {
  name: string;
  /** `header`: only the x402 payment, on an operation that takes no other input (`paymentParameter`). */
  in: "query" | "path" | "header";
  required: boolean;
  description?: string;
  schema: JsonSchema;
  /** The parameter's value in the catalogue's example. */
  example?: unknown;
}

export interface OpenApiOperation {
  operationId: string;
  summary: string;
  description: string;
  /**
   * Always `[]`: no API key or account, paid or free. Agents' discovery reads an operation's auth from it
   * (with `x-payment-info`: paid; without: free), and warns of an operation that declares none.
   */
  security: [];
  parameters?: OpenApiParameter[];
  requestBody?: {
    required: true;
    /** One media type: `application/json`, or `multipart/form-data` for a form with files. */
    content: Partial<Record<RequestMediaType, { schema: JsonSchema; example: unknown }>>;
  };
  responses: Record<string, OpenApiResponse>;
  /** Paid operations only: free routes have none. */
  "x-payment-info"?: PaymentInfo;
}

export interface OpenApiHeader {
  description: string;
  required: boolean;
  schema: JsonSchema;
}

export interface OpenApiResponse {
  description: string;
  headers?: Record<string, OpenApiHeader>;
  content?: Record<string, { schema: JsonSchema; example?: unknown }>;
}

export interface OpenApiDocument {
  openapi: "3.1.0";
  info: {
    title: string;
    version: string;
    description: string;
    contact: OpenApiContact;
    /** What an agent should know to use the host well (host-info.ts), as agents' discovery reads it. */
    "x-guidance": string;
  };
  /** The Agentcash discovery profile's pointer to the host's longer guidance. */
  "x-agentcash-guidance": { llmsTxtUrl: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, JsonSchema> };
}

export type RequestMediaType = "application/json" | "multipart/form-data";

/** The media type of an endpoint's request body. */
export function requestMediaType(endpoint: AnyEndpoint): RequestMediaType {
  return endpoint.body === "multipart" ? "multipart/form-data" : "application/json";
}

/** An empty JSON object: the payment middleware's body beside its `PAYMENT-REQUIRED` header. */
const EMPTY_OBJECT: JsonSchema = {
  type: "object",
  maxProperties: 0,
  description: "Empty, after a v2 payment: what to pay is in the PAYMENT-REQUIRED header.",
};

/** An unpaid 402's body: the header's requirements as x402 v1 clients read them (payments/v1/). */
const V1_BODY: JsonSchema = { $ref: "#/components/schemas/PaymentRequiredV1" };

/** x402's requirements header; `required` when only the kit answers the status (it always sends it). */
const paymentRequiredHeader = (required: boolean) => ({
  ...base64JsonHeader(
    "PaymentRequired",
    "x402's requirements, base64 JSON: the resource, and per way to pay its scheme, network, token, amount and payee.",
  ),
  required,
});

const retryAfter = (required: boolean) => ({
  description: "Seconds to wait before calling again.",
  required,
  schema: { type: "string", pattern: "^[0-9]+$" },
});

/**
 * The documented responses of refusals: the dialect's error shape, and for the payment middleware's own
 * answers (402, 412) its requirements header, with the 402's empty body (a guarded route's 402 may be the
 * kit's `insufficient_funds` refusal instead) and the 412's error (payments/sponsoring/allowance.ts). The kit's headers (`PAYMENT-REQUIRED` of a 409, `Retry-After` of
 * a 429) are required only where no refusal of the endpoint's shares the status.
 */
function refusalResponses(
  refusals: readonly Refusal[],
  dialect: ErrorDialect | undefined,
  route: "free" | "paid" | "guarded",
): Record<string, OpenApiResponse> {
  const error = { "application/json": { schema: errorSchemaRef(dialect) } };
  const guarded = route === "guarded";
  const response = ({ status, description, own }: Refusal): OpenApiResponse => {
    if (route === "free") return { description, content: error };
    if (status === 402 || status === 412) {
      return {
        description,
        headers: { "PAYMENT-REQUIRED": paymentRequiredHeader(!own) },
        content: {
          "application/json": {
            schema:
              status === 412
                ? errorSchemaRef(dialect)
                : status === 402
                  ? { anyOf: [V1_BODY, EMPTY_OBJECT, ...(guarded || own ? [errorSchemaRef(dialect)] : [])] }
                  : EMPTY_OBJECT,
          },
          "text/html": { schema: { type: "string", description: "A paywall page, for a browser." } },
        },
      };
    }
    if (status === 409) {
      return { description, headers: { "PAYMENT-REQUIRED": paymentRequiredHeader(!own) }, content: error };
    }
    if (status === 429) return { description, headers: { "Retry-After": retryAfter(!own) }, content: error };
    if (status === 503) return { description, headers: { "Retry-After": retryAfter(false) }, content: error };
    return { description, content: error };
  };
  return Object.fromEntries(refusals.map((r) => [String(r.status), response(r)]));
}

/** How an operation is paid, said in its description. */
function paidHow(endpoint: AnyEndpoint): string {
  const schemes = `${schemesHow(endpoint)}${exactPermit2How(endpoint)}`;
  if (!offersChannels(endpoint)) return schemes;
  const charged = isMetered(endpoint) ? "what the call cost, as upto would" : `$${endpoint.price}`;
  return `${schemes} Or through a payment channel (x402's \`batch-settlement\`): a deposit into x402's escrow once, then a signed voucher per call and no transaction; charged ${charged}, which the PAYMENT-RESPONSE header's \`extra.chargedAmount\` says. The unclaimed balance comes back on request: GET /channels/refund with a refund voucher.`;
}

function schemesHow(endpoint: AnyEndpoint): string {
  const metered = `you authorise at most $${endpoint.price} in USDC (a Permit2 signature) and pay what the call cost, metered as described above; the PAYMENT-RESPONSE header's \`amount\` says how much (0 moves nothing)`;
  if (isMeteredOnly(endpoint)) return `Paid per call through x402's upto scheme: ${metered}.`;
  if (isMetered(endpoint)) {
    return `Paid per call through x402, either scheme the 402 offers: \`exact\`, $${endpoint.price} in USDC; or \`upto\`: ${metered}.`;
  }
  return `Paid per call through x402: $${endpoint.price} in USDC.`;
}

/** How an `exact` payment is signed, when it may be a Permit2 transfer (`exactTransfers`). */
function exactPermit2How(endpoint: AnyEndpoint): string {
  if (!offersExactPermit2(endpoint)) return "";
  const permit2 =
    "a Permit2 transfer of exactly the price through x402's exact proxy (the 402's `exact` option with `extra.assetTransferMethod: \"permit2\"`; the wallet approves Permit2 for the token once)";
  return exactTransfersOf(endpoint).includes("eip3009")
    ? ` An \`exact\` payment is an EIP-3009 authorization or, for wallets that sign Permit2, ${permit2}.`
    : ` An \`exact\` payment is ${permit2}.`;
}

/**
 * The x402 payment as a header parameter, declared on a paid operation that takes no other input (a
 * wallet's own data, `GET /api/store`): it is then the call's only input, and without it an agent's tools
 * would see an operation with no input schema at all.
 */
const paymentParameter: OpenApiParameter = {
  name: "PAYMENT-SIGNATURE",
  in: "header",
  required: false,
  description:
    "The x402 payment, base64 JSON (x402 v2 PaymentPayload): the only input this operation takes. Without it the answer is 402, whose PAYMENT-REQUIRED header says what to sign; the paying wallet is whom the call is for.",
  schema: { type: "string", contentEncoding: "base64", contentMediaType: "application/json" },
};

/** "GET /api/seo/alt-check" -> "getApiSeoAltCheck". */
export function operationId(endpoint: AnyEndpoint): string {
  const words = `${endpoint.method.toLowerCase()} ${endpoint.path}`.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return words.map((w, i) => (i === 0 ? w : w[0]?.toUpperCase() + w.slice(1))).join("");
}

/** A successful answer's content: JSON described by `output`, and any text or bytes the endpoint sends instead. */
function responseContent(endpoint: AnyEndpoint): Record<string, { schema: JsonSchema; example?: unknown }> {
  const media = endpoint.outputMedia ?? ["application/json"];
  return Object.fromEntries(
    media.map((type) => [
      type,
      type === "application/json"
        ? { schema: jsonSchemaOf(endpoint.output, "output"), example: endpoint.example.output }
        : { schema: type.startsWith("text/") ? { type: "string" } : { type: "string", format: "binary" } },
    ]),
  );
}

function operation(merchant: Merchant, endpoint: AnyEndpoint, payments: PaymentSettings): OpenApiOperation {
  const input = jsonSchemaOf(endpoint.input, "input");
  const op: OpenApiOperation = {
    operationId: operationId(endpoint),
    summary: summaryOf(endpoint.description),
    description: `${endpoint.description}\n\n${paidHow(endpoint)}`,
    security: [],
    responses: {
      "200": {
        description: `The result; the PAYMENT-RESPONSE header carries the settlement (and X-PAYMENT-RESPONSE, as x402 v1 clients read it, after a v1 payment).${endpoint.streaming ? ` ${endpoint.streaming}` : ""}`,
        headers: {
          "PAYMENT-RESPONSE": base64JsonHeader(
            "SettlementResponse",
            "The settlement, base64 JSON: the transaction, the payer and what was charged.",
          ),
        },
        content: responseContent(endpoint),
      },
      ...refusalResponses(
        refusalsOf(endpoint),
        endpoint.errorDialect,
        isGuarded(endpoint) ? "guarded" : "paid",
      ),
    },
    "x-payment-info": paymentInfo(merchant, endpoint, payments),
  };
  if (endpoint.method === "GET") {
    const { properties, required } = objectProperties(input);
    const example = endpoint.example.input as Record<string, unknown>;
    const inPath = pathParams(endpoint.path);
    op.parameters = Object.entries(properties).map(([name, schema]) => {
      const { description, ...rest } = schema as JsonSchema & { description?: string };
      const path = inPath.includes(name);
      return {
        name,
        in: path ? "path" : "query",
        required: path || required.includes(name),
        ...(description ? { description } : {}),
        schema: rest,
        ...(example[name] !== undefined ? { example: example[name] } : {}),
      };
    });
    if (!takesInput(endpoint)) op.parameters = [paymentParameter];
  } else {
    op.requestBody = {
      required: true,
      content: {
        [requestMediaType(endpoint)]: { schema: input, example: exampleJson(endpoint.example.input) },
      },
    };
  }
  return op;
}

/**
 * The merchant's OpenAPI 3.1 document, built from its catalogue alone, and `info`: who runs the host and
 * what an agent should know (host-info.ts; default: the catalogue's, no operator's contact).
 */
export function openApiDocument(
  merchant: Merchant,
  payments: PaymentSettings,
  info: HostInfo = hostInfo(merchant, payments),
): OpenApiDocument {
  const paths: OpenApiDocument["paths"] = {};
  for (const endpoint of merchant.endpoints) {
    const path = templatePath(endpoint.path);
    paths[path] ??= {};
    (paths[path] as Record<string, OpenApiOperation>)[endpoint.method.toLowerCase()] = operation(
      merchant,
      endpoint,
      payments,
    );
  }
  for (const route of merchant.free ?? []) {
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, OpenApiOperation>).get = {
      operationId: operationId({ method: route.method, path: route.path } as AnyEndpoint),
      summary: summaryOf(route.description),
      description: `${route.description}\n\nFree: no payment.`,
      security: [],
      responses: {
        "200": {
          description: "The result.",
          content: { "application/json": { schema: {}, example: route.example } },
        },
        ...refusalResponses(freeRefusals(route.errors), route.errorDialect, "free"),
      },
    };
  }
  const dialects = new Set(
    [...merchant.endpoints, ...(merchant.free ?? [])].map((e) => e.errorDialect ?? "project"),
  );
  return {
    openapi: "3.1.0",
    info: {
      title: merchant.title,
      version: "1.0.0",
      description:
        "Every paid operation is paid per call through x402 (no account, no key): call it, read the 402's " +
        "PAYMENT-REQUIRED header, retry with a PAYMENT-SIGNATURE. Bad input is refused with 400 before " +
        "any payment; failed calls are never charged.",
      contact: info.contact,
      "x-guidance": info.guidance,
    },
    "x-agentcash-guidance": { llmsTxtUrl: `${merchant.publicUrl}/llms.txt` },
    servers: [{ url: merchant.publicUrl }],
    paths,
    components: { schemas: componentSchemas(dialects) },
  };
}
