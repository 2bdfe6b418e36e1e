import { startDevnet } from "../chain/devnet.ts";
import { type Flags, UsageError } from "./args.ts";

/** anvil's usual port, so wallets and tools find the devnet where they expect a local chain. */
export const DEFAULT_DEVNET_PORT = 8545;
export const DEFAULT_DEVNET_BUYERS = 3;

/**
 * Runs the devnet: a local Base chain (anvil, chain id 8453, a block every 2 s) with USDC at the canonical
 * address and funded buyers. Prints one JSON line `{"rpc", "facilitator", "chainId", "usdc", "buyers"}`
 * when ready; stops on SIGINT/SIGTERM (anvil stopped, exit 0), and fails if anvil dies on its own.
 * `facilitator` (the URL of the project's x402 facilitator) is null until the devnet runs one.
 */
export async function runDevnet(args: string[], flags: Flags): Promise<number> {
  if (args.length > 0) throw new UsageError("devnet takes no arguments");
  const port = parseInteger("--port", flags.port, DEFAULT_DEVNET_PORT, 65_535);
  const buyers = parseInteger("--buyers", flags.buyers, DEFAULT_DEVNET_BUYERS, 10_000);

  const devnet = await startDevnet({ port, buyers });
  const ready = {
    rpc: devnet.rpc,
    facilitator: null,
    chainId: devnet.chainId,
    usdc: devnet.usdc,
    buyers: devnet.buyers.map(({ address, privateKey }) => ({ address, privateKey })),
  };
  process.stdout.write(`${JSON.stringify(ready)}\n`);

  const reason = await new Promise<"signal" | "anvil exited">((resolve) => {
    const finish = (why: "signal" | "anvil exited") => () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      resolve(why);
    };
    const onSignal = finish("signal");
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    void devnet.exited.then(finish("anvil exited"));
  });
  await devnet.stop();
  if (reason === "anvil exited") {
    const { code, signal } = await devnet.exited;
    throw new Error(`anvil stopped unexpectedly (${signal ?? `exit code ${code}`})`);
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
