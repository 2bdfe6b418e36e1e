import { parseArgs } from "node:util";
import { UsageError } from "../common/errors.ts";
import { loadConfigFromProcess } from "../config/config.ts";

export { UsageError };

const OPTIONS = {
  data: { type: "string" },
  "end-block": { type: "string" },
  port: { type: "string" },
  host: { type: "string" },
  "public-url": { type: "string" },
  buyers: { type: "string" },
  // devnet: transactions a second beside the payments, for blocks as dense as Base's
  "background-tps": { type: "string" },
  // serve, listings: the services to run or list, comma-separated
  only: { type: "string" },
  // index
  rpc: { type: "string" },
  "from-block": { type: "string" },
  "to-block": { type: "string" },
  follow: { type: "boolean" },
  facilitator: { type: "string", multiple: true },
  rps: { type: "string" },
  "reorg-depth": { type: "string" },
  "batch-blocks": { type: "string" },
  concurrency: { type: "string" },
  "tx-from": { type: "string" },
  "poll-ms": { type: "string" },
  discovery: { type: "string" },
  "discovery-refresh": { type: "string" },
  "funding-lookback": { type: "string" },
  "rpc-attempts": { type: "string" },
  // serve --rpc: the longest wait between attempts to reach an RPC that is down
  "outage-retry-max": { type: "string" },
  // facilitators
  candidates: { type: "boolean" },
  // facilitator: the tokens it settles; served without a key for any payee (even beyond loopback)
  asset: { type: "string", multiple: true },
  open: { type: "boolean" },
  // facilitator keys add: the payees a key allows (or any), its gas a day (ETH), settlements a minute
  payee: { type: "string", multiple: true },
  "any-payee": { type: "boolean" },
  "gas-budget-eth-per-day": { type: "string" },
  rate: { type: "string" },
  name: { type: "string" },
  // demo, simulate
  json: { type: "boolean" },
  scale: { type: "string" },
  days: { type: "string" },
  mix: { type: "string" },
  check: { type: "boolean" },
  fresh: { type: "boolean" },
  evidence: { type: "boolean" },
  replace: { type: "boolean" },
  // social generate: the synthetic archive's size and seed
  tweets: { type: "string" },
  seed: { type: "string" },
  // leaderboard: which page of LEADERBOARD_PAGE_SIZE merchants
  page: { type: "string" },
  // report, leaderboard, simulate: how long to wait for an analytics database another command holds
  wait: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

export function parseCommandLine(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export type Flags = ReturnType<typeof parseCommandLine>["values"];

/** The configuration of this process: its flags over its environment. */
export function configFrom(flags: Flags) {
  return loadConfigFromProcess({
    data: flags.data,
    publicUrl: flags["public-url"],
    host: flags.host,
    port: flags.port,
  });
}

export function parseEndBlock(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  return whole(value, 0, `--end-block must be a block number, not "${value}"`);
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

/**
 * How long a reader waits for a database another command holds. A `report` or `leaderboard` holds it for
 * about a second on a small store and a few seconds on a large one; `index` for as long as it runs.
 */
export const DEFAULT_WAIT_SECONDS = 30;

/** `--wait SECONDS` in milliseconds; `fallback` seconds when not given. */
export function parseWaitMs(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback * 1000;
  if (!/^\d+(\.\d+)?$/.test(value))
    throw new UsageError(`--wait takes seconds such as 30 or 0.5, not "${value}"`);
  return Math.round(Number(value) * 1000);
}
