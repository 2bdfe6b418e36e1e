/**
 * EAS and its SchemaRegistry on a devnet, at Base's predeploy addresses, from the published creation code
 * (`artifacts/`).
 */
import {
  type Address,
  concat,
  createPublicClient,
  createTestClient,
  encodeAbiParameters,
  type Hex,
  http,
} from "viem";
import easArtifact from "./artifacts/EAS.json" with { type: "json" };
import registryArtifact from "./artifacts/SchemaRegistry.json" with { type: "json" };

/** Base's (OP Stack's) predeploys: the same addresses on every OP Stack chain, written into its genesis. */
export const SCHEMA_REGISTRY_ADDRESS = "0x4200000000000000000000000000000000000020" as const;
export const EAS_ADDRESS = "0x4200000000000000000000000000000000000021" as const;

/** Each contract's creation code with its constructor's arguments: EAS takes the registry it reads schemas from. */
const CREATIONS: readonly { address: Address; creation: Hex }[] = [
  { address: SCHEMA_REGISTRY_ADDRESS, creation: registryArtifact.bytecode as Hex },
  {
    address: EAS_ADDRESS,
    creation: concat([
      easArtifact.bytecode as Hex,
      encodeAbiParameters([{ type: "address" }], [SCHEMA_REGISTRY_ADDRESS]),
    ]),
  },
];

/**
 * Writes EAS and the SchemaRegistry at their predeploy addresses on the anvil at `rpcUrl`, leaving an
 * address alone that already holds that code (with whatever schemas and attestations it has).
 *
 * The runtime code is what the constructor returns: an `eth_call` without `to` runs the creation code and
 * answers with it, immutables filled in (EAS's registry, the contracts' versions), so nothing but the
 * published build is needed. The EIP-712 domain EAS caches in its constructor names the call's throwaway
 * address; it rebuilds the domain for any other, so delegated attestations still sign for the predeploy.
 */
export async function installEas(rpcUrl: string): Promise<void> {
  const transport = http(rpcUrl);
  const client = createPublicClient({ transport });
  const test = createTestClient({ mode: "anvil", transport });
  await Promise.all(
    CREATIONS.map(async ({ address, creation }) => {
      const [{ data: runtime }, current] = await Promise.all([
        client.call({ data: creation }),
        client.getCode({ address }),
      ]);
      if (!runtime || runtime === "0x") throw new Error(`the creation code for ${address} returned no code`);
      if (current === runtime) return;
      await test.setCode({ address, bytecode: runtime });
    }),
  );
}
