import type { AnyEndpoint, Merchant } from "./catalogue.ts";
import { type JsonSchema, jsonSchemaOf, objectProperties } from "./json-schema.ts";
import { type PaymentInfo, paymentInfo } from "./payment-info.ts";
import type { PaymentSettings } from "./routes.ts";

export interface OpenApiParameter {
  name: string;
  in: "query";
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
  requestBody?: { required: true; content: { "application/json": { schema: JsonSchema; example: unknown } } };
  responses: Record<
    string,
    { description: string; content?: Record<string, { schema: JsonSchema; example?: unknown }> }
  >;
  "x-payment-info": PaymentInfo;
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

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
});

/** "GET /api/seo/alt-check" -> "getApiSeoAltCheck". */
export function operationId(endpoint: AnyEndpoint): string {
  const words = `${endpoint.method.toLowerCase()} ${endpoint.path}`.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return words.map((w, i) => (i === 0 ? w : w[0]?.toUpperCase() + w.slice(1))).join("");
}

function operation(merchant: Merchant, endpoint: AnyEndpoint, payments: PaymentSettings): OpenApiOperation {
  const input = jsonSchemaOf(endpoint.input, "input");
  const op: OpenApiOperation = {
    operationId: operationId(endpoint),
    summary: endpoint.description.split(/(?<=\.)\s/)[0] ?? endpoint.description,
    description: `${endpoint.description}\n\nPaid per call through x402: $${endpoint.price} in USDC.`,
    responses: {
      "200": {
        description: "The result; the PAYMENT-RESPONSE header carries the settlement.",
        content: {
          "application/json": {
            schema: jsonSchemaOf(endpoint.output, "output"),
            example: endpoint.example.output,
          },
        },
      },
      "400": errorResponse("Bad input, refused before any payment is asked for."),
      "402": {
        description:
          "Payment required: the PAYMENT-REQUIRED header (base64 JSON) carries the x402 requirements.",
      },
      "409": errorResponse("The same payment is in use by another request; not charged."),
      "502": errorResponse("An upstream failed; not charged."),
      "504": errorResponse("No answer within the time budget; not charged."),
    },
    "x-payment-info": paymentInfo(merchant, endpoint, payments),
  };
  if (endpoint.method === "GET") {
    const { properties, required } = objectProperties(input);
    const example = endpoint.example.input as Record<string, unknown>;
    op.parameters = Object.entries(properties).map(([name, schema]) => {
      const { description, ...rest } = schema as JsonSchema & { description?: string };
      return {
        name,
        in: "query",
        required: required.includes(name),
        ...(description ? { description } : {}),
        schema: rest,
        ...(example[name] !== undefined ? { example: example[name] } : {}),
      };
    });
  } else {
    op.requestBody = {
      required: true,
      content: { "application/json": { schema: input, example: endpoint.example.input } },
    };
  }
  return op;
}

/** The merchant's OpenAPI 3.1 document, built from its catalogue alone. */
export function openApiDocument(merchant: Merchant, payments: PaymentSettings): OpenApiDocument {
  const paths: OpenApiDocument["paths"] = {};
  for (const endpoint of merchant.endpoints) {
    paths[endpoint.path] ??= {};
    (paths[endpoint.path] as Record<string, OpenApiOperation>)[endpoint.method.toLowerCase()] = operation(
      merchant,
      endpoint,
      payments,
    );
  }
  return {
    openapi: "3.1.0",
    info: {
      title: merchant.title,
      version: "1.0.0",
      description:
        "Every operation is paid per call through x402 (no account, no key): call it, read the 402's " +
        "PAYMENT-REQUIRED header, retry with a PAYMENT-SIGNATURE. Bad input is refused with 400 before " +
        "any payment; failed calls are never charged.",
    },
    servers: [{ url: merchant.publicUrl }],
    paths,
    components: { schemas: { Error: ERROR_SCHEMA } },
  };
}
