import { startDevnet } from "../chain/devnet/index.ts";
import { dataLayout } from "../config/layout.ts";
import { configFrom, type Flags, UsageError } from "./args.ts";

/** anvil's usual port, so wallets and tools find the devnet where they expect a local chain. */
export const DEFAULT_DEVNET_PORT = 8545;
export const DEFAULT_DEVNET_BUYERS = 3;
/** Where the devnet's facilitator listens unless X402M_FACILITATOR_PORT says otherwise (0: a free port). */
export const DEFAULT_FACILITATOR_PORT = 8403;

/**
 * Runs the devnet: a local Base chain (anvil, chain id 8453, a block every 2 s) with USDC at the canonical
 * address and funded buyers, and the project's x402 facilitator settling on it from the devnet's
 * facilitator account, on 127.0.0.1 (port X402M_FACILITATOR_PORT, default 8403). The facilitator keeps its
 * ledger and Bazaar in the configured database (PGlite in `<data>/postgres`, or DATABASE_URL);
 * since the chain is new on every start, so is that state (the previous chain's is cleared).
 *
 * Prints one JSON line `{"rpc", "facilitator", "chainId", "usdc", "buyers"}` when ready; stops on
 * SIGINT/SIGTERM (facilitator closed, then anvil stopped, exit 0), and fails if anvil dies on its own.
 */
export async function runDevnet(args: string[], flags: Flags): Promise<number> {
  if (args.length > 0) throw new UsageError("devnet takes no arguments");
  const port = parseInteger("--port", flags.port, DEFAULT_DEVNET_PORT, 65_535);
  const buyers = parseInteger("--buyers", flags.buyers, DEFAULT_DEVNET_BUYERS, 10_000);
  const facilitatorPort = parseInteger(
    "X402M_FACILITATOR_PORT",
    process.env.X402M_FACILITATOR_PORT || undefined,
    DEFAULT_FACILITATOR_PORT,
    65_535,
  );
  const config = configFrom(flags);
  // Loaded here, as the chain code is: the facilitator's SDK and PGlite are only for this command.
  const { startFacilitator } = await import("../services/devnet-facilitator.ts");
  const { openDatabase } = await import("../common/db/index.ts");

  const devnet = await startDevnet({ port, buyers });
  let db: Awaited<ReturnType<typeof openDatabase>> | undefined;
  let facilitator: Awaited<ReturnType<typeof startFacilitator>>;
  try {
    db = await openDatabase({
      pgliteDir: dataLayout(config.dataDir).pglite.facilitator,
      databaseUrl: config.databaseUrl,
    });
    facilitator = await startFacilitator(devnet, db, facilitatorPort);
  } catch (error) {
    await db?.close();
    await devnet.stop();
    throw error;
  }
  const ready = {
    rpc: devnet.rpc,
    facilitator: facilitator.url,
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
  // The facilitator first: it may be waiting on the chain for a settlement.
  await facilitator.close();
  await db.close();
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
