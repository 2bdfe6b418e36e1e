/**
 * The gas sponsoring a merchant's 402 declares (x402's `eip2612GasSponsoring`, `erc20ApprovalGasSponsoring`):
 * on a route that takes a Permit2 payment (`upto`, or `exact` through Permit2), each extension its
 * facilitators list in `/supported` for those schemes. A buyer whose wallet has not approved Permit2 then
 * signs an EIP-2612 permit (USDC has it) or a raw approval with its payment, and the facilitator gives
 * Permit2 the allowance with the settlement, at its own gas: a wallet holding only USDC can pay. Declared
 * only where a facilitator does it: a client that filled an extension nobody acts on would be refused 412.
 */
import type { x402ResourceServer } from "@x402/core/server";
import {
  declareEip2612GasSponsoringExtension,
  declareErc20ApprovalGasSponsoringExtension,
} from "@x402/extensions";
import { type AnyEndpoint, takesPermit2 } from "../../endpoint.ts";

/** The extensions, in the order a buyer's client prefers them (the SDK's clients try the permit first). */
const DECLARATIONS = {
  eip2612GasSponsoring: declareEip2612GasSponsoringExtension,
  erc20ApprovalGasSponsoring: declareErc20ApprovalGasSponsoringExtension,
} as const;

export type SponsoringKey = keyof typeof DECLARATIONS;

/** Which sponsoring the facilitators of `resourceServer` (its `/supported` read) list for Permit2 payments. */
export function sponsoringListed(
  resourceServer: Pick<x402ResourceServer, "getFacilitatorExtensions">,
  networks: readonly string[],
): SponsoringKey[] {
  const listed = new Set(
    networks.flatMap((network) =>
      ["upto", "exact"].flatMap((scheme) =>
        resourceServer.getFacilitatorExtensions(2, network as `${string}:${string}`, scheme),
      ),
    ),
  );
  return (Object.keys(DECLARATIONS) as SponsoringKey[]).filter((key) => listed.has(key));
}

/**
 * The route's `extensions` entries declaring `listed`, where the endpoint takes a Permit2 payment: the permit
 * alone where the facilitators take it (every token the merchants sell in has EIP-2612, USDC among them), the raw
 * approval only where they take that alone; each schema without its descriptions, which validate nothing.
 *
 * The 402's `PAYMENT-REQUIRED` header carries every extension's declaration, and Node's HTTP client (undici,
 * behind `fetch`) refuses an answer whose headers pass 16 KB ("Headers Overflow Error"): an upto tier offered on
 * two chains, with its discovery and signed offers, reached 18 KB with both declared whole, and no buyer on Node
 * could pay it. Both whole are 2.2 KB of JSON (3 KB in the header); this is under 0.5 KB.
 */
export function declareSponsoring(
  endpoint: Pick<AnyEndpoint, "scheme" | "exactTransfers">,
  listed: readonly SponsoringKey[],
): Record<string, unknown> {
  if (!takesPermit2(endpoint)) return {};
  const keys: readonly SponsoringKey[] = listed.includes("eip2612GasSponsoring")
    ? ["eip2612GasSponsoring"]
    : listed;
  return Object.assign({}, ...keys.map((key) => withoutDescriptions(DECLARATIONS[key]())));
}

/** A declaration with every `description` of its schema left out (its `info`, which clients read, kept). */
function withoutDescriptions<T>(declaration: T): T {
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(strip);
    if (node === null || typeof node !== "object") return node;
    return Object.fromEntries(
      Object.entries(node).flatMap(([k, v]) => (k === "description" ? [] : [[k, strip(v)]])),
    );
  };
  return Object.fromEntries(
    Object.entries(declaration as Record<string, { info: unknown; schema: unknown }>).map(([key, d]) => [
      key,
      { ...d, schema: strip(d.schema) },
    ]),
  ) as T;
}
