/**
 * A local Solana: litesvm's SVM in process, USDC at mainnet's mint address, funded buyers and a facilitator fee
 * payer, behind a JSON-RPC server on 127.0.0.1 that speaks the validator's wire format for the calls the x402 SDK,
 * the facilitator and the indexer make. `startSolanaDevnet` (devnet.ts) is where to start reading.
 */
export { usdcAccountOf } from "../accounts.ts";
export { type GenesisAccount, LAMPORTS_PER_SOL, SolanaChain, USDC_UNIT } from "./chain.ts";
export {
  type SolanaAccount,
  type SolanaDevnet,
  type SolanaDevnetOptions,
  startSolanaDevnet,
} from "./devnet.ts";
export { keyPairFromSeed, type SolanaKeyPair } from "./keys.ts";
export { MAINNET_GENESIS_HASH } from "./rpc.ts";
