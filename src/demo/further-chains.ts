/**
 * The chains the demo can play beside Base (issue 67 item 7), by slug. Arbitrum One: a clock unlike Base's
 * (blocks as transactions come, several a second, several sharing one timestamp), chain id 42161, x402's
 * contracts at the addresses they have on every EVM chain.
 */
export const FURTHER_CHAINS = ["arbitrum"] as const;

export type FurtherChain = (typeof FURTHER_CHAINS)[number];

/**
 * Every chain the demo can play beside Base, by slug: the EVM ones, then Solana (issue 86 item 7), which is no
 * devnet of anvil's but the SVM in process, played once (solana-week.ts).
 */
export const DEMO_CHAINS = [...FURTHER_CHAINS, "solana"] as const;

/** Each one's port in the configuration's `ports` (X402M_DEVNET_ARBITRUM_PORT). */
export const FURTHER_CHAIN_PORTS = { arbitrum: "devnetArbitrum" } as const satisfies Record<
  FurtherChain,
  string
>;
