import { createPublicClient, defineChain, getAddress, http, isAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { base, baseSepolia } from "viem/chains";
import { BASE_CHAIN_ID, BASE_SEPOLIA_CHAIN_ID, BASE_SEPOLIA_USDC } from "../chain/base.ts";
import { chains } from "../chain/chains.ts";
import { SOLANA_NETWORK, SOLANA_SLUG, SOLANA_USDC_MINT } from "../chain/solana/constants.ts";
import { UsageError } from "../common/errors.ts";
import { Lifecycle, untilSignal } from "../common/lifecycle.ts";
import { ConfigError } from "../config/config-error.ts";
import { chainRpcVariable, facilitatorChainVariable } from "../config/values.ts";
import type { FacilitatorChainOptions } from "../services/index.ts";
import { configFrom } from "./flag-values.ts";
import type { Flags } from "./flags.ts";

/**
 * The USDC a facilitator settles by default on the chains that have a known one: every chain record's
 * (src/chain/chains.ts: Base, Polygon PoS's native USDC, Arbitrum One's), and Base Sepolia's.
 */
const KNOWN_USDC: Record<number, string> = {
  ...Object.fromEntries(chains.list.map((chain) => [chain.chainId, chain.usdc.address])),
  [BASE_SEPOLIA_CHAIN_ID]: BASE_SEPOLIA_USDC,
};

/**
 * Runs the project's facilitator alone against any EVM chain: `--rpc URL` (its chain id makes the network,
 * `eip155:<id>`), the settling key from X402M_FACILITATOR_KEY or the file X402M_FACILITATOR_KEY_FILE
 * names, the tokens from `--asset` (default the chain's USDC on Base, Polygon PoS, Arbitrum One and Base Sepolia). Listens on
 * `--host`/`--port` (default X402M_FACILITATOR_PORT, 8403), its ledger, Bazaar and API keys in
 * `<data>/facilitator-postgres` or DATABASE_URL. Payees beyond X402M_FACILITATOR_PAYEES need an API key
 * (`facilitator keys ...`, src/cli/facilitator-keys.ts); beyond loopback with neither, it refuses to start
 * unless `--open`. Prints one JSON line `{"facilitator", "network", "signer", "assets", "access", "metrics"}`
 * when ready; stops on SIGINT/SIGTERM.
 */
export async function runFacilitator(args: string[], flags: Flags): Promise<number> {
  if (args[0] === "keys") {
    return (await import("./facilitator-keys.ts")).runFacilitatorKeys(args.slice(1), flags);
  }
  if (args.length > 0) throw new UsageError("facilitator takes no arguments (or: facilitator keys ...)");
  if (flags.rpc !== undefined && !/^https?:\/\//.test(flags.rpc))
    throw new UsageError(`--rpc must be an http(s) URL, not "${flags.rpc}"`);
  const loaded = configFrom({ ...flags, port: undefined });
  const port = flags.port === undefined ? loaded.ports.facilitator : portOf(flags.port);
  const config = { ...loaded, ports: { ...loaded.ports, facilitator: port } };
  // `--rpc`'s chain first, then each chain given X402M_RPC_URL_<SLUG> (issue 67 item 6): one process, one URL.
  const rpcs = [
    ...(flags.rpc ? [{ rpc: flags.rpc, variable: "--rpc" }] : []),
    // Solana is not an EVM chain: it is settled with its own key and RPC (below), never asked for a chain id.
    ...Object.entries(config.follow.rpc)
      .filter(([slug]) => slug !== SOLANA_SLUG)
      .map(([slug, rpc]) => ({
        rpc,
        variable: chainRpcVariable(slug),
        slug,
      })),
  ];
  const solana = solanaOf(config, rpcs.length === 0);
  if (rpcs.length === 0 && !solana)
    throw new UsageError(
      "facilitator needs --rpc URL (or X402M_RPC_URL_<CHAIN>, or X402M_SOLANA_RPC_URL with X402M_FACILITATOR_SOLANA_KEY): the chain it settles on",
    );
  // Said before any chain is asked: without a key nothing could be settled, whatever the RPCs answer.
  if (
    rpcs.length > 0 &&
    !config.facilitatorKey &&
    !Object.values(config.facilitatorChains).some((c) => c.key)
  ) {
    throw new ConfigError(
      "the facilitator needs its signing key: set X402M_FACILITATOR_KEY or X402M_FACILITATOR_KEY_FILE (it pays the gas)",
    );
  }
  const settled = new Map<number, SettledChain>();
  for (const given of rpcs) {
    const chain = await settledChain(given, config, flags.asset);
    // The --rpc chain's own variable, when set too, says the same chain again.
    if (!settled.has(chain.chainId)) settled.set(chain.chainId, chain);
  }
  // Solana alone: the EVM options are a placeholder `solana.only` tells the service to leave unused.
  const [first, ...more] = (
    settled.size > 0
      ? [...settled.values()]
      : [{ chainId: 0, signer: "0x", options: { rpc: "", privateKey: "0x" } }]
  ) as [SettledChain, ...SettledChain[]];
  const { startServices } = await import("../services/index.ts");

  const lifecycle = new Lifecycle();
  const stopped = untilSignal();
  try {
    const started = await startServices({
      config,
      lifecycle,
      facilitator: {
        ...first.options,
        payees: undefined,
        chainPayees: first.options.payees,
        open: flags.open ?? false,
        more: more.map((c) => c.options),
        ...(solana && { solana }),
      },
    });
    const every = [
      ...[...settled.values()].map((c) => ({
        network: `eip155:${c.chainId}`,
        signer: c.signer as string,
        assets: (c.options.assets ?? []).map((a) => getAddress(a) as string),
      })),
      ...(solana ? [await solanaLine(started.urls.facilitator as string)] : []),
    ];
    const ready = {
      facilitator: started.urls.facilitator,
      ...(every[0] as (typeof every)[number]),
      // Every chain it settles on, the first above: one line per process, however many chains.
      ...(every.length > 1 && { chains: every }),
      // open: anyone may make it settle for any payee; else the allow-listed payees and the live keys'.
      access: started.facilitatorAccess,
      // The operator's /metrics, unless X402M_METRICS_PORT is off.
      ...(started.urls.metrics && { metrics: started.urls.metrics }),
    };
    process.stdout.write(`${JSON.stringify(ready)}\n`);
    await stopped;
  } finally {
    await lifecycle.close();
  }
  return 0;
}

/**
 * The facilitator's Solana (issue 86 item 5): X402M_FACILITATOR_SOLANA_KEY with X402M_SOLANA_RPC_URL, one without
 * the other refused; `only` when no EVM chain is given.
 */
function solanaOf(config: ReturnType<typeof configFrom>, only: boolean) {
  const key = config.facilitatorSolanaKey;
  const rpc = config.payments.solanaRpcUrl;
  if (!key && !rpc) return undefined;
  if (!key)
    throw new ConfigError(
      "X402M_SOLANA_RPC_URL is set: the facilitator settles on Solana with its fee payer's key, X402M_FACILITATOR_SOLANA_KEY (or unset the RPC)",
    );
  if (!rpc)
    throw new ConfigError(
      "X402M_FACILITATOR_SOLANA_KEY is set: the facilitator settles on Solana through X402M_SOLANA_RPC_URL: set it",
    );
  return { rpc, feePayerKey: key, only };
}

/** The ready line's entry for Solana: its network, fee payer and USDC, as its own /supported lists them. */
async function solanaLine(url: string) {
  const supported = (await (await fetch(`${url}/supported`)).json()) as {
    kinds: { network: string; extra?: Record<string, unknown> }[];
  };
  const kind = supported.kinds.find((k) => k.network === SOLANA_NETWORK);
  return { network: SOLANA_NETWORK, signer: String(kind?.extra?.feePayer ?? ""), assets: [SOLANA_USDC_MINT] };
}

interface SettledChain {
  chainId: number;
  signer: `0x${string}`;
  options: FacilitatorChainOptions;
}

/**
 * One chain the facilitator settles on, from its RPC: its id (a chain given by its variable must be that
 * chain), its settling key (X402M_FACILITATOR_KEY_<SLUG>, else X402M_FACILITATOR_KEY), its tokens (`--asset`
 * for the `--rpc` chain, else the chain's USDC) and its own payees.
 */
async function settledChain(
  given: { rpc: string; variable: string; slug?: string },
  config: ReturnType<typeof configFrom>,
  flagged: readonly string[] | undefined,
): Promise<SettledChain> {
  const client = createPublicClient({ transport: http(given.rpc, { retryCount: 1, timeout: 10_000 }) });
  const chainId = await client.getChainId().catch((error: unknown) => {
    throw new UsageError(
      `cannot read the chain id from ${given.rpc} (${given.variable}): ${(error as Error).message.split("\n")[0]}`,
    );
  });
  const record = chains.byCaip2.get(`eip155:${chainId}`);
  if (given.slug && record?.slug !== given.slug) {
    const expected = chains.list.find((c) => c.slug === given.slug);
    throw new UsageError(
      `${given.variable} serves chain ${chainId}, not ${expected?.name ?? given.slug}'s ${expected?.chainId ?? "?"}`,
    );
  }
  const own = record ? config.facilitatorChains[record.slug] : undefined;
  const key = own?.key ?? config.facilitatorKey;
  if (!key) {
    throw new ConfigError(
      `the facilitator needs its signing key${record ? ` on ${record.name}` : ""}: set X402M_FACILITATOR_KEY or X402M_FACILITATOR_KEY_FILE${record ? ` (or ${facilitatorChainVariable("KEY", record.slug)})` : ""}: it pays the gas`,
    );
  }
  const signer = privateKeyToAccount(key as `0x${string}`).address;
  // Without gas every settlement fails, and the node's refusal ("transaction creation failed") does
  // not say why: say it once, at start. Not fatal: the account may be funded while this runs.
  if ((await client.getBalance({ address: signer })) === 0n) {
    process.stderr.write(
      `x402-merchants facilitator: warning: ${signer} holds no ${record?.coin ?? "ETH"} on chain ${chainId}; settlements fail until it pays gas\n`,
    );
  }
  return {
    chainId,
    signer,
    options: {
      rpc: given.rpc,
      privateKey: key as `0x${string}`,
      chain: chainOf(chainId, given.rpc),
      assets: assetsOf(given.variable === "--rpc" ? flagged : undefined, chainId),
      payees: own?.payees ?? [],
      ...(record && { slug: record.slug }),
    },
  };
}

function assetsOf(flagged: readonly string[] | undefined, chainId: number): string[] {
  if (flagged && flagged.length > 0) {
    const bad = flagged.find((a) => !isAddress(a, { strict: false }));
    if (bad) throw new UsageError(`--asset must be a token address, not "${bad}"`);
    return flagged.map((a) => a.toLowerCase());
  }
  const known = KNOWN_USDC[chainId];
  if (!known)
    throw new UsageError(`chain ${chainId} has no known USDC: name the tokens to settle with --asset`);
  return [known];
}

/** viem's chain for Base and Base Sepolia; any other chain by its id and RPC (named by its record when it has one). */
function chainOf(id: number, rpc: string) {
  if (id === BASE_CHAIN_ID) return { ...base, rpcUrls: { default: { http: [rpc] } } };
  if (id === BASE_SEPOLIA_CHAIN_ID) return { ...baseSepolia, rpcUrls: { default: { http: [rpc] } } };
  return defineChain({
    id,
    name: chains.byCaip2.get(`eip155:${id}`)?.name ?? `EVM chain ${id}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpc] } },
  });
}

function portOf(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65_535) {
    throw new UsageError(`--port must be a whole number from 0 to 65535, not "${value}"`);
  }
  return Number(value);
}
