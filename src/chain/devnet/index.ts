/**
 * The devnet: anvil as Base (chain id 8453) on 127.0.0.1, with USDC, Permit2, x402's `upto` and `exact`
 * proxies, its `batch-settlement` escrow and deposit collectors, and Multicall3 at their canonical addresses,
 * EAS and its SchemaRegistry at Base's predeploys, and funded accounts, saved and resumed across runs.
 * Everything outside this folder enters it here; `startDevnet` (devnet.ts) is where to start reading.
 */
export { DEVNET_MNEMONIC, type DevnetAccount, derive } from "./accounts.ts";
export type { BackgroundTraffic } from "./background.ts";
export { devnetChain } from "./chain.ts";
export { type Devnet, startDevnet } from "./devnet.ts";
export { DevnetError, SavedChainError } from "./devnet-errors.ts";
export { type DevnetOptions, MAX_BACKGROUND_TPS } from "./options.ts";
export { findSavedChain, LEGACY_CHAIN_FILE, SAVED_CHAIN_FILE } from "./saved-chain.ts";
