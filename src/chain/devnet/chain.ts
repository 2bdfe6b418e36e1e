/**
 * The devnet as viem sees it: a chain with Base's id at the local RPC, and the clients the devnet sets
 * itself up with.
 */
import { createPublicClient, createTestClient, defineChain, http } from "viem";
import { BASE_CHAIN_ID, BLOCK_SECONDS } from "../base.ts";

/**
 * A viem chain for the devnet: Base's id (or the id of the chain it plays), the local RPC, and Base's 2 s block
 * time as viem's polling hint.
 */
export function devnetChain(rpc: string, id: number = BASE_CHAIN_ID) {
  return defineChain({
    id,
    name: "Base (x402-merchants devnet)",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpc] } },
    blockTime: BLOCK_SECONDS * 1000,
  });
}

/** anvil's test methods and the public ones over one batching transport: setup sends hundreds at once. */
export function devnetClients(rpc: string, chainId: number = BASE_CHAIN_ID) {
  const chain = devnetChain(rpc, chainId);
  const transport = http(rpc, { batch: { batchSize: 500 } });
  return {
    test: createTestClient({ chain, mode: "anvil", transport }),
    client: createPublicClient({ chain, transport }),
  };
}

export type DevnetClients = ReturnType<typeof devnetClients>;
