import type { RouteConfig } from "@x402/core/server";
import { declareDiscoveryExtension } from "@x402/extensions/bazaar";
import { type AnyEndpoint, exampleJson, type Merchant, pathParams, schemesOf } from "./endpoint.ts";
import { jsonSchemaOf, objectProperties } from "./json-schema.ts";
import { priceToAtomic } from "./price.ts";
import type { MerchantKitSettings } from "./settings.ts";

/** The payment settings the routes need: network and token (configuration's `payments`). */
export type PaymentSettings = Pick<MerchantKitSettings["payments"], "network" | "asset" | "rpcUrl">;

/** How long a buyer's authorization may wait for settlement (the SDK's default too). */
export const MAX_TIMEOUT_SECONDS = 300;

/** The route key `@x402/hono` matches, e.g. "GET /api/calc". */
export function routeKey(endpoint: AnyEndpoint): string {
  return `${endpoint.method} ${endpoint.path}`;
}

/**
 * The x402 route of one endpoint: one payment option per scheme it offers (exact; upto when it meters),
 * the merchant's wallet, the price in the token's atomic units (an explicit amount and asset, so no SDK
 * price table decides what a dollar is), and the Bazaar discovery extension describing input and output.
 * The resource URL is the one the buyer asked for, on the merchant's public URL
 * (payments/resource-server.ts), so it is not set here.
 */
export function x402Route(merchant: Merchant, endpoint: AnyEndpoint, payments: PaymentSettings): RouteConfig {
  const output = { example: endpoint.example.output, schema: jsonSchemaOf(endpoint.output, "output") };
  const { input, inputSchema, path } = splitPathParams(endpoint);
  const amount = priceToAtomic(endpoint.price, payments.asset.decimals).toString();
  const options = schemesOf(endpoint).map((scheme) => ({
    scheme,
    network: payments.network as `${string}:${string}`,
    payTo: merchant.payTo,
    // exact signs an EIP-3009 authorization, which names the token's EIP-712 domain; upto signs for
    // Permit2, whose domain is its own (the SDK adds the facilitator the buyer must name).
    price:
      scheme === "upto"
        ? { amount, asset: payments.asset.address }
        : {
            amount,
            asset: payments.asset.address,
            extra: { name: payments.asset.name, version: payments.asset.version },
          },
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
  }));
  const bodyType = endpoint.body === "multipart" ? "form-data" : "json";
  return {
    accepts: options.length === 1 ? (options[0] as (typeof options)[number]) : options,
    description: endpoint.description,
    mimeType: endpoint.outputMedia?.[0] ?? "application/json",
    extensions:
      endpoint.listed === false
        ? undefined
        : declareDiscoveryExtension(
            endpoint.method === "GET"
              ? { input, inputSchema, ...path, output }
              : { input, inputSchema, ...path, bodyType, output },
          ),
  };
}

/** Every endpoint's route, keyed as `paymentMiddleware` wants. */
export function x402Routes(merchant: Merchant, payments: PaymentSettings): Record<string, RouteConfig> {
  return Object.fromEntries(merchant.endpoints.map((e) => [routeKey(e), x402Route(merchant, e, payments)]));
}

/**
 * The example input and its schema for the Bazaar extension, path parameters apart (`pathParams`): the
 * extension fills in the route's template and the request's values when it enriches a 402.
 */
function splitPathParams(endpoint: AnyEndpoint): {
  input: Record<string, unknown>;
  inputSchema: Record<string, unknown>;
  path: { pathParams?: Record<string, unknown>; pathParamsSchema?: Record<string, unknown> };
} {
  const inputSchema = jsonSchemaOf(endpoint.input, "input");
  const input = exampleJson(endpoint.example.input) as Record<string, unknown>;
  const names = pathParams(endpoint.path);
  if (names.length === 0) return { input, inputSchema, path: {} };
  const { properties, required } = objectProperties(inputSchema);
  const pick = <T>(o: Record<string, T>, keep: boolean) =>
    Object.fromEntries(Object.entries(o).filter(([k]) => names.includes(k) === keep));
  return {
    input: pick(input, false),
    inputSchema: {
      ...inputSchema,
      properties: pick(properties, false),
      required: required.filter((r) => !names.includes(r)),
    },
    path: {
      pathParams: pick(input, true),
      pathParamsSchema: { type: "object", properties: pick(properties, true), required: names },
    },
  };
}
