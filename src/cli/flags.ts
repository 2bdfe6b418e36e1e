/**
 * Every flag of `bin/x402-merchants`, and what a command's run function receives from them. A file of its
 * own: commands.ts names each command's flags from it and loads the command's module when it runs, and the
 * commands read their flags' type here, so they do not import the table that loads them (src/cli/args.ts
 * parses with it, src/cli/flag-values.ts reads the values).
 */

/**
 * How long a reader waits for a database another command holds. A `report` or `leaderboard` holds it for
 * about a second on a small store and a few seconds on a large one; `index` for as long as it runs.
 */
export const DEFAULT_WAIT_SECONDS = 30;

/**
 * Every flag any command takes: its type, and how its value is shown in the help. One flag means the same
 * kind of value wherever it is taken; what it is for there is each command's own line below.
 */
export const FLAGS = {
  data: { type: "string", value: "DIR" },
  "public-url": { type: "string", value: "URL" },
  host: { type: "string", value: "H" },
  port: { type: "string", value: "N" },
  wait: { type: "string", value: "SECONDS" },
  "end-block": { type: "string", value: "N" },
  evidence: { type: "boolean" },
  page: { type: "string", value: "N" },
  replace: { type: "boolean" },
  only: { type: "string", value: "LIST" },
  json: { type: "boolean" },
  // the indexer's (index, serve --rpc)
  rpc: { type: "string", value: "URL" },
  chain: { type: "string", value: "SLUG" },
  "from-block": { type: "string", value: "N" },
  "to-block": { type: "string", value: "N" },
  follow: { type: "boolean" },
  facilitator: { type: "string", value: "ADDRESS", multiple: true },
  rps: { type: "string", value: "N" },
  "reorg-depth": { type: "string", value: "N" },
  "batch-blocks": { type: "string", value: "N" },
  concurrency: { type: "string", value: "N" },
  "tx-from": { type: "string", value: "auto|mixed|block|tx|trace" },
  "poll-ms": { type: "string", value: "N" },
  discovery: { type: "string", value: "URL" },
  "discovery-refresh": { type: "string", value: "SECONDS" },
  "funding-lookback": { type: "string", value: "BLOCKS" },
  "rpc-attempts": { type: "string", value: "N" },
  "outage-retry-max": { type: "string", value: "SECONDS" },
  // demo, simulate
  scale: { type: "string", value: "X" },
  days: { type: "string", value: "N" },
  mix: { type: "string", value: "FILE" },
  fresh: { type: "boolean" },
  check: { type: "boolean" },
  // devnet
  buyers: { type: "string", value: "N" },
  "background-tps": { type: "string", value: "N" },
  // facilitators, facilitator, facilitator keys add
  candidates: { type: "boolean" },
  asset: { type: "string", value: "ADDRESS", multiple: true },
  open: { type: "boolean" },
  payee: { type: "string", value: "ADDR[,ADDR]", multiple: true },
  "any-payee": { type: "boolean" },
  "gas-budget-eth-per-day": { type: "string", value: "N" },
  "chain-gas-budget": { type: "string", value: "CHAIN=N", multiple: true },
  rate: { type: "string", value: "N" },
  name: { type: "string", value: "LABEL" },
  // channels
  merchant: { type: "string", value: "NAME", multiple: true },
  payer: { type: "string", value: "ADDRESS" },
  // social generate
  tweets: { type: "string", value: "N" },
  seed: { type: "string", value: "S" },
  // verify
  attester: { type: "string", value: "ADDRESS" },
  // verify-receipt
  signer: { type: "string", value: "ADDRESS" },
} as const satisfies Record<string, FlagKind>;

export type FlagKind =
  | { type: "boolean"; value?: undefined; multiple?: undefined }
  | { type: "string"; value: string; multiple?: true };

export type FlagName = keyof typeof FLAGS;

export function flagOf(name: FlagName): FlagKind {
  return FLAGS[name];
}

/** What a command's `run*` function receives: the flags given, by name. */
export type Flags = {
  [K in FlagName]?: (typeof FLAGS)[K] extends { type: "boolean" }
    ? boolean | undefined
    : (typeof FLAGS)[K] extends { multiple: true }
      ? string[] | undefined
      : string | undefined;
};
