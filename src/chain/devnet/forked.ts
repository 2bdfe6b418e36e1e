/**
 * A devnet whose blocks carry no state root, for chains of many blocks. anvil 1.7.1 rebuilds the whole
 * state trie for every block it mines, empty or not: about 1 µs a storage slot a block, so a week of 2 s
 * blocks over a few thousand slots takes minutes (docs/benchmarks-log.md, "The demo's week"). A forked anvil
 * computes no state root at all. So such a devnet forks an empty anvil at its genesis block: a second
 * process that never mines and answers only the genesis header and the zero values of accounts the
 * devnet has not touched yet. The devnet carries on from block 1; its blocks' `stateRoot` is zero, which
 * nothing x402, the facilitator or the indexer reads.
 *
 * A saved forked chain keeps the genesis it forked beside it (`fork-genesis.json`), so that a resumed chain
 * forks the very same genesis block: same hash, which the facilitator takes as the chain's identity.
 */
import fs from "node:fs";
import path from "node:path";
import { DevnetError } from "./devnet-errors.ts";

/** Written beside the saved chain of a forked devnet; its absence means a chain with state roots. */
export const FORK_GENESIS_FILE = "fork-genesis.json";

/** What makes the empty chain's genesis block, hence its hash. */
export interface ForkGenesis {
  /** Unix seconds. */
  timestamp: number;
}

/** The genesis a chain saved in `dir` forked, or undefined for a chain with state roots. */
export function readForkGenesis(dir: string): ForkGenesis | undefined {
  const file = path.join(dir, FORK_GENESIS_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const timestamp = (parsed as Partial<ForkGenesis> | undefined)?.timestamp;
  if (!Number.isSafeInteger(timestamp) || (timestamp as number) < 0) {
    throw new DevnetError(`${file} is not a genesis this version wrote: restore it, or start afresh`);
  }
  return { timestamp: timestamp as number };
}

/**
 * Records the genesis of a fresh chain in `dir` (a temporary file renamed into place), or, for a fresh
 * chain with state roots, removes one an earlier chain left: it would make the next resume fork.
 */
export function recordForkGenesis(dir: string, genesis: ForkGenesis | undefined): void {
  const file = path.join(dir, FORK_GENESIS_FILE);
  if (!genesis) {
    fs.rmSync(file, { force: true });
    return;
  }
  const temporary = `${file}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(genesis)}\n`);
  fs.renameSync(temporary, file);
}

/** anvil's arguments for the empty chain the devnet forks: nothing mined, no account, the same rules. */
export function emptyChainArgs(
  genesis: ForkGenesis,
  chain: { chainId: number; hardfork: string; gasLimit: bigint },
): string[] {
  return [
    "--host",
    "127.0.0.1",
    "--port",
    "0",
    "--chain-id",
    String(chain.chainId),
    "--hardfork",
    chain.hardfork,
    "--gas-limit",
    String(chain.gasLimit),
    "--accounts",
    "0",
    "--no-mining",
    "--timestamp",
    String(genesis.timestamp),
  ];
}

/** The devnet's arguments that fork `upstream` at its genesis; nothing is cached on disk. */
export function forkArgs(upstream: string): string[] {
  return ["--fork-url", upstream, "--fork-block-number", "0", "--no-storage-caching"];
}
