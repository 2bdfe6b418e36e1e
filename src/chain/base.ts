/** Facts about Base mainnet that reports and the analytics database rely on. */

export const BASE_CHAIN = "base" as const;
export const BASE_CHAIN_ID = 8453;
/** Canonical USDC on Base, lower-case as the analytics database keeps every address. */
export const BASE_USDC = "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913";
/** Base Sepolia (the testnet, chain id 84532) and its USDC, for a facilitator run against it. */
export const BASE_SEPOLIA_CHAIN_ID = 84532;
export const BASE_SEPOLIA_USDC = "0x036cbd53842c5426634e7929541ec2318f3dcf7e";
export const USDC_DECIMALS = 6;
export const USDC_UNIT = 1_000_000n;
/** Base produces a block exactly every 2 seconds. */
export const BLOCK_SECONDS = 2;
/** Timestamp of Base block 0; with BLOCK_SECONDS it dates any block when no nearer anchor is known. */
export const BASE_GENESIS_TIME = 1_686_789_347;
/** 302,400 blocks of 2 seconds are exactly 7 days. */
export const WEEK_BLOCKS = 302_400;

export type Chain = typeof BASE_CHAIN;
