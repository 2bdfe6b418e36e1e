import type { Server } from "node:http";
import { SOLANA_NETWORK, SOLANA_USDC_MINT } from "../constants.ts";
import { DEFAULT_GENESIS, type GenesisOptions, SolanaChain } from "./chain.ts";
import { base58, type SolanaKeyPair } from "./keys.ts";
import { serveRpc } from "./server.ts";

export interface SolanaDevnetOptions extends Partial<GenesisOptions> {
  /** Listening port on 127.0.0.1 (0, the default, picks a free one). */
  port?: number;
  host?: string;
}

/** A key pair as the devnet hands it out: base58 address, base58 of the 64-byte key pair (seed then public key). */
export interface SolanaAccount {
  address: string;
  secretKey: string;
}

export interface SolanaDevnet {
  /** JSON-RPC over HTTP, e.g. `http://127.0.0.1:8899`. */
  rpc: string;
  /** `solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp`: the devnet plays mainnet. */
  network: string;
  /** USDC's mint, at mainnet's address. */
  usdc: string;
  /** The facilitator's fee payer: SOL, no USDC. */
  feePayer: SolanaAccount;
  buyers: SolanaAccount[];
  /** The chain itself, for tests and the demo: state, history, airdrops. */
  chain: SolanaChain;
  stop(): Promise<void>;
}

/** Starts the SVM in process with USDC and funded accounts, and its JSON-RPC server. */
export async function startSolanaDevnet(options: SolanaDevnetOptions = {}): Promise<SolanaDevnet> {
  const chain = await SolanaChain.create({
    buyers: options.buyers ?? DEFAULT_GENESIS.buyers,
    buyerUsdc: options.buyerUsdc ?? DEFAULT_GENESIS.buyerUsdc,
    buyerLamports: options.buyerLamports ?? DEFAULT_GENESIS.buyerLamports,
    feePayerLamports: options.feePayerLamports ?? DEFAULT_GENESIS.feePayerLamports,
    ...(options.accounts && { accounts: options.accounts }),
    ...(options.now && { now: options.now }),
  });
  const { url, server } = await serveRpc(chain, options.host ?? "127.0.0.1", options.port ?? 0);
  return {
    rpc: url,
    network: SOLANA_NETWORK,
    usdc: SOLANA_USDC_MINT,
    feePayer: account(chain.feePayer),
    buyers: chain.buyers.map(account),
    chain,
    stop: () => close(server),
  };
}

function account(keyPair: SolanaKeyPair): SolanaAccount {
  return { address: keyPair.address, secretKey: base58(keyPair.secretKey) };
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
