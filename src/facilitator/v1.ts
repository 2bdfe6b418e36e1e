/**
 * x402 v1 spoken on the wire, settled as v2 (docs/facilitator.md, "x402 v1"). A v1 exact payment on EVM is
 * the same EIP-3009 authorization a v2 one is: the same typed data, the same signature, the same token nonce.
 * Only its envelope differs (a network name instead of a CAIP-2 id, `maxAmountRequired` instead of `amount`,
 * the resource in the requirements), so a v1 request is translated into the v2 shapes before anything judges
 * it, and every guarantee of a v2 payment is the v1 one's too: the access rules and keys (by the same
 * `payTo`), the ledger keyed by the token nonce (a v1 and a v2 payment of one authorization are one row, one
 * transaction, one success), pending and timeouts, gas budgets, and the builder-code suffix. The SDK's own v1
 * scheme (`@x402/evm/exact/v1/facilitator`) is not registered: it would settle beside the ledger, not in it.
 */
import { PaymentPayloadV1Schema, PaymentRequirementsV1Schema } from "@x402/core/schemas";
import type {
  Network,
  PaymentPayload,
  PaymentRequirements,
  SettleResponse,
  SupportedKind,
  SupportedResponse,
} from "@x402/core/types";
import { EVM_NETWORK_CHAIN_ID_MAP } from "@x402/evm/v1";
import { SOLANA_NETWORK } from "../chain/solana/constants.ts";
import {
  INVALID_NETWORK,
  INVALID_PAYLOAD,
  INVALID_PAYMENT_REQUIREMENTS,
  UNSUPPORTED_PAYLOAD_TYPE,
  UNSUPPORTED_SCHEME,
} from "./error-codes.ts";
import { describe, malformed, type Rejection, refused } from "./rejection.ts";

/** The protocol version a request speaks: 1 only when its payload says so, as the v1 packages send it. */
export type X402Version = 1 | 2;

export function versionOf(payload: unknown): X402Version {
  return (payload as { x402Version?: unknown } | null)?.x402Version === 1 ? 1 : 2;
}

/** v1's network names by chain id (`@x402/evm`'s table, the one the SDK's own v1 scheme reads). */
const V1_NAMES = new Map<number, string>(
  Object.entries(EVM_NETWORK_CHAIN_ID_MAP).map(([name, id]) => [id as number, name]),
);

/** v1's name of Solana's mainnet (`@x402/svm`'s `V1_TO_V2_NETWORK_MAP`), the Solana network settled here. */
const V1_SOLANA = "solana";

/**
 * The v1 name of a CAIP-2 network (`eip155:8453` -> `base`, Solana's mainnet -> `solana`), or undefined when v1
 * has none (Arbitrum One).
 */
export function v1NameOf(network: string): string | undefined {
  if (network === SOLANA_NETWORK) return V1_SOLANA;
  const id = /^eip155:(\d+)$/.exec(network)?.[1];
  return id === undefined ? undefined : V1_NAMES.get(Number(id));
}

/** The CAIP-2 id a v1 network name stands for (`base` -> `eip155:8453`); anything else unchanged. */
export function caip2Of(network: string): string {
  if (network === V1_SOLANA) return SOLANA_NETWORK;
  const id = (EVM_NETWORK_CHAIN_ID_MAP as Record<string, number>)[network];
  return id === undefined ? network : `eip155:${id}`;
}

/**
 * `/supported` with v1's exact scheme on this network under its v1 name beside the v2 kinds, as the SDK's
 * `x402Facilitator` lists what `registerV1` registers, with the v2 exact kind's `extra` (Solana's `feePayer`,
 * which x402 1.2.0's servers read from here). Nothing added on a chain v1 has no name for.
 */
export function withV1Kinds(supported: SupportedResponse, network: Network): SupportedResponse {
  const name = v1NameOf(network);
  if (!name) return supported;
  const extra = supported.kinds.find((k) => k.scheme === "exact" && k.network === network)?.extra;
  const v1: SupportedKind = {
    x402Version: 1,
    scheme: "exact",
    network: name as Network,
    ...(extra && { extra }),
  };
  return { ...supported, kinds: [...supported.kinds, v1] };
}

/**
 * A v1 payment in the v2 shapes, or why it cannot be one. `network`: the CAIP-2 id this facilitator settles
 * on, named in the refusal of another.
 */
export function fromV1(
  payload: unknown,
  requirements: unknown,
  network: Network,
): { ok: true; payload: PaymentPayload; requirements: PaymentRequirements } | Rejection {
  const p = PaymentPayloadV1Schema.safeParse(payload);
  if (!p.success) return malformed(INVALID_PAYLOAD, `paymentPayload (x402 v1): ${describe(p.error)}`);
  const r = PaymentRequirementsV1Schema.safeParse(requirements);
  if (!r.success) {
    return malformed(INVALID_PAYMENT_REQUIREMENTS, `paymentRequirements (x402 v1): ${describe(r.error)}`);
  }
  const v1 = { payload: p.data, requirements: r.data };
  for (const [where, scheme] of [
    ["paymentRequirements", v1.requirements.scheme],
    ["paymentPayload", v1.payload.scheme],
  ]) {
    if (scheme !== "exact") {
      return refused(
        UNSUPPORTED_SCHEME,
        `${where}.scheme "${scheme}" is not supported in x402 v1 (only "exact"; upto and batch-settlement are paid with x402 v2)`,
      );
    }
  }
  if (v1.payload.network !== v1.requirements.network) {
    return refused(
      INVALID_NETWORK,
      `paymentPayload.network "${v1.payload.network}" is not the requirements' "${v1.requirements.network}"`,
    );
  }
  const caip2 = caip2Of(v1.requirements.network);
  const here = v1NameOf(network);
  if (caip2 === v1.requirements.network) {
    return refused(
      INVALID_NETWORK,
      `"${v1.requirements.network}" is not an x402 v1 network name${here ? ` (this facilitator settles v1 on "${here}")` : ""}; a chain without one, such as Arbitrum One, is paid with x402 v2 and its CAIP-2 id (${network} here)`,
    );
  }
  if (caip2 !== network) {
    return refused(
      INVALID_NETWORK,
      `network "${v1.requirements.network}" (${caip2}) is not settled here (only ${here ? `"${here}", ` : ""}${network})`,
    );
  }
  if ("permit2Authorization" in v1.payload.payload) {
    return refused(
      UNSUPPORTED_PAYLOAD_TYPE,
      "x402 v1's exact scheme is paid with an EIP-3009 authorization; Permit2 is x402 v2's",
    );
  }
  const accepted = {
    scheme: "exact",
    network: caip2 as Network,
    asset: v1.requirements.asset,
    amount: v1.requirements.maxAmountRequired,
    payTo: v1.requirements.payTo,
    maxTimeoutSeconds: v1.requirements.maxTimeoutSeconds,
    extra: v1.requirements.extra ?? {},
  };
  const resource = {
    url: v1.requirements.resource,
    description: v1.requirements.description,
    ...(v1.requirements.mimeType ? { mimeType: v1.requirements.mimeType } : {}),
  };
  return {
    ok: true,
    payload: { x402Version: 2, resource, accepted, payload: v1.payload.payload },
    requirements: accepted,
  };
}

/**
 * A settle answer in the words of the request: a v1 request is told its own network name, as the SDK's v1
 * scheme answers (`payloadV1.network`), never a CAIP-2 id the v1 packages' schemas do not know.
 */
export function answerIn<T extends Pick<SettleResponse, "network">>(payload: unknown, answer: T): T {
  if (versionOf(payload) !== 1) return answer;
  const asked = (payload as { network?: unknown }).network;
  const network = typeof asked === "string" ? asked : (v1NameOf(answer.network) ?? answer.network);
  return { ...answer, network: network as Network };
}
