import {
  type AnyEndpoint,
  exampleJson,
  isMetered,
  isMeteredOnly,
  type Merchant,
  pathParams,
  templatePath,
} from "./catalogue.ts";
import { type JsonSchema, jsonSchemaOf, objectProperties } from "./json-schema.ts";
import { type PaymentInfo, paymentInfo } from "./payment-info.ts";
import { UNPAID_LIMIT } from "./payments/ledger.ts";
import { isGuarded } from "./payments/paid-handler.ts";
import type { PaymentSettings } from "./routes.ts";
import { summaryOf } from "./summary.ts";

export interface OpenApiParameter {
  name: string;
  in: "query" | "path";
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
  parameters?: OpenApiParameter[];
  requestBody?: {
    required: true;
    /** One media type: `application/json`, or `multipart/form-data` for a form with files. */
    content: Partial<Record<RequestMediaType, { schema: JsonSchema; example: unknown }>>;
  };
  responses: Record<
    string,
    { description: string; content?: Record<string, { schema: JsonSchema; example?: unknown }> }
  >;
  /** Paid operations only: free routes have none. */
  "x-payment-info"?: PaymentInfo;
}

export interface OpenApiDocument {
  openapi: "3.1.0";
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, JsonSchema> };
}

const ERROR_SCHEMA: JsonSchema = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      properties: { code: { type: "string" }, message: { type: "string" } },
    },
  },
};

/** OpenAI's error shape, for the endpoints that speak its dialect (`errorDialect: "openai"`). */
const OPENAI_ERROR_SCHEMA: JsonSchema = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["message", "type", "param", "code"],
      properties: {
        message: { type: "string" },
        type: { type: "string", description: "invalid_request_error, not_found_error, server_error..." },
        param: { type: ["string", "null"], description: "The input field at fault, when one is." },
        code: { type: "string" },
      },
    },
  },
};

const errorResponse = (description: string, dialect: AnyEndpoint["errorDialect"] = "project") => ({
  description,
  content: {
    "application/json": {
      schema: { $ref: `#/components/schemas/${dialect === "openai" ? "OpenAiError" : "Error"}` },
    },
  },
});

export type RequestMediaType = "application/json" | "multipart/form-data";

/** The media type of an endpoint's request body. */
export function requestMediaType(endpoint: AnyEndpoint): RequestMediaType {
  return endpoint.body === "multipart" ? "multipart/form-data" : "application/json";
}

/** How an operation is paid, said in its description. */
function paidHow(endpoint: AnyEndpoint): string {
  const metered = `you authorise at most $${endpoint.price} in USDC (a Permit2 signature) and pay what the call cost, metered as described above; the PAYMENT-RESPONSE header's \`amount\` says how much (0 moves nothing)`;
  if (isMeteredOnly(endpoint)) return `Paid per call through x402's upto scheme: ${metered}.`;
  if (isMetered(endpoint)) {
    return `Paid per call through x402, either scheme the 402 offers: \`exact\`, $${endpoint.price} in USDC; or \`upto\`: ${metered}.`;
  }
  return `Paid per call through x402: $${endpoint.price} in USDC.`;
}

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
    responses: {
      "200": {
        description: `The result; the PAYMENT-RESPONSE header carries the settlement.${endpoint.streaming ? ` ${endpoint.streaming}` : ""}`,
        content: responseContent(endpoint),
      },
      "400": errorResponse("Bad input, refused before any payment is asked for.", endpoint.errorDialect),
      "402": {
        description:
          "Payment required: the PAYMENT-REQUIRED header (base64 JSON) carries the x402 requirements.",
      },
      ...(isMetered(endpoint) && {
        "412": {
          description:
            "Paid with upto from a wallet that has not approved Permit2 for the token: the PAYMENT-REQUIRED header's error is permit2_allowance_required (as x402's own resource server answers); approve Permit2 once and pay again. Not charged.",
        },
      }),
      "409": errorResponse(
        "The same payment is in use by another request; not charged.",
        endpoint.errorDialect,
      ),
      ...(isGuarded(endpoint) && {
        "429": errorResponse(
          `This wallet has ${UNPAID_LIMIT} paid calls in the last hour whose work went unpaid, left mid-work or failed (too_many_unpaid_calls): refused before any work, not charged; Retry-After says when it may call again.`,
          endpoint.errorDialect,
        ),
      }),
      "502": errorResponse("An upstream failed; not charged.", endpoint.errorDialect),
      "503": errorResponse(
        "Not available on this server now (an engine not installed or configured, or an upstream rate-limited; the message says which, Retry-After when it is worth waiting); not charged.",
        endpoint.errorDialect,
      ),
      "504": errorResponse("No answer within the time budget; not charged.", endpoint.errorDialect),
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

/** The merchant's OpenAPI 3.1 document, built from its catalogue alone. */
export function openApiDocument(merchant: Merchant, payments: PaymentSettings): OpenApiDocument {
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
      responses: {
        "200": {
          description: "The result.",
          content: { "application/json": { schema: {}, example: route.example } },
        },
      },
    };
  }
  const dialects = new Set(merchant.endpoints.map((e) => e.errorDialect ?? "project"));
  return {
    openapi: "3.1.0",
    info: {
      title: merchant.title,
      version: "1.0.0",
      description:
        "Every paid operation is paid per call through x402 (no account, no key): call it, read the 402's " +
        "PAYMENT-REQUIRED header, retry with a PAYMENT-SIGNATURE. Bad input is refused with 400 before " +
        "any payment; failed calls are never charged.",
    },
    servers: [{ url: merchant.publicUrl }],
    paths,
    components: {
      schemas: {
        Error: ERROR_SCHEMA,
        ...(dialects.has("openai") ? { OpenAiError: OPENAI_ERROR_SCHEMA } : {}),
      },
    },
  };
}
