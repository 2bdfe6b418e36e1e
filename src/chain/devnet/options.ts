/**
 * What `startDevnet` takes, and the settings it resolves from it: defaults filled in, bad values refused
 * before anything starts.
 */

import { BLOCK_SECONDS, USDC_UNIT } from "../base.ts";
import type { ChainRecord } from "../chains.ts";
import { DevnetError } from "./devnet-errors.ts";

/**
 * The most background transactions a second accepted (`backgroundTps`, background.ts): signing alone
 * takes about a core at that rate. Kept with the options, which are checked against it before anything
 * starts; background.ts reads it from here.
 */
export const MAX_BACKGROUND_TPS = 2_000;

export interface DevnetOptions {
  /** Port on 127.0.0.1; 0 lets the system pick a free one (read it from `rpc`). Default 8545. */
  port?: number;
  /**
   * The chain the devnet plays (a record of `chains.ts`): its chain id, and USDC at its address. Default Base.
   * x402's contracts, Permit2 and Multicall3 are at the same addresses on every chain, as on the real ones.
   */
  chain?: ChainRecord;
  /** How many funded buyer wallets to create. Default 3. */
  buyers?: number;
  /** USDC minted to each buyer, in atomic units (6 decimals). Default 1,000 USDC. */
  buyerUsdc?: bigint;
  /**
   * Wall-clock seconds between blocks (interval mining), default 2 like Base. 0 = no timer: blocks are
   * made only by `mine()`. Either way every block's timestamp is exactly 2 s after its parent's.
   */
  blockTime?: number;
  /** Timestamp of block 0 (unix seconds). Default: now. Start in the past to `mine()` a history up to now. */
  genesisTimestamp?: number;
  /**
   * Number of the genesis block (anvil `--number`). Default 0. Reports need a window of 302,400 blocks,
   * which anvil cannot mine quickly (about 300 empty blocks/s here): start the chain that high instead.
   */
  genesisNumber?: number;
  /**
   * EVM rules, default "prague" (what Base runs). A long chain wants "cancun": under Prague every block
   * writes its parent hash into the EIP-2935 history contract, and anvil's block cost grows with that
   * contract's storage (measured: 125 empty blocks/s after 8,191 blocks, against 50,000/s under Cancun).
   */
  hardfork?: "prague" | "cancun";
  /**
   * Keep the states of only this many recent blocks (anvil `--prune-history [N]`; 0: none): calls at
   * older blocks fail; logs, receipts and traces stay. Without it anvil keeps a state per block and slows
   * as the chain grows; with N > 0 it copies state for every block (measured: 270 blocks/s in the demo
   * against 1,000+ with 0). With 0, a call at "latest" that races a burst of mined blocks can rarely
   * find no state (an error the caller retries or reports).
   */
  pruneHistory?: number;
  /**
   * A directory the chain is saved in on `stop()` (and every `saveIntervalSeconds`), as `state.json.gz`,
   * and loaded from on the next start (./saved-chain.ts). A loaded chain keeps its blocks, logs and
   * balances; setup is skipped and `resumed` is true. About 100 bytes a block (40 MB for a week of Base
   * blocks with the demo's traffic).
   */
  statePath?: string;
  /** Also save the chain every this many seconds; default only on stop. */
  saveIntervalSeconds?: number;
  /**
   * False: blocks without state roots, for a chain of many blocks (./forked.ts): the devnet forks an empty
   * anvil (a second process) at block 0 and computes no state trie, so an empty block costs the same however
   * much state the chain holds (measured: 74,000 empty blocks/s over 2,000 storage slots, against 450/s).
   * Needs `genesisNumber` 0. A saved chain resumes as it was saved, whatever this says. Default true.
   */
  stateRoots?: boolean;
  /** Path of the anvil binary. Default: the one the `@foundry-rs/anvil` package ships for this platform. */
  anvilPath?: string;
  /** How long anvil may take to listen, in ms. Default 15 s. */
  startTimeoutMs?: number;
  /**
   * Transactions a second of background traffic (./background.ts), ETH and USDC transfers between accounts
   * of its own, so that blocks are as dense as Base's (about 100 a second). 0 or absent: none. Needs
   * interval mining (`blockTime` > 0).
   */
  backgroundTps?: number;
}

const DEFAULT_PORT = 8545;

/** The options `startDevnet` reads before it starts anything, with their defaults and checked. */
export interface DevnetSettings {
  port: number;
  buyerCount: number;
  buyerUsdc: bigint;
  blockTime: number;
  backgroundTps: number;
  hardfork: "prague" | "cancun";
}

/** The settings of `options`; throws a DevnetError for a bad one. */
export function devnetSettings(options: DevnetOptions): DevnetSettings {
  const port = options.port ?? DEFAULT_PORT;
  const buyerCount = options.buyers ?? 3;
  const buyerUsdc = options.buyerUsdc ?? 1_000n * USDC_UNIT;
  const blockTime = options.blockTime ?? BLOCK_SECONDS;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new DevnetError(`bad port ${port}`);
  if (!Number.isInteger(buyerCount) || buyerCount < 0) throw new DevnetError(`bad buyer count ${buyerCount}`);
  if (!Number.isInteger(blockTime) || blockTime < 0) throw new DevnetError(`bad block time ${blockTime}`);
  const backgroundTps = options.backgroundTps ?? 0;
  if (!(backgroundTps >= 0 && backgroundTps <= MAX_BACKGROUND_TPS)) {
    throw new DevnetError(`bad background rate ${backgroundTps}: from 0 to ${MAX_BACKGROUND_TPS} a second`);
  }
  if (backgroundTps > 0 && blockTime === 0) {
    throw new DevnetError("background traffic needs interval mining: a block time above 0");
  }
  return { port, buyerCount, buyerUsdc, blockTime, backgroundTps, hardfork: options.hardfork ?? "prague" };
}
