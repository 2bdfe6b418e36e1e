import { AppError } from "../common/errors.ts";
import { ConfigError } from "../config/config.ts";
import { DEFAULT_WAIT_SECONDS, parseCommandLine, UsageError } from "./args.ts";

const USAGE = `x402-merchants: honest weekly x402 payment reports for merchant wallets on Base

Usage:
  x402-merchants import FILE.ndjson [--data DIR]
  x402-merchants report ADDRESS [--evidence] [--end-block N] [--wait SECONDS] [--data DIR] [--public-url URL]
        the merchant's report (JSON, spec 2.1), or with --evidence the evidence behind its flags
  x402-merchants leaderboard [--page N] [--end-block N] [--wait SECONDS] [--data DIR] [--public-url URL]
        one page of the ranking (JSON, 1,000 merchants a page: the ranked, then the unranked and why)
  x402-merchants publish DIR [--replace] [--end-block N] [--wait SECONDS] [--data DIR] [--public-url URL]
        the window's reports, pages, badges and datasets (NDJSON, CSV, Parquet) as a static site with a manifest
        and SHA256SUMS (docs/publish.md); a non-empty DIR needs --replace, swapped only once the new site is whole
  x402-merchants serve [--only reports,utility,utility-alias,inference,social,social-proxy] [--port N] [--host H] [--data DIR] [--public-url URL]
        [--rpc URL and the index flags: the indexer follows that chain into the analytics while serving,
        waiting out RPC outages (--outage-retry-max SECONDS between attempts, default 60); /healthz says the lag]
  x402-merchants listings [--only utility,utility-alias,inference,social,social-proxy]   the merchants' paid
        endpoints as import NDJSON
  x402-merchants social import FILE.jsonl [--data DIR]   X data (archive records, docs/social.md) into the
        social-data API's archive; the file is checked whole before anything is written
  x402-merchants social generate [--tweets N] [--seed S]   a synthetic archive as JSON lines on stdout
  x402-merchants demo [--json] [--scale X] [--days N] [--mix FILE] [--funding-lookback N] [--fresh] [--data DIR]
        (also: npm start) the whole service on a local Base devnet: merchants, facilitator, indexer, reports and
        a buyer simulator playing a week of x402 payments (--days 1-6 plays it in the week's last N days, ready
        sooner); a second start resumes. A directory holding part of a week or a damaged one stops it, naming
        the file; --fresh deletes the demo's week and starts a new one
  x402-merchants simulate --check [--json] [--wait SECONDS] [--data DIR]   the demo's reports against the
        simulator's ground truth, in the window ending where that truth is complete (works while the demo runs)
  x402-merchants devnet [--port N] [--buyers N] [--background-tps N]   a local Base chain (anvil) with USDC and
        funded buyers; --background-tps adds N ETH and USDC transfers a second (Base: about 100) among the payments
  x402-merchants index --rpc URL [--from-block N] [--to-block N] [--follow] [--data DIR]
        [--facilitator ADDRESS]... [--rps N] [--reorg-depth N] [--batch-blocks N] [--concurrency N]
        [--tx-from auto|mixed|block|tx|trace] [--poll-ms N] [--discovery URL] [--discovery-refresh SECONDS]
        [--funding-lookback BLOCKS] [--rpc-attempts N]
  x402-merchants check [--json] [--wait SECONDS] [--data DIR]   reads the whole analytics store (every block's
        checksum, every table, the invariants) and changes nothing; exit 0 when whole, 1 when not
  x402-merchants facilitators [--candidates] [--data DIR]   known signers, or the senders to review
  x402-merchants facilitator --rpc URL [--port N] [--host H] [--asset ADDRESS]... [--open] [--data DIR]
        the project's x402 facilitator alone, on any EVM chain; its key from X402M_FACILITATOR_KEY or the file
        X402M_FACILITATOR_KEY_FILE names. It settles without a key for the payees of X402M_FACILITATOR_PAYEES,
        for others with an API key; beyond loopback with neither it refuses to start unless --open
        (docs/facilitator.md)
  x402-merchants facilitator keys add (--payee ADDR[,ADDR]... | --any-payee) --gas-budget-eth-per-day N
        [--rate N] [--name LABEL] [--data DIR]   an API key (printed once) for those payees, its gas a UTC day
        in ETH and its settlements a minute (default 60)
  x402-merchants facilitator keys list | keys revoke ID [--data DIR]   the keys (JSON lines, never the key
        itself, with today's gas), or revoke one at once

Readers beside a process that holds the analytics database (DuckDB allows one): report, leaderboard, publish and
  simulate --check ask the running serve or demo over HTTP (it records itself in DIR/report-service.json) and print
  the same; beside another command (a report, index) they wait up to --wait SECONDS (default ${DEFAULT_WAIT_SECONDS}) for it, then
  exit 1 naming it. To read while indexing, run serve --rpc URL instead of index --follow.

Environment: X402M_DATA (default ./data), X402M_PUBLIC_URL, PORT, X402M_DUCKDB_MEMORY (default 1GB),
  DATABASE_URL, X402M_FACILITATOR_URL (default http://127.0.0.1:8403), X402M_FACILITATOR_PAYEES,
  X402M_FACILITATOR_KEY or X402M_FACILITATOR_KEY_FILE, X402M_NETWORK (default eip155:8453),
  X402M_ASSET, X402M_ASSET_NAME, X402M_ASSET_VERSION, X402M_ASSET_DECIMALS (default Base USDC),
  X402M_UTILITY_PAY_TO, X402M_UTILITY_URL, X402M_UTILITY_PORT (default 8404),
  X402M_UTILITY_ALIAS_PAY_TO (default the utility's), X402M_UTILITY_ALIAS_URL, X402M_UTILITY_ALIAS_PORT (default 8405),
  X402M_INFERENCE_PAY_TO, X402M_INFERENCE_URL, X402M_INFERENCE_PORT (default 8407),
  X402M_SOCIAL_PAY_TO, X402M_SOCIAL_URL, X402M_SOCIAL_PORT (default 8408), X402M_SOCIAL_PROXY_PAY_TO (default the
  social's), X402M_SOCIAL_PROXY_URL, X402M_SOCIAL_PROXY_PORT (default 8409), X402M_SOCIAL_PROVIDER (archive,
  x-web, twitterapi): the other settings are in README.md

Exit codes: 0 done; 2 a usage mistake (command, arguments, flags or settings: nothing was attempted);
  1 any other failure. Either way stderr says why in one line.`;

/** Runs one command; returns the process exit code. Errors are one line on stderr. */
export async function main(argv: string[]): Promise<number> {
  try {
    const { values, positionals } = parseCommandLine(argv);
    const [command, ...args] = positionals;
    if (values.help || command === undefined || command === "help") {
      process.stdout.write(`${USAGE}\n`);
      return command === undefined && !values.help ? 2 : 0;
    }
    // Each command is loaded when it runs: a merchant host need not hold DuckDB's bindings, nor any
    // command the chain code (about 24 MB and 0.4 s of start-up between them).
    switch (command) {
      case "import":
        return await (await import("./import.ts")).runImport(args, values);
      case "report":
        return await (await import("./report.ts")).runReport(args, values);
      case "leaderboard":
        return await (await import("./report.ts")).runLeaderboard(args, values);
      case "publish":
        return await (await import("./publish.ts")).runPublish(args, values);
      case "serve":
        return await (await import("./serve.ts")).runServe(args, values);
      case "start":
      case "demo":
        return await (await import("./demo.ts")).runDemo(args, values);
      case "simulate":
        return await (await import("./simulate.ts")).runSimulate(args, values);
      case "listings":
        return await (await import("./listings.ts")).runListings(args, values);
      case "index":
        return await (await import("./indexer.ts")).runIndex(args, values);
      case "check":
        return await (await import("./check.ts")).runCheck(args, values);
      case "facilitators":
        return await (await import("./facilitators.ts")).runFacilitators(args, values);
      case "facilitator":
        return await (await import("./facilitator.ts")).runFacilitator(args, values);
      case "devnet":
        return await (await import("./devnet.ts")).runDevnet(args, values);
      case "social":
        return await (await import("./social.ts")).runSocial(args, values);
      default:
        throw new UsageError(`unknown command "${command}" (try --help)`);
    }
  } catch (error) {
    process.stderr.write(`x402-merchants: ${describe(error)}\n`);
    return error instanceof UsageError || error instanceof ConfigError ? 2 : 1;
  }
}

function describe(error: unknown): string {
  if (error instanceof AppError) return error.message;
  // Not an error meant for people: a bug, or a failure nothing anticipated. Its name tells which.
  return error instanceof Error ? `${error.name}: ${error.message.split("\n")[0]}` : String(error);
}
