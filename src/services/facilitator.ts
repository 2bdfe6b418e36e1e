/**
 * The project's facilitator as a service of this process: on its own (`facilitator`), under the devnet
 * (`devnet`) or inside the demo. Its state is its own database: with PGlite its own directory, so that a
 * merchant's request holding a transaction open until its payment settles (src/merchant-kit/payments)
 * never waits on the facilitator for the one PGlite connection they would otherwise share.
 */
import type { Chain, Hex } from "viem";
import { type Devnet, devnetChain } from "../chain/devnet/index.ts";
import { openDatabase } from "../common/db/index.ts";
import type { Lifecycle } from "../common/lifecycle.ts";
import type { Config } from "../config/config.ts";
import { dataLayout } from "../config/layout.ts";
import { createFacilitator, type Facilitator, type OnNewChain } from "../facilitator/index.ts";
import { listenOn } from "./listen.ts";

export interface FacilitatorServiceOptions {
  rpc: string;
  /** The settling key: it pays the gas. */
  privateKey: Hex;
  chain?: Chain;
  assets?: readonly string[];
  onNewChain?: OnNewChain;
  pollingIntervalMs?: number;
}

/**
 * The facilitator of a devnet: it settles from the devnet's facilitator account, and clears its ledger
 * when the chain is new (anvil makes one on every start, unless it resumes a saved chain, whose genesis
 * and so whose ledger stay). `pollingIntervalMs`: how often receipts are polled.
 */
export function devnetFacilitatorOptions(
  devnet: Devnet,
  pollingIntervalMs: number,
): FacilitatorServiceOptions {
  return {
    rpc: devnet.rpc,
    chain: devnetChain(devnet.rpc),
    privateKey: devnet.facilitatorAccount.privateKey,
    onNewChain: "reset",
    pollingIntervalMs,
  };
}

export interface FacilitatorService {
  url: string;
  facilitator: Facilitator;
}

/**
 * Starts the facilitator on `config.host`:`config.ports.facilitator`, its ledger in its own database.
 * Closing (through `lifecycle`) stops HTTP first, then waits for the settlements under way, then closes
 * the database.
 */
export async function startFacilitatorService(
  config: Config,
  options: FacilitatorServiceOptions,
  lifecycle: Lifecycle,
): Promise<FacilitatorService> {
  const db = await openDatabase({
    pgliteDir: dataLayout(config.dataDir).pglite.facilitator,
    databaseUrl: config.databaseUrl,
  });
  lifecycle.add("facilitator database", () => db.close());
  const facilitator = await createFacilitator({
    db,
    rpc: options.rpc,
    privateKey: options.privateKey,
    chain: options.chain,
    assets: options.assets,
    onNewChain: options.onNewChain,
    pollingIntervalMs: options.pollingIntervalMs,
  });
  lifecycle.add("facilitator settlements", () => facilitator.close());
  const server = await listenOn("facilitator", facilitator.app.fetch, config.host, config.ports.facilitator);
  // Not `addServer`: merchant hosts of this process settle through it until their last request is
  // answered, so it takes connections until its turn to close, after theirs.
  lifecycle.add("facilitator http", () => server.close());
  return { url: server.url, facilitator };
}
