/**
 * The devnet's facilitator signer, for readers of a devnet's chain that need not start it (the indexer):
 * account 1 of anvil's public test mnemonic, which `startDevnet` derives (a test checks that they agree).
 * Kept outside devnet/ so that knowing the address does not load the devnet's launcher (and viem with it).
 */
export const DEVNET_FACILITATOR_SIGNER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

/** Whether a node's `web3_clientVersion` names anvil ("anvil/v1.7.1"): a devnet, never Base itself. */
export const isAnvil = (clientVersion: string): boolean => /^anvil\//i.test(clientVersion);

/**
 * The local Solana's facilitator fee payer (`devnet --chain solana`'s `facilitator.address`): the key the devnet
 * derives from its role, the same every start (src/chain/solana/devnet/keys.ts; a test checks that they agree).
 */
export const SOLANA_DEVNET_FEE_PAYER = "BEdrELJnHgDAnSKDvLRZbctkVcvykYDMgd44BkrERmJx";

/** Whether a node's `getVersion` `solana-core` names the local Solana ("litesvm-1.5.0"): never a cluster's node. */
export const isSolanaDevnet = (core: string): boolean => /^litesvm-/i.test(core);
