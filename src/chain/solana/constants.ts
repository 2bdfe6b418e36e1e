/**
 * Solana as x402 settles on it (docs/chains.md, "Solana"): the facts every part that touches Solana shares (the
 * local devnet, the facilitator, the merchants, the indexer), in one place so that none of them loads another's
 * code for a constant. The values are `@x402/svm` 2.27's (`SOLANA_MAINNET_CAIP2`, `USDC_MAINNET_ADDRESS`); they are
 * written here rather than imported because the indexer and the reports do not otherwise load the SDK. The local
 * devnet plays mainnet, as the EVM devnet plays Base (8453): the same network id, USDC at the real mint's address.
 */

/** The chain's slug, as `--chain` and the store's `chain` column spell it. */
export const SOLANA_SLUG = "solana";
/** CAIP-2 id of Solana mainnet-beta (x402's network for it). */
export const SOLANA_NETWORK = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
/** USDC's mint on mainnet-beta. */
export const SOLANA_USDC_MINT = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
export const SOLANA_USDC_DECIMALS = 6;
/** The SPL Token program (USDC's), and the associated-token-account program that derives each owner's account. */
export const SPL_TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
export const TOKEN_2022_PROGRAM = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
export const ASSOCIATED_TOKEN_PROGRAM = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL";
/** The x402 payment-channels program (`upto`, `batch-settlement` on Solana). */
export const PAYMENT_CHANNELS_PROGRAM = "CHNLxYvVA28MJP9PrFuDXccuoGXAx7jBacfLEkahyGsX";
/** A base58 public key: 32 bytes, 32 to 44 characters of Bitcoin's alphabet. */
export const SOLANA_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
