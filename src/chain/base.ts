/**
 * Facts about Base mainnet that reports and the analytics database rely on, read from Base's record in
 * `chains.ts` (the one place a chain's facts are written).
 */
import { BASE_RECORD, X402_CONTRACTS } from "./chains.ts";

export const BASE_CHAIN = BASE_RECORD.slug;
export const BASE_CHAIN_ID: number = BASE_RECORD.chainId;
/** Base's CAIP-2 id, `eip155:8453`: the network x402 v2 names it by. */
export const BASE_CAIP2: `eip155:${number}` = BASE_RECORD.caip2;
/** Canonical USDC on Base, lower-case as the analytics database keeps every address. */
export const BASE_USDC: `0x${string}` = BASE_RECORD.usdc.address;
/** Base Sepolia (the testnet, chain id 84532) and its USDC, for a facilitator run against it. */
export const BASE_SEPOLIA_CHAIN_ID = 84532;
export const BASE_SEPOLIA_USDC = "0x036cbd53842c5426634e7929541ec2318f3dcf7e";
export const USDC_DECIMALS: number = BASE_RECORD.usdc.decimals;
export const USDC_UNIT: bigint = 10n ** BigInt(USDC_DECIMALS);
/**
 * The most atomic units one payment or transfer may carry: 10^16, ten billion dollars. USDC's whole
 * supply, every chain together, is about 7.5 * 10^16 units; an x402 payment of more than ten billion
 * dollars for one request is not a payment, and a number that large is a wrong contract, a broken RPC
 * or a made-up file. The import refuses such a line and the indexer skips such a log (and says so), so
 * the store never holds one. Sums of many bounded amounts can still pass 2^63 (923 of them do): the
 * reports add them up in HUGEINT.
 */
export const MAX_USDC_AMOUNT = 10n ** 16n;
/** Base produced a block exactly every 2 seconds until Denim (`BlockClock` has its whole schedule); devnets still do. */
export const BLOCK_SECONDS: number = BASE_RECORD.clock.blockSeconds;
/** Timestamp of Base block 0; with BLOCK_SECONDS it dates any block when no nearer anchor is known. */
export const BASE_GENESIS_TIME: number = BASE_RECORD.clock.genesisTime;
/**
 * Base Mainnet's Denim upgrade (2026-11-05 18:00 UTC; docs.base.org's Denim overview): a block every 200 ms
 * from its activation block on, several sharing one header timestamp. The 2 s rule above holds for the blocks
 * before it only (`BlockClock`; docs/chains.md, "Base's clock since Denim").
 */
export const BASE_DENIM_TIME: number = BASE_RECORD.clock.upgrade.activationTime;
/** 302,400 blocks of 2 seconds are exactly 7 days: a week of Base before Denim, and of the devnets. */
export const WEEK_BLOCKS: number = (7 * 86_400) / BLOCK_SECONDS;

export type Chain = typeof BASE_CHAIN;

/**
 * Uniswap's Permit2, at the same address on every chain (deployed with CREATE2). x402's `upto` scheme, and
 * `exact` for tokens without EIP-3009, move the buyer's tokens through it; the buyer approves it once.
 */
export const PERMIT2_ADDRESS = X402_CONTRACTS.permit2;
/**
 * x402's `upto` proxy (`@x402/evm`'s `x402UptoPermit2ProxyAddress`): the spender the buyer's Permit2 signature
 * names, which the facilitator calls to settle any amount up to the signed maximum.
 */
export const X402_UPTO_PROXY_ADDRESS = X402_CONTRACTS.uptoProxy;
/**
 * x402's `exact` Permit2 proxy (`@x402/evm`'s `x402ExactPermit2ProxyAddress`): `exact` for wallets and tokens
 * that do not use EIP-3009 (`assetTransferMethod: "permit2"`); it moves exactly the signed amount.
 */
export const X402_EXACT_PROXY_ADDRESS = X402_CONTRACTS.exactProxy;
/**
 * x402's `batch-settlement` escrow (`x402BatchSettlement`): payment channels a buyer deposits into once, the
 * receiver claiming cumulative vouchers and sweeping what it claimed to its wallet (`settle`).
 */
export const X402_BATCH_SETTLEMENT_ADDRESS = X402_CONTRACTS.batchSettlement;
/** Pulls a channel deposit with the payer's ERC-3009 `receiveWithAuthorization`, then passes it to the escrow. */
export const ERC3009_DEPOSIT_COLLECTOR_ADDRESS = X402_CONTRACTS.erc3009DepositCollector;
/** Pulls a channel deposit through Permit2 straight into the escrow. */
export const PERMIT2_DEPOSIT_COLLECTOR_ADDRESS = X402_CONTRACTS.permit2DepositCollector;
/** Multicall3, at the same address on every chain; x402's facilitator batches its diagnostic reads through it. */
export const MULTICALL3_ADDRESS = X402_CONTRACTS.multicall3;
