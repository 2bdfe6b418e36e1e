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
/**
 * The most atomic units one payment or transfer may carry: 10^16, ten billion dollars. USDC's whole
 * supply, every chain together, is about 7.5 * 10^16 units; an x402 payment of more than ten billion
 * dollars for one request is not a payment, and a number that large is a wrong contract, a broken RPC
 * or a made-up file. The import refuses such a line and the indexer skips such a log (and says so), so
 * the store never holds one. Sums of many bounded amounts can still pass 2^63 (923 of them do): the
 * reports add them up in HUGEINT.
 */
export const MAX_USDC_AMOUNT = 10n ** 16n;
/** Base produces a block exactly every 2 seconds. */
export const BLOCK_SECONDS = 2;
/** Timestamp of Base block 0; with BLOCK_SECONDS it dates any block when no nearer anchor is known. */
export const BASE_GENESIS_TIME = 1_686_789_347;
/** 302,400 blocks of 2 seconds are exactly 7 days. */
export const WEEK_BLOCKS = 302_400;

export type Chain = typeof BASE_CHAIN;

/**
 * Uniswap's Permit2, at the same address on every chain (deployed with CREATE2). x402's `upto` scheme, and
 * `exact` for tokens without EIP-3009, move the buyer's tokens through it; the buyer approves it once.
 */
export const PERMIT2_ADDRESS = "0x000000000022D473030F116dDEE9F6B43aC78BA3" as const;
/**
 * x402's `upto` proxy (`@x402/evm`'s `x402UptoPermit2ProxyAddress`): the spender the buyer's Permit2 signature
 * names, which the facilitator calls to settle any amount up to the signed maximum.
 */
export const X402_UPTO_PROXY_ADDRESS = "0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002" as const;
/**
 * x402's `exact` Permit2 proxy (`@x402/evm`'s `x402ExactPermit2ProxyAddress`): `exact` for wallets and tokens
 * that do not use EIP-3009 (`assetTransferMethod: "permit2"`); it moves exactly the signed amount.
 */
export const X402_EXACT_PROXY_ADDRESS = "0x402085c248EeA27D92E8b30b2C58ed07f9E20001" as const;
/**
 * x402's `batch-settlement` escrow (`x402BatchSettlement`): payment channels a buyer deposits into once, the
 * receiver claiming cumulative vouchers and sweeping what it claimed to its wallet (`settle`).
 */
export const X402_BATCH_SETTLEMENT_ADDRESS = "0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003" as const;
/** Pulls a channel deposit with the payer's ERC-3009 `receiveWithAuthorization`, then passes it to the escrow. */
export const ERC3009_DEPOSIT_COLLECTOR_ADDRESS = "0x4020806089470a89826cB9fB1f4059150b550004" as const;
/** Pulls a channel deposit through Permit2 straight into the escrow. */
export const PERMIT2_DEPOSIT_COLLECTOR_ADDRESS = "0x4020425FAf3B746C082C2f942b4E5159887B0005" as const;
/** Multicall3, at the same address on every chain; x402's facilitator batches its diagnostic reads through it. */
export const MULTICALL3_ADDRESS = "0xcA11bde05977b3631167028862bE2a173976CA11" as const;
