/**
 * The Ethereum Attestation Service on Base, where the weekly report figures are attested: EAS and its
 * SchemaRegistry are OP Stack predeploys, so their addresses are fixed; on a devnet `installEas` puts the
 * published eas-contracts 1.9.0 build there.
 */
import { type Address, encodePacked, type Hex, keccak256 } from "viem";

export { easAbi, schemaRegistryAbi } from "./abi.ts";
export { EAS_ADDRESS, installEas, SCHEMA_REGISTRY_ADDRESS } from "./install.ts";

/**
 * A schema's UID as the SchemaRegistry derives it (`_getUID`), known before registering: registering the
 * same schema, resolver and revocability twice reverts (`AlreadyExists`), so this is how to find it again.
 */
export function schemaUid(schema: string, resolver: Address, revocable: boolean): Hex {
  return keccak256(encodePacked(["string", "address", "bool"], [schema, resolver, revocable]));
}
