/**
 * The commands of `bin/x402-merchants`, one table: each command's arguments, a one-line summary and exactly
 * the flags it takes. src/cli/args.ts parses a command line with its command's flags alone (so a flag that
 * means nothing to it is refused, not ignored), src/cli/usage.ts writes every help text from it.
 *
 * A command's module is loaded only when it runs: a merchant host need not hold DuckDB's bindings, nor any
 * command the chain code (about 24 MB and 0.4 s of start-up between them). This file imports none of them.
 */
import { DEFAULT_PORT, DEFAULT_PORTS, DEFAULT_PUBLIC_URL, MERCHANT_HOST_NAMES } from "../config/ports.ts";
import { DEFAULT_WAIT_SECONDS, type FlagName, type Flags } from "./flags.ts";

export interface Command {
  /** As typed after `x402-merchants`: "report", "social import", "facilitator keys add". */
  name: string;
  /** Other names it runs under. */
  aliases?: readonly string[];
  /** Its arguments, as its usage shows them ("ADDRESS"). */
  args?: string;
  /** The flags it cannot run without, as its usage shows them; the others are shown as optional. */
  needs?: string;
  summary: string;
  /** More for its `--help`: what it prints, when it stops. */
  notes?: string;
  /** Each flag it takes, with what it does there. */
  flags: Partial<Record<FlagName, string>>;
  /** Why a flag people may expect here is not taken: said when it is refused. */
  refuses?: Partial<Record<FlagName, string>>;
  /** Runs it: `args` are the words after the first (`social import FILE`: `["import", FILE]`). */
  run(args: string[], flags: Flags): Promise<number>;
}

/** A word that only leads to sub-commands ("social", "facilitator keys"). */
export interface Group {
  name: string;
  summary: string;
}

const DATA = "the data directory (default X402M_DATA, else ./data)";
const DATABASE =
  "the data directory, for the database unless DATABASE_URL is set (default X402M_DATA, else ./data)";
const CHANNEL_MERCHANT = `a merchant host by name, such as utility (repeatable, or comma-separated; default every one with a wallet)`;
const HOST = "the address to listen on (default X402M_HOST, else 127.0.0.1)";
const WAIT = `seconds to wait for the analytics database when another command holds it (default ${DEFAULT_WAIT_SECONDS})`;

/** report, leaderboard, publish: what they read and where their page and badge URLs point. */
const READER = {
  chain: "the chain whose week it reads: base (the default), polygon, arbitrum or solana (docs/chains.md)",
  "end-block": "the window ending at block N (default: the latest checkpoint)",
  wait: WAIT,
  data: DATA,
  "public-url": `the base of page and badge URLs (default X402M_PUBLIC_URL, else ${DEFAULT_PUBLIC_URL})`,
} as const;

/** The indexer's flags but --follow: `index`, and `serve --rpc` (which always follows). */
const INDEXER = {
  "from-block": "where a fresh store starts (default: the known facilitators' earliest start date)",
  "to-block": "the last block to index (default: the head less --reorg-depth; following: none)",
  facilitator: "an extra facilitator signer, valid from block 0 (repeatable, or comma-separated)",
  rps: "requests a second to the RPC, every call of a batch counted (default 25; 0 = no limit)",
  "reorg-depth":
    "blocks behind the head a block is indexed, and hashes kept below the checkpoint (default 128 s of blocks: 64 of 2 s, 640 of Base's since Denim)",
  "batch-blocks": "the largest batch, and eth_getLogs span (default 2,000)",
  concurrency: "batches read ahead of the one being committed (default 4)",
  "tx-from": "how transaction senders are fetched (default auto; docs/indexer.md)",
  "poll-ms": "how often to ask for the head, in milliseconds (default 2,000)",
  discovery: "a Bazaar discovery endpoint whose listings are read, at start and every --discovery-refresh",
  "discovery-refresh": "seconds between reads of --discovery (default 3,600)",
  "funding-lookback":
    "how far back the funding history reads, in blocks (default 26 weeks of blocks: 7,862,400 of 2 s, ten times as many of Base's since Denim; 0 turns it off)",
  "rpc-attempts": "tries of one RPC request before the RPC counts as down (default 8)",
} as const;

const SERVICES = ["reports", ...MERCHANT_HOST_NAMES].join(",");
const HOSTS = MERCHANT_HOST_NAMES.join(",");

export const COMMANDS: readonly Command[] = [
  {
    name: "import",
    args: "FILE.ndjson",
    summary: "an import NDJSON file into the analytics store: all or nothing, idempotent",
    notes:
      "A bad line stops it, and so does a line that says otherwise than the store or an earlier line (another amount for a payment already held, a channel's claims beyond its deposits): one line naming FILE:LINE and the reason, exit 1, nothing of the file kept (docs/import.md). A line repeating what is held adds nothing.",
    flags: { data: DATA },
    run: async (args, flags) => (await import("./import.ts")).runImport(args, flags),
  },
  {
    name: "export",
    args: "FILE.ndjson",
    summary: "the analytics store's data as an import NDJSON file, for another store",
    notes:
      "Merchants, listings, hub labels, channels, payments, transfers, channel events, balances and checkpoints (docs/import.md): imported into a fresh store, the same reports. The file appears only once whole. One JSON line of counts when done. A serve or demo holds the store: stop it first.",
    flags: {
      replace: "write over FILE if it exists (a regular file, never the store's own)",
      wait: WAIT,
      data: DATA,
    },
    run: async (args, flags) => (await import("./export.ts")).runExport(args, flags),
  },
  {
    name: "report",
    args: "ADDRESS",
    summary: "a merchant's report (JSON: docs/report.md), or with --evidence its evidence",
    flags: {
      evidence: "the evidence behind the report's flags (hashes, paths, cycles) instead of the report",
      ...READER,
    },
    run: async (args, flags) => (await import("./report.ts")).runReport(args, flags),
  },
  {
    name: "leaderboard",
    summary: "a page of the ranking as JSON: 1,000 merchants, the ranked then the unranked",
    flags: { page: "the page, from 1 (default 1)", ...READER },
    run: async (args, flags) => (await import("./report.ts")).runLeaderboard(args, flags),
  },
  {
    name: "mcp",
    summary: "report, evidence, leaderboard and search as MCP tools on stdio, for agents",
    notes:
      "For an MCP client that starts its servers as commands (docs/mcp.md). Stdout carries MCP's JSON-RPC only, the log goes to stderr. Each call reads the store, or asks the running serve or demo that holds it, as report does; the session ends when the client closes stdin. The report service serves the same tools over HTTP at /mcp.",
    flags: { wait: WAIT, data: DATA, "public-url": READER["public-url"] },
    run: async (args, flags) => (await import("./mcp.ts")).runMcp(args, flags),
  },
  {
    name: "publish",
    args: "DIR",
    summary: "the window's reports, pages, badges and datasets as a static site",
    notes:
      "The datasets are NDJSON, CSV and Parquet; the site has a manifest and SHA256SUMS. A DIR that is not empty needs --replace, and is swapped only once the new site is whole.",
    flags: {
      replace: "swap a DIR that is not empty for the new site, once that is whole",
      ...READER,
    },
    run: async (args, flags) => (await import("./publish.ts")).runPublish(args, flags),
  },
  {
    name: "serve",
    summary: "the report service and merchant hosts; with --rpc, indexing that chain too",
    notes:
      "Each service on its own port; one JSON line of their URLs when ready (and metrics: the process's /metrics, docs/metrics.md); SIGINT or SIGTERM stops it. With --rpc URL (and the indexer's flags) the indexer follows that chain (--chain) into the analytics while serving, waiting out RPC outages; /healthz says how far behind it is. Each chain given X402M_RPC_URL_<CHAIN> (BASE, POLYGON, ARBITRUM) is followed too, by an indexer of its own (docs/chains.md).",
    flags: {
      only: `the services to run, comma-separated, of ${SERVICES} (default: reports and every merchant whose wallet is set)`,
      port: `the report service's port (default PORT, else ${DEFAULT_PORT}; 0 picks a free one); a merchant's is X402M_<NAME>_PORT`,
      host: HOST,
      data: DATA,
      "public-url":
        "the base of page and badge URLs (default X402M_PUBLIC_URL, else the service's own address)",
      rpc: "a JSON-RPC endpoint (http or https) of the chain --chain names (default Base) whose x402 payments the indexer follows while serving",
      chain:
        "the chain --rpc serves: base (the default), polygon or arbitrum; X402M_RPC_URL_<CHAIN> gives others (docs/chains.md)",
      ...INDEXER,
      "outage-retry-max": "the longest wait between attempts to reach an RPC that is down (default 60)",
    },
    refuses: { follow: "serve --rpc always follows" },
    run: async (args, flags) => (await import("./serve.ts")).runServe(args, flags),
  },
  {
    name: "listings",
    summary: "the merchants' paid endpoints as import NDJSON (listing records)",
    notes:
      "Without --only, the merchants whose wallet is set (X402M_<NAME>_PAY_TO). With none set it lists nothing: it says which settings would give it merchants and exits 2.",
    flags: {
      only: `the merchants to list, comma-separated, of ${HOSTS} (default: every one whose wallet is set)`,
      host: "the host of the endpoints' URLs when a merchant has no X402M_<NAME>_URL (default X402M_HOST, else 127.0.0.1)",
    },
    run: async (args, flags) => (await import("./listings.ts")).runListings(args, flags),
  },
  {
    name: "social import",
    args: "FILE.jsonl",
    summary: "X data (archive records, docs/social.md) into the social-data API's archive",
    notes:
      "The whole file is checked before anything is written, and imported in one transaction: a bad line or a refused record stops it, naming the line, with nothing written. Importing the same file again changes nothing.",
    flags: { data: DATABASE },
    run: async (args, flags) => (await import("./social.ts")).runSocial(args, flags),
  },
  {
    name: "social generate",
    summary: "a synthetic archive as JSON lines on stdout",
    flags: { tweets: "tweets in it (default 1,000)", seed: "the random seed (default 1)" },
    run: async (args, flags) => (await import("./social.ts")).runSocial(args, flags),
  },
  {
    name: "demo",
    aliases: ["start"],
    summary: "the whole service on local chains, a week of buyers (also: start)",
    notes:
      "Also npm start. Merchants, facilitator, indexer, reports and a buyer simulator playing a week of x402 payments. Progress goes to stderr; once the week is on chain and indexed, the URLs to stdout. A second start resumes. A data directory holding part of a week, or a damaged one, stops it, naming the file; --fresh deletes the demo's week and starts a new one. Ctrl-C stops it and saves the chain.",
    flags: {
      json: "the ready line as one JSON line instead of text",
      scale: "the simulated volume, a multiple of the mix's (default 1)",
      days: "play the week in its last N days, 1 to 7: ready sooner (default 7)",
      mix: "the buyers and their payments, as JSON (default src/demo/mix.ts's: about 400 payments a week)",
      chain:
        "the chains a fresh week plays: base,arbitrum,solana (default: Base, a second devnet as Arbitrum One and a local Solana), base,arbitrum, base,solana or base",
      "funding-lookback": INDEXER["funding-lookback"],
      fresh: "delete the demo's week (DIR/demo, its analytics) and start a new one",
      data: DATA,
      port: `the report service's port (default PORT, else ${DEFAULT_PORT}; 0 picks a free one)`,
      host: HOST,
      "public-url":
        "the base of page and badge URLs (default X402M_PUBLIC_URL, else the service's own address)",
    },
    run: async (args, flags) => (await import("./demo.ts")).runDemo(args, flags),
  },
  {
    name: "simulate",
    needs: "--check",
    summary: "the demo's reports against the simulator's ground truth (exit 1 if one is off)",
    notes:
      "It reads the window ending where that truth is complete, and works while the demo runs (it asks the demo's report service).",
    flags: {
      check: "compare the reports with the ground truth: per merchant, what each reported and what was paid",
      chain: "check that chain's week alone, base, arbitrum or solana (default: every chain the demo plays)",
      json: "one JSON line instead of a table",
      wait: WAIT,
      data: DATA,
    },
    run: async (args, flags) => (await import("./simulate.ts")).runSimulate(args, flags),
  },
  {
    name: "devnet",
    summary: "a local Base (anvil) or Solana with USDC, funded buyers and the facilitator",
    notes: `Prints one JSON line {"rpc", "facilitator", "signer", "chainId", "usdc", "buyers"} when ready; SIGINT or SIGTERM stops it. The facilitator listens on X402M_FACILITATOR_PORT (default ${DEFAULT_PORTS.facilitator}); it signs payment channels' claims and refunds for merchants that ask from this machine without a key (serve against its URL takes channels as it is). With --chain solana: the SVM in process (litesvm) behind a JSON-RPC server, USDC at mainnet's mint; it prints {"rpc", "facilitator", "network", "usdc", "buyers"}, facilitator being the fee payer's key pair (docs/cli.md).`,
    flags: {
      chain: "base (default) or solana",
      port: `the chain's port (default ${DEFAULT_PORTS.devnet}, with --chain solana ${DEFAULT_PORTS.solanaDevnet}; 0 picks a free one)`,
      buyers: "funded buyer accounts (default 3)",
      "background-tps":
        "ETH and USDC transfers a second beside the payments, 0 to 2,000 (default 0; Base's density: about 100)",
      host: "the address the facilitator listens on (default X402M_HOST, else 127.0.0.1)",
      open: "beyond loopback, let the facilitator settle for any payee without a key (docs/facilitator.md)",
      data: DATABASE,
    },
    run: async (args, flags) => (await import("./devnet.ts")).runDevnet(args, flags),
  },
  {
    name: "index",
    needs: "--rpc URL",
    summary: "x402 payments from a JSON-RPC endpoint (Base, Polygon, Arbitrum) into the store",
    notes:
      "Defaults and limits: docs/indexer.md. Progress goes to stderr, one JSON summary line to stdout; SIGINT or SIGTERM stops it after the batch being committed. To read reports while indexing, run serve --rpc URL instead of index --follow.",
    flags: {
      rpc: "a JSON-RPC endpoint (http or https) of the chain --chain names",
      chain:
        "the chain the RPC serves: base (the default), polygon, arbitrum or solana (docs/chains.md, on Solana one pass to the finalized slot, docs/indexer.md); a store holds several side by side",
      follow: "keep following the head, --reorg-depth blocks behind it, until SIGINT or SIGTERM",
      ...INDEXER,
      data: DATA,
    },
    refuses: { "outage-retry-max": "that is for serve --rpc; index stops when the RPC stays down" },
    run: async (args, flags) => (await import("./indexer.ts")).runIndex(args, flags),
  },
  {
    name: "check",
    summary: "reads the whole analytics store, changes nothing: exit 0 when whole, 1 when not",
    notes: "It reads every block's checksum, every table and the invariants.",
    flags: { json: "one JSON line instead of text", wait: WAIT, data: DATA },
    run: async (args, flags) => (await import("./check.ts")).runCheck(args, flags),
  },
  {
    name: "verify",
    args: "REPORT.json...",
    needs: "--rpc URL",
    summary: "checks downloaded reports against their week's attestation on Base (EAS)",
    notes:
      "Each report's proof must take it to the root its attestation field names, and EAS on that chain must hold that attestation: the week schema, the report's window and methodology, that root, not revoked. One line per report verified; the first that does not verify stops it, naming the file and why, exit 1. Anyone can attest under a public schema: pass --attester with the operator's address to trust only its attestations. Nothing is written. Each step, to check by hand: docs/attestation.md.",
    flags: {
      rpc: "a JSON-RPC endpoint (http or https) of the chain the reports were attested on",
      attester: "the only attester to accept: the operator's address (default: whoever the report names)",
      json: "one JSON line per report verified instead of text",
    },
    run: async (args, flags) => (await import("./verify.ts")).runVerify(args, flags),
  },
  {
    name: "verify-receipt",
    args: "FILE|-",
    summary: "checks a merchant's signed receipt: its signature, amount and ceiling",
    notes:
      "FILE (or - for standard input) holds what the paid answer carried: its PAYMENT-RESPONSE header as sent or decoded, or the offer-receipt extension's info ({receipt, charge, offer}). The x402 receipt and the kit's charge beside it must be signed by one key and agree; the charge's amount must be within its ceiling; an offer given must be that key's, on the same terms. One line when it verifies; else the reason on stderr, exit 1. Without --signer it says who signed, not that it was the merchant: docs/platform.md, \"Signed offers and receipts (offer-receipt)\".",
    flags: {
      signer: "the merchant's signing address: a receipt signed by any other key is refused",
      json: "one JSON line (signer, receipt, charge) instead of text",
    },
    run: async (args, flags) => (await import("./verify-receipt.ts")).runVerifyReceipt(args, flags),
  },
  {
    name: "facilitators",
    summary: "the known facilitator signers, or with --candidates the senders to review",
    flags: {
      candidates:
        "the senders of EIP-3009 settlements not counted as x402 payments, most settlements first, from the store",
      data: DATA,
    },
    run: async (args, flags) => (await import("./facilitators.ts")).runFacilitators(args, flags),
  },
  {
    name: "facilitator",
    needs: "--rpc URL",
    summary: "the project's x402 facilitator alone, on any EVM chain (docs/facilitator.md)",
    notes:
      "It settles on --rpc's chain and on each chain given X402M_RPC_URL_<CHAIN> (one process, one URL; each chain's key X402M_FACILITATOR_KEY_<CHAIN> and payees X402M_FACILITATOR_PAYEES_<CHAIN> where set). Its signing key comes from X402M_FACILITATOR_KEY, or the file X402M_FACILITATOR_KEY_FILE names. It settles without an API key for the payees of X402M_FACILITATOR_PAYEES, for others with one (facilitator keys add); beyond loopback with neither it refuses to start unless --open. It relays deposits into channels naming a merchant's own authorizer once X402M_FACILITATOR_CHANNEL_AUTHORIZERS names it (receiver=authorizer pairs). Prints one JSON line when ready; SIGINT or SIGTERM stops it. Its API keys: x402-merchants facilitator keys --help.",
    flags: {
      rpc: "the chain it settles on (http or https; its chain id makes the network)",
      port: `its port (default X402M_FACILITATOR_PORT, else ${DEFAULT_PORTS.facilitator}; 0 picks a free one)`,
      host: HOST,
      asset: "a token it settles (repeatable; default the chain's USDC on Base and Base Sepolia)",
      open: "beyond loopback, settle for any payee without a key, on purpose: it pays the gas",
      data: DATABASE,
    },
    run: async (args, flags) => (await import("./facilitator.ts")).runFacilitator(args, flags),
  },
  {
    name: "facilitator keys add",
    needs: "(--payee ADDR[,ADDR]... | --any-payee) --gas-budget-eth-per-day N",
    summary: "an API key for the facilitator (printed once): payees, gas a day, rate",
    notes:
      "Prints one JSON line with the key: the only time it is shown (the database keeps its SHA-256). The database is the one facilitator opens; while a facilitator holds its PGlite directory, the command asks that facilitator (keys list and revoke too).",
    flags: {
      payee: "a payee the key settles for (repeatable, or comma-separated)",
      "any-payee": "the key settles for any payee, on purpose",
      "gas-budget-eth-per-day":
        "the most its settlements may cost in gas in a UTC day on each chain, in ETH (such as 0.005; in POL on Polygon)",
      "chain-gas-budget":
        "another budget on one chain, in its coin: polygon=20 (repeatable; a facilitator on several chains counts each chain's day apart)",
      rate: "its settlements a minute, 1 to 100,000 (default 60)",
      name: "a label to know it by",
      data: DATABASE,
    },
    run: async (args, flags) => (await import("./facilitator.ts")).runFacilitator(args, flags),
  },
  {
    name: "facilitator keys list",
    summary: "the facilitator's API keys as JSON lines, with today's gas: never the key itself",
    flags: { data: DATABASE },
    run: async (args, flags) => (await import("./facilitator.ts")).runFacilitator(args, flags),
  },
  {
    name: "facilitator keys revoke",
    args: "ID",
    summary: "revokes an API key (its id from keys list) at once",
    flags: { data: DATABASE },
    run: async (args, flags) => (await import("./facilitator.ts")).runFacilitator(args, flags),
  },
  {
    name: "channels list",
    summary: "the open payment channels: balance, unclaimed money, time to withdrawal",
    notes:
      "One JSON line per open channel: merchant, payer, balance, charged, claimed and unclaimed (in the token, e.g. USDC), and withdrawalEndsInSeconds, how long until a payer's withdrawal could take the unclaimed money. The database is the one serve opens; while serve holds its PGlite directory, the command asks that process (claim and refund too).",
    flags: { merchant: CHANNEL_MERCHANT, data: DATABASE },
    run: async (args, flags) => (await import("./channels.ts")).runChannels(args, flags),
  },
  {
    name: "channels claim",
    summary: "claims every channel that owes now, through the merchants' facilitators",
    notes:
      "As the claim schedule does, whatever it would wait for (gas, its interval): one JSON line per merchant wallet with the channels claimed and the transactions.",
    flags: { merchant: CHANNEL_MERCHANT, data: DATABASE },
    run: async (args, flags) => (await import("./channels.ts")).runChannels(args, flags),
  },
  {
    name: "channels refund",
    needs: "--payer ADDRESS",
    summary: "refunds a payer's channels: what they hold beyond their charges goes back",
    notes:
      "A cooperative refund per channel, its charges claimed in the same transaction, signed by the merchant's own authorizer key where its channels name it. One JSON line per merchant wallet; a payer without an open channel is refused.",
    flags: { payer: "the payer whose channels are refunded", merchant: CHANNEL_MERCHANT, data: DATABASE },
    run: async (args, flags) => (await import("./channels.ts")).runChannels(args, flags),
  },
];

export const GROUPS: readonly Group[] = [
  { name: "social", summary: "the social-data API's archive: import X data, or generate a synthetic one" },
  {
    name: "channels",
    summary: 'the merchants\' payment channels, operated (docs/platform.md, "Channels operated")',
  },
  {
    name: "facilitator keys",
    summary:
      'the facilitator\'s API keys, for payees beyond its allow-list (docs/facilitator.md, "Access control")',
  },
];

/** The sub-commands of a group, in the table's order. */
export function commandsOf(group: Group): Command[] {
  return COMMANDS.filter((c) => c.name.startsWith(`${group.name} `));
}

/**
 * The command or group the leading `words` name, the longest match: `["facilitator", "keys", "list"]` is
 * `facilitator keys list`, `["facilitator", "keys"]` the group, `["facilitator"]` the command. Also how many
 * words its name took.
 */
export function lookup(words: readonly string[]): { found: Command | Group; words: number } | undefined {
  for (let n = Math.min(words.length, 3); n > 0; n--) {
    const name = words.slice(0, n).join(" ");
    const found =
      COMMANDS.find((c) => c.name === name || c.aliases?.includes(name)) ??
      GROUPS.find((g) => g.name === name);
    if (found) return { found, words: n };
  }
  return undefined;
}

export function isCommand(entry: Command | Group): entry is Command {
  return "run" in entry;
}
