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

/** The route's `extensions` entries declaring `listed`, where the endpoint takes a Permit2 payment. */
export function declareSponsoring(
  endpoint: Pick<AnyEndpoint, "scheme" | "exactTransfers">,
  listed: readonly SponsoringKey[],
): Record<string, unknown> {
  if (!takesPermit2(endpoint)) return {};
  return Object.assign({}, ...listed.map((key) => DECLARATIONS[key]()));
}
