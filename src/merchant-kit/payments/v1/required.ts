/**
 * The 402's body as x402 v1 clients read it (`x402-fetch`, `x402-axios`: `{x402Version, accepts}` from the JSON
 * body, each entry parsed against v1's `PaymentRequirementsSchema`), made from the v2 `PAYMENT-REQUIRED` the same
 * answer carries, so that both say the same price, wallet, token and networks. v1 pays `exact` with an EIP-3009
 * authorization on an EVM chain, or with a signed `TransferChecked` on Solana (x402 1.2.0's SVM scheme, the fee
 * payer the facilitator's as v2's: `extra.feePayer`), and nothing else: upto, exact through Permit2 and payment channels are
 * v2's, and a chain v1 has no name for (networks.ts) is left out, so that a client's parse of the list never fails on one entry.
 */
import type { PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { type AnyEndpoint, pathParams } from "../../endpoint.ts";
import { jsonSchemaOf, objectProperties } from "../../json-schema.ts";
import { v1NetworkOf } from "./networks.ts";

/** One way to pay, as v1 writes it (x402 `specs/x402-specification-v1.md`, PaymentRequirements). */
export interface V1Requirements {
  scheme: "exact";
  network: string;
  maxAmountRequired: string;
  resource: string;
  description: string;
  mimeType: string;
  payTo: string;
  maxTimeoutSeconds: number;
  asset: string;
  outputSchema: Record<string, unknown>;
  extra: Record<string, unknown>;
}

export interface V1PaymentRequired {
  x402Version: 1;
  error: string;
  accepts: V1Requirements[];
}

/** A v2 requirement a v1 client can pay, with its network's v1 name. */
export interface V1Payable {
  requirements: PaymentRequirements;
  network: string;
}

/**
 * The requirements of `accepts` a v1 client can pay: `exact` on a network v1 names, by EIP-3009 on an EVM chain
 * (Solana's carry no transfer method); in order.
 */
export function payableByV1(accepts: readonly PaymentRequirements[]): V1Payable[] {
  return accepts.flatMap((requirements) => {
    const network = v1NetworkOf(requirements.network);
    const eip3009 = (requirements.extra?.assetTransferMethod ?? "eip3009") === "eip3009";
    return requirements.scheme === "exact" && eip3009 && network ? [{ requirements, network }] : [];
  });
}

/**
 * The v1 body of a route's 402: each way to pay of `required` a v1 client can pay, `required.error` as its
 * error. A route v1 cannot pay lists none, and its error says why (`closed`, or the ways it takes).
 */
export function v1PaymentRequired(
  required: PaymentRequired,
  outputSchema: Record<string, unknown>,
  /** Why no v1 payment would be taken here whatever it pays (a route that requires a payment id). */
  closed?: string,
): V1PaymentRequired {
  const payable = closed === undefined ? payableByV1(required.accepts) : [];
  const accepts = payable.map(({ requirements: r, network }) => ({
    scheme: "exact" as const,
    network,
    maxAmountRequired: r.amount,
    resource: required.resource.url,
    description: required.resource.description ?? "",
    mimeType: required.resource.mimeType ?? "",
    payTo: r.payTo,
    maxTimeoutSeconds: r.maxTimeoutSeconds,
    asset: r.asset,
    outputSchema,
    extra: r.extra ?? {},
  }));
  const error =
    accepts.length > 0
      ? (required.error ?? "Payment required")
      : `x402 v1 cannot pay this route: ${closed ?? `it takes ${ways(required.accepts)}, and v1 pays exact (by EIP-3009 on an EVM chain) on a network it names`}; pay it with an x402 v2 client, which reads the PAYMENT-REQUIRED header`;
  return { x402Version: 1, error, accepts };
}

/** The ways a route takes, as an error names them: `upto on eip155:8453, exact on eip155:42161`. */
function ways(accepts: readonly PaymentRequirements[]): string {
  const named = accepts.map((r) => {
    const permit2 = r.scheme === "exact" && r.extra?.assetTransferMethod === "permit2";
    return `${r.scheme}${permit2 ? " through Permit2" : ""} on ${r.network}`;
  });
  return [...new Set(named)].join(", ");
}

/**
 * What v1 calls a route's `outputSchema` (the request it takes and the answer it gives), as x402's v1 server
 * middleware writes it: `{input: {type: "http", method, discoverable, queryParams | bodyType and bodyFields},
 * output}`, from the catalogue's schemas. Path parameters are in the resource's URL, not among the query's.
 */
export function v1OutputSchema(endpoint: AnyEndpoint): Record<string, unknown> {
  const { properties } = objectProperties(jsonSchemaOf(endpoint.input, "input"));
  const inPath = new Set(pathParams(endpoint.path));
  const fields = Object.fromEntries(Object.entries(properties).filter(([name]) => !inPath.has(name)));
  const request =
    endpoint.method === "GET"
      ? { queryParams: fields }
      : { bodyType: endpoint.body === "multipart" ? "multipart-form-data" : "json", bodyFields: fields };
  return {
    input: { type: "http", method: endpoint.method, discoverable: endpoint.listed !== false, ...request },
    output: jsonSchemaOf(endpoint.output, "output"),
  };
}
