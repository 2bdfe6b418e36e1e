/**
 * x402 v1 names its networks (`base`, `polygon`, `solana`), where v2 writes CAIP-2 ids (`eip155:8453`,
 * `solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp`). The EVM names are the SDK's table of them (`@x402/evm/v1`'s
 * `EVM_NETWORK_CHAIN_ID_MAP`), which v1 clients parse against a closed list: a chain missing from it (Arbitrum One,
 * eip155:42161) has no v1 name and cannot be offered to them. Solana's mainnet is `solana` (`@x402/svm`'s
 * `V1_TO_V2_NETWORK_MAP`, x402 1.2.0's `SupportedSVMNetworks`), written here so that the front loads no SVM code.
 */
import { EVM_NETWORK_CHAIN_ID_MAP } from "@x402/evm/v1";
import { SOLANA_NETWORK } from "../../../chain/solana/constants.ts";

/** v1's name of Solana's mainnet, the one Solana network the merchants sell on. */
export const V1_SOLANA = "solana";

const NAMES = new Map<string, string>([
  ...Object.entries(EVM_NETWORK_CHAIN_ID_MAP).map(([name, chainId]): [string, string] => [
    `eip155:${chainId}`,
    name,
  ]),
  [SOLANA_NETWORK, V1_SOLANA],
]);

/** v1's name of a CAIP-2 network (`eip155:8453` -> `base`); undefined for a chain v1 does not name. */
export function v1NetworkOf(caip2: string): string | undefined {
  return NAMES.get(caip2);
}

/** The CAIP-2 id of a v1 network name (`base` -> `eip155:8453`); undefined for a name v1 does not have. */
export function caip2OfV1(name: string): string | undefined {
  if (name === V1_SOLANA) return SOLANA_NETWORK;
  const chainId = Object.hasOwn(EVM_NETWORK_CHAIN_ID_MAP, name)
    ? EVM_NETWORK_CHAIN_ID_MAP[name as keyof typeof EVM_NETWORK_CHAIN_ID_MAP]
    : undefined;
  return chainId === undefined ? undefined : `eip155:${chainId}`;
}
