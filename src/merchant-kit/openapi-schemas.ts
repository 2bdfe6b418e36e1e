/**
 * The schemas every merchant's OpenAPI document shares (`components.schemas`): the refusals' two shapes
 * and what the x402 headers carry once decoded. Written from what the kit and `@x402/core` send, and held
 * to it by the test that checks every documented status against a real answer.
 */
import type { ErrorDialect } from "./endpoint.ts";
import type { JsonSchema } from "./json-schema.ts";

/** The project's refusal, `{"error": {"code", "message"}}` (src/common/http.ts). */
const ERROR: JsonSchema = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      properties: {
        code: { type: "string", description: "Stable, for machines: e.g. invalid_input, payment_in_use." },
        message: { type: "string", description: "For people: what was wrong and what to do." },
      },
    },
  },
};

/** OpenAI's error shape, for the endpoints that speak its dialect (`errorDialect: "openai"`). */
const OPENAI_ERROR: JsonSchema = {
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

/** One way to pay, as a 402 offers it (x402 v2 `PaymentRequirements`). */
const PAYMENT_REQUIREMENTS: JsonSchema = {
  type: "object",
  required: ["scheme", "network", "amount", "asset", "payTo", "maxTimeoutSeconds"],
  properties: {
    scheme: {
      type: "string",
      description:
        "exact (an EIP-3009 authorization, or a Permit2 one where extra.assetTransferMethod is permit2) or upto (Permit2).",
    },
    network: { type: "string", description: "CAIP-2, e.g. eip155:8453 (Base)." },
    amount: { type: "string", pattern: "^[0-9]+$", description: "The price in the token's atomic units." },
    asset: { type: "string", description: "The token's contract address." },
    payTo: { type: "string", description: "The merchant's wallet." },
    maxTimeoutSeconds: { type: "integer" },
    extra: {
      type: "object",
      description:
        "The token's EIP-712 name and version (exact; with assetTransferMethod permit2 for its Permit2 option), or the facilitator (upto).",
    },
  },
};

/** The `PAYMENT-REQUIRED` header once base64-decoded (x402 v2 `PaymentRequired`). */
const PAYMENT_REQUIRED: JsonSchema = {
  type: "object",
  required: ["x402Version", "resource", "accepts"],
  properties: {
    x402Version: { const: 2 },
    error: {
      type: "string",
      description:
        "Why: Payment required, or the facilitator's reason for refusing the payment sent (payment_in_use, insufficient_funds...).",
    },
    resource: {
      type: "object",
      required: ["url"],
      properties: { url: { type: "string" }, description: { type: "string" }, mimeType: { type: "string" } },
    },
    accepts: { type: "array", minItems: 1, items: { $ref: "#/components/schemas/PaymentRequirements" } },
    extensions: { type: "object", description: "The Bazaar's description of the input and output." },
  },
};

/**
 * A 402's JSON body as x402 v1 clients read it (x402 v1 `PaymentRequired`, payments/v1/): what the header says,
 * less what v1 cannot pay.
 */
const PAYMENT_REQUIRED_V1: JsonSchema = {
  type: "object",
  required: ["x402Version", "error", "accepts"],
  properties: {
    x402Version: { const: 1 },
    error: {
      type: "string",
      description: "Why: Payment required, the facilitator's reason, or why x402 v1 cannot pay this route.",
    },
    accepts: {
      type: "array",
      description:
        "exact by EIP-3009 on each network v1 names (base, polygon...), as the PAYMENT-REQUIRED header offers it; none where v1 cannot pay.",
      items: {
        type: "object",
        required: [
          "scheme",
          "network",
          "maxAmountRequired",
          "resource",
          "description",
          "mimeType",
          "payTo",
          "maxTimeoutSeconds",
          "asset",
          "outputSchema",
          "extra",
        ],
        properties: {
          scheme: { const: "exact" },
          network: {
            type: "string",
            description: "v1's name of the network: base, polygon, base-sepolia...",
          },
          maxAmountRequired: { type: "string", pattern: "^[0-9]+$" },
          resource: { type: "string" },
          description: { type: "string" },
          mimeType: { type: "string" },
          payTo: { type: "string" },
          maxTimeoutSeconds: { type: "integer" },
          asset: { type: "string" },
          outputSchema: {
            type: "object",
            description: "The request it takes (input) and the answer (output).",
          },
          extra: { type: "object", description: "The token's EIP-712 name and version." },
        },
      },
    },
  },
};

/** The `PAYMENT-RESPONSE` header once base64-decoded: the settlement (x402 v2 `SettleResponse`). */
const SETTLEMENT: JsonSchema = {
  type: "object",
  required: ["success", "transaction", "network"],
  properties: {
    success: { const: true },
    transaction: { type: "string", description: "The settlement's transaction hash." },
    network: { type: "string" },
    payer: { type: "string" },
    amount: {
      type: "string",
      pattern: "^[0-9]+$",
      description: "What was charged, atomic units (upto: what was metered).",
    },
  },
};

/** The schemas a document's operations refer to, given the dialects its refusals speak. */
export function componentSchemas(dialects: ReadonlySet<ErrorDialect>): Record<string, JsonSchema> {
  return {
    Error: ERROR,
    ...(dialects.has("openai") ? { OpenAiError: OPENAI_ERROR } : {}),
    PaymentRequired: PAYMENT_REQUIRED,
    PaymentRequiredV1: PAYMENT_REQUIRED_V1,
    PaymentRequirements: PAYMENT_REQUIREMENTS,
    SettlementResponse: SETTLEMENT,
  };
}

/** The reference to a dialect's refusal schema. */
export function errorSchemaRef(dialect: ErrorDialect = "project"): JsonSchema {
  return { $ref: `#/components/schemas/${dialect === "openai" ? "OpenAiError" : "Error"}` };
}

/** A header whose value is base64 of JSON described by the schema `name`. */
export function base64JsonHeader(
  name: string,
  description: string,
): { description: string; required: true; schema: JsonSchema } {
  return {
    description,
    required: true,
    schema: {
      type: "string",
      contentEncoding: "base64",
      contentMediaType: "application/json",
      contentSchema: { $ref: `#/components/schemas/${name}` },
    },
  };
}
