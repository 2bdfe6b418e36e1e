import { MAX_BACKGROUND_TPS, startDevnet } from "../chain/devnet/index.ts";
import { UsageError } from "../common/errors.ts";
import { Lifecycle, untilSignal } from "../common/lifecycle.ts";
import { DEFAULT_PORTS } from "../config/ports.ts";
import { configFrom } from "./flag-values.ts";
import type { Flags } from "./flags.ts";

export const DEFAULT_DEVNET_BUYERS = 3;
/** Solana's buyers are written at genesis, each a key pair derived at start: a bound on the start's time. */
const MAX_SOLANA_BUYERS = 1_000;

/**
 * Runs the devnet: a local Base chain (anvil, chain id 8453, a block every 2 s) with USDC at the canonical
 * address and funded buyers, and the project's x402 facilitator settling on it from the devnet's
 * facilitator account, on 127.0.0.1 (port X402M_FACILITATOR_PORT, default 8403). The facilitator keeps its
 * ledger and Bazaar in its own database (PGlite in `<data>/facilitator-postgres`, or DATABASE_URL);
 * since the chain is new on every start, so is that state (the previous chain's is cleared).
 *
 * With `--background-tps N` the chain also carries N plain ETH and USDC transfers a second between accounts
 * of its own, so blocks are about as dense as Base's.
 *
 * Prints one JSON line `{"rpc", "facilitator", "signer", "chainId", "usdc", "buyers"}` when ready; stops on
 * SIGINT/SIGTERM (facilitator closed, then anvil stopped, exit 0), and fails if anvil dies on its own.
 */
export async function runDevnet(args: string[], flags: Flags): Promise<number> {
  if (args.length > 0) throw new UsageError("devnet takes no arguments");
  const chain = flags.chain ?? "base";
  if (chain === "solana") return runSolanaDevnet(flags);
  if (chain !== "base") throw new UsageError(`devnet --chain is base or solana, not "${chain}"`);
  // --port is the chain's here (the command serves no reports); X402M_DEVNET_PORT is the demo's setting.
  const port = parseInteger("--port", flags.port, DEFAULT_PORTS.devnet, 65_535);
  const buyers = parseInteger("--buyers", flags.buyers, DEFAULT_DEVNET_BUYERS, 10_000);
  const backgroundTps = parseInteger("--background-tps", flags["background-tps"], 0, MAX_BACKGROUND_TPS);
  const config = configFrom({ ...flags, port: undefined });
  // Loaded here, as the chain code is: the facilitator's SDK and PGlite are only for this command.
  const { devnetFacilitatorOptions, startServices } = await import("../services/index.ts");

  const lifecycle = new Lifecycle();
  const stopped = untilSignal();
  const devnet = await startDevnet({ port, buyers, backgroundTps });
  lifecycle.add("anvil", () => devnet.stop());
  let anvilExited = false;
  try {
    const started = await startServices({
      config,
      lifecycle,
      // Beyond loopback (--host), its facilitator needs an allow-list, keys or --open (docs/facilitator.md).
      facilitator: { ...devnetFacilitatorOptions(devnet, 250), open: flags.open ?? false },
    });
    const ready = {
      rpc: devnet.rpc,
      facilitator: started.urls.facilitator,
      // The facilitator's signer: the sender of its settlements, which `index` must know as a facilitator's.
      signer: devnet.facilitatorAccount.address,
      chainId: devnet.chainId,
      usdc: devnet.usdc,
      buyers: devnet.buyers.map(({ address, privateKey }) => ({ address, privateKey })),
      // The facilitator's Prometheus metrics (docs/metrics.md); absent with X402M_METRICS_PORT=off.
      metrics: started.urls.metrics,
    };
    process.stdout.write(`${JSON.stringify(ready)}\n`);
    anvilExited = (await Promise.race([stopped, devnet.exited.then(() => "anvil" as const)])) === "anvil";
  } finally {
    await lifecycle.close();
  }
  if (anvilExited) {
    const { code, signal } = await devnet.exited;
    throw new Error(`anvil stopped unexpectedly (${signal ?? `exit code ${code}`})`);
  }
  return 0;
}

/**
 * `devnet --chain solana`: the SVM in process (litesvm) behind a JSON-RPC server on 127.0.0.1 (default port
 * 8899, a validator's), USDC at mainnet's mint, funded buyers. No facilitator service settles Solana yet, so
 * `facilitator` is the fee payer's key pair, for a facilitator started beside it (docs/chains.md, "Solana").
 */
async function runSolanaDevnet(flags: Flags): Promise<number> {
  for (const flag of ["background-tps", "host", "open"] as const) {
    if (flags[flag] !== undefined)
      throw new UsageError(`--${flag} is for the Base devnet, not --chain solana`);
  }
  const port = parseInteger("--port", flags.port, DEFAULT_PORTS.solanaDevnet, 65_535);
  const buyers = parseInteger("--buyers", flags.buyers, DEFAULT_DEVNET_BUYERS, MAX_SOLANA_BUYERS);
  // Loaded here: litesvm's native build is for this command only.
  const { startSolanaDevnet } = await import("../chain/solana/devnet/index.ts");
  const stopped = untilSignal();
  const devnet = await startSolanaDevnet({ port, buyers });
  try {
    const ready = {
      rpc: devnet.rpc,
      facilitator: devnet.feePayer,
      network: devnet.network,
      usdc: devnet.usdc,
      buyers: devnet.buyers,
    };
    process.stdout.write(`${JSON.stringify(ready)}\n`);
    await stopped;
  } finally {
    await devnet.stop();
  }
  return 0;
}

function parseInteger(flag: string, value: string | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) > max) {
    throw new UsageError(`${flag} must be a whole number from 0 to ${max}, not "${value}"`);
  }
  return Number(value);
}
