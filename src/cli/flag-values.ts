/**
 * A command's flags read as values: the configuration they give with the environment, block and page
 * numbers, seconds to wait. The commands read them here, not in args.ts, which parses a command line with
 * the command table that loads them.
 */
import {
  type AnyChainRecord,
  BASE_RECORD,
  type ChainRecord,
  chainBySlug,
  storeChains,
} from "../chain/chains.ts";
import { UsageError } from "../common/errors.ts";
import { setLogLevel } from "../common/log.ts";
import { loadConfigFromProcess } from "../services/config.ts";
import type { Flags } from "./flags.ts";

/** The configuration of this process: its flags over its environment. */
export function configFrom(flags: Flags) {
  const config = loadConfigFromProcess({
    data: flags.data,
    publicUrl: flags["public-url"],
    host: flags.host,
    port: flags.port,
  });
  // Every command logs at the operator's level, not only those that start services.
  if (config.logLevel) setLogLevel(config.logLevel);
  return config;
}

export function parseEndBlock(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  return whole(value, 0, `--end-block must be a block number, not "${value}"`);
}

/** `--chain SLUG` (`index`, `report`, `leaderboard`, `publish`): Base's record when not given. */
export function parseChain(value: string | undefined): ChainRecord {
  try {
    return chainBySlug(value ?? BASE_RECORD.slug);
  } catch (error) {
    throw new UsageError(`--chain: ${(error as Error).message}`);
  }
}

/** `--chain SLUG` of a command that reads the store (`report`, `leaderboard`, `publish`): Solana too; Base by default. */
export function parseStoreChain(value: string | undefined): AnyChainRecord {
  try {
    return storeChains.chainBySlug(value ?? BASE_RECORD.slug);
  } catch (error) {
    throw new UsageError(`--chain: ${(error as Error).message}`);
  }
}

/** `--page N` (`leaderboard`): 1 when not given. */
export function parsePage(value: string | undefined): number {
  if (value === undefined) return 1;
  return whole(value, 1, `--page must be a page number from 1, not "${value}"`);
}

function whole(value: string, min: number, usage: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)) || Number(value) < min)
    throw new UsageError(usage);
  return Number(value);
}

/** `--wait SECONDS` in milliseconds; `fallback` seconds when not given. */
export function parseWaitMs(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback * 1000;
  if (!/^\d+(\.\d+)?$/.test(value))
    throw new UsageError(`--wait takes seconds such as 30 or 0.5, not "${value}"`);
  return Math.round(Number(value) * 1000);
}
