import { openAnalytics } from "../analytics/duckdb.ts";
import { type AnyChainRecord, SOLANA_RECORD } from "../chain/chains.ts";
import { isSolanaDevnet, SOLANA_DEVNET_FEE_PAYER } from "../chain/devnet-signer.ts";
import { FacilitatorRegistry } from "../chain/facilitators.ts";
import { UsageError } from "../common/errors.ts";
import { untilSignal } from "../common/lifecycle.ts";
import {
  createReporter,
  DEFAULT_BATCH_BLOCKS,
  DEFAULT_CONCURRENCY,
  DEFAULT_SENDER_STRATEGY,
  IndexerInputError,
  type IndexerOptions,
  indexSolana,
  runIndexer,
  SENDER_CHOICES,
  type SenderChoice,
} from "../indexer/index.ts";
import { configFrom, parseChain } from "./flag-values.ts";
import type { Flags } from "./flags.ts";

/** Default request rate: inside the free tiers of the common providers (Alchemy, Infura, QuickNode: 25+ calls/s). */
export const DEFAULT_RPS = 25;

/**
 * `index --rpc URL [--from-block N] [--to-block N] [--follow] [--data DIR] ...`: indexes x402 payments
 * into the analytics database. Progress goes to stderr (a bar on a terminal, JSON lines otherwise); the summary is
 * one JSON line on stdout. SIGINT/SIGTERM stop it cleanly after the batch being committed.
 */
/**
 * The indexer's options from the command line (`index`, and `serve --rpc`): everything but the analytics database,
 * the signal and the progress callback.
 */
export function indexerOptionsFrom(flags: Flags, { follow }: { follow: boolean }): IndexerFlagOptions {
  if (!flags.rpc) throw new UsageError("--rpc URL is needed (a Base JSON-RPC endpoint)");
  if (!/^https?:\/\/\S+$/.test(flags.rpc))
    throw new UsageError(`--rpc must be an http(s) URL, not "${flags.rpc}"`);
  const options = {
    fromBlock: optionalInteger("--from-block", flags["from-block"]),
    toBlock: optionalInteger("--to-block", flags["to-block"]),
    rps: optionalNumber("--rps", flags.rps) ?? DEFAULT_RPS,
    // Absent: the indexer counts 128 s in the chain's blocks at the head (64 of 2 s, 640 of Denim's).
    reorgDepth: optionalInteger("--reorg-depth", flags["reorg-depth"]),
    batchBlocks:
      positive("--batch-blocks", optionalInteger("--batch-blocks", flags["batch-blocks"])) ??
      DEFAULT_BATCH_BLOCKS,
    concurrency:
      positive("--concurrency", optionalInteger("--concurrency", flags.concurrency)) ?? DEFAULT_CONCURRENCY,
    pollMs: positive("--poll-ms", optionalInteger("--poll-ms", flags["poll-ms"])),
    fundingLookback: fundingLookbackFrom(flags),
    rpcAttempts: positive("--rpc-attempts", optionalInteger("--rpc-attempts", flags["rpc-attempts"])),
    discoveryRefresh: positive(
      "--discovery-refresh",
      optionalInteger("--discovery-refresh", flags["discovery-refresh"]),
    ),
  };
  const strategy = (flags["tx-from"] ?? DEFAULT_SENDER_STRATEGY) as SenderChoice;
  if (!SENDER_CHOICES.includes(strategy)) {
    throw new UsageError(`--tx-from must be one of ${SENDER_CHOICES.join(", ")}, not "${flags["tx-from"]}"`);
  }
  if (flags.discovery !== undefined && !/^https?:\/\/\S+$/.test(flags.discovery)) {
    throw new UsageError(`--discovery must be an http(s) URL, not "${flags.discovery}"`);
  }
  if (
    options.fromBlock !== undefined &&
    options.toBlock !== undefined &&
    options.toBlock < options.fromBlock
  ) {
    throw new UsageError("--to-block must not be below --from-block");
  }
  const chain = parseChain(flags.chain);
  const registry = registryWith(chain, flags.facilitator);

  return {
    rpc: {
      url: flags.rpc,
      rps: options.rps,
      backoff: options.rpcAttempts === undefined ? undefined : { attempts: options.rpcAttempts },
    },
    registry,
    chain,
    fromBlock: options.fromBlock,
    toBlock: options.toBlock,
    follow,
    reorgDepth: options.reorgDepth,
    batchBlocks: options.batchBlocks,
    concurrency: options.concurrency,
    senderStrategy: strategy,
    pollMs: options.pollMs,
    fundingLookback: options.fundingLookback,
    discovery: flags.discovery
      ? { url: flags.discovery, refreshMs: options.discoveryRefresh && options.discoveryRefresh * 1000 }
      : undefined,
  };
}

type IndexerFlagOptions = Omit<IndexerOptions, "analytics" | "signal" | "onEvent">;

/**
 * What `serve` follows: the chain `--rpc` names (`--chain`, Base by default) with every `index` flag, and each
 * chain given an RPC by `X402M_RPC_URL_<SLUG>` (src/services/follow-settings.ts) with the same flags but those
 * that name one chain's blocks (`--from-block`, `--to-block`: its indexer starts where the store left it, or at
 * its registry's start) and the Bazaar's refresh, which one indexer does for all. `--rpc` wins over its chain's
 * variable. `--facilitator` signers count on every chain followed: a facilitator's key is one address on each.
 */
export function followOptionsFrom(
  flags: Flags,
  rpcs: Readonly<Record<string, string>>,
): IndexerFlagOptions[] {
  const named = flags.rpc === undefined ? undefined : indexerOptionsFrom(flags, { follow: true });
  const others = Object.entries(rpcs)
    .filter(([slug]) => slug !== named?.chain?.slug)
    .map(([slug, rpc]) =>
      indexerOptionsFrom(
        { ...flags, rpc, chain: slug, "from-block": undefined, "to-block": undefined },
        { follow: true },
      ),
    );
  const all = named ? [named, ...others] : others;
  // One Bazaar refresh for the store, by the first indexer (others' listings would be the same rows).
  return all.map((options, i) => (i === 0 ? options : { ...options, discovery: undefined }));
}

export async function runIndex(args: string[], flags: Flags): Promise<number> {
  if (args.length > 0) throw new UsageError("index takes no arguments (give the endpoint with --rpc URL)");
  if (!flags.rpc)
    throw new UsageError("index needs --rpc URL (a JSON-RPC endpoint of the chain --chain names)");
  if (flags["outage-retry-max"] !== undefined) {
    throw new UsageError("--outage-retry-max is for serve --rpc: index stops when the RPC stays down");
  }
  if (flags.chain === SOLANA_RECORD.slug) return runSolanaIndex(flags);
  const options = indexerOptionsFrom(flags, { follow: flags.follow ?? false });
  const config = configFrom(flags);
  const analytics = await openAnalytics(config);
  const controller = new AbortController();
  void untilSignal().then(() => controller.abort());
  const reporter = createReporter();
  try {
    const summary = await runIndexer({
      ...options,
      analytics,
      signal: controller.signal,
      onEvent: (event) => reporter.onEvent(event),
    });
    reporter.stop();
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    return 0;
  } catch (error) {
    reporter.stop();
    if (error instanceof IndexerInputError) throw new UsageError(error.message);
    throw error;
  } finally {
    analytics.close();
  }
}

/**
 * `index --rpc URL --chain solana`: Solana's `exact` payments up to the finalized slot, and their payers' funding
 * (src/indexer/solana/reader.ts). One pass: `--follow` and the block flags are the EVM indexer's.
 */
async function runSolanaIndex(flags: Flags): Promise<number> {
  const rpc = flags.rpc as string;
  if (!/^https?:\/\/\S+$/.test(rpc)) throw new UsageError(`--rpc must be an http(s) URL, not "${rpc}"`);
  for (const flag of ["follow", "from-block", "to-block", "reorg-depth", "tx-from", "discovery"] as const) {
    if (flags[flag] !== undefined)
      throw new UsageError(`--${flag} is not read on Solana: it reads up to the finalized slot, once`);
  }
  const controller = new AbortController();
  void untilSignal().then(() => controller.abort());
  const registry = await withSolanaDevnetFeePayer(
    rpc,
    registryWith(SOLANA_RECORD, flags.facilitator),
    controller.signal,
  );
  const analytics = await openAnalytics(configFrom(flags));
  try {
    const lookback = flags["funding-lookback"];
    const summary = await indexSolana({
      rpc,
      analytics,
      registry,
      skipFunding: lookback !== undefined && /^0+$/.test(lookback),
      signal: controller.signal,
    });
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    return 0;
  } finally {
    analytics.close();
  }
}

/**
 * On the local Solana (`devnet --chain solana`), its facilitator's fee payer is a facilitator too, as anvil's signer
 * is on the EVM devnet (src/indexer/run/tools.ts): without it, `devnet`, then `index --rpc URL --chain solana`
 * would find no payment unless the user knew to say `--facilitator`. A node whose `getVersion` does not name the
 * local Solana (a cluster's, a provider's), or does not answer, adds nothing.
 */
async function withSolanaDevnetFeePayer(
  rpc: string,
  registry: FacilitatorRegistry,
  signal: AbortSignal,
): Promise<FacilitatorRegistry> {
  const core = await fetch(rpc, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getVersion", params: [] }),
    signal: AbortSignal.any([signal, AbortSignal.timeout(10_000)]),
  })
    .then(async (answer) => ((await answer.json()) as { result?: { "solana-core"?: unknown } }).result)
    .then((version) => version?.["solana-core"])
    .catch(() => undefined);
  if (typeof core !== "string" || !isSolanaDevnet(core)) return registry;
  if (registry.addresses().includes(SOLANA_DEVNET_FEE_PAYER)) return registry;
  return registry.withSigners([SOLANA_DEVNET_FEE_PAYER], "the devnet's facilitator (local Solana)");
}

/**
 * `--outage-retry-max SECONDS` (`serve --rpc`) in milliseconds: the longest wait between attempts to
 * reach an RPC that is down; undefined when not given.
 */
export function outageRetryMaxMs(flags: Flags): number | undefined {
  const value = flags["outage-retry-max"];
  if (value === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(value) || Number(value) <= 0) {
    throw new UsageError(`--outage-retry-max takes seconds above 0, such as 60 or 0.5, not "${value}"`);
  }
  return Math.round(Number(value) * 1000);
}

/**
 * `--funding-lookback BLOCKS` (`index`, `serve --rpc`, `demo`): 0 turns the funding history off; absent, the
 * indexer reads 26 weeks, counted in the chain's blocks at the head.
 */
export function fundingLookbackFrom(flags: Flags): number | undefined {
  return optionalInteger("--funding-lookback", flags["funding-lookback"]);
}

function optionalInteger(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`${flag} must be a whole number, not "${value}"`);
  }
  return Number(value);
}

function optionalNumber(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(value))
    throw new UsageError(`${flag} must be a number (0 = no limit), not "${value}"`);
  return Number(value);
}

function positive(flag: string, value: number | undefined): number | undefined {
  if (value !== undefined && value < 1) throw new UsageError(`${flag} must be at least 1`);
  return value;
}

/** The chain's known facilitators with the signers `--facilitator` adds (repeated, or comma-separated). */
function registryWith(chain: AnyChainRecord, added: readonly string[] | undefined): FacilitatorRegistry {
  try {
    return FacilitatorRegistry.forChain(chain).withSigners(
      (added ?? [])
        .flatMap((f) => f.split(","))
        .map((f) => f.trim())
        .filter(Boolean),
    );
  } catch (error) {
    throw new UsageError(`--facilitator: ${(error as Error).message}`);
  }
}
