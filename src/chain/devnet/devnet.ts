/**
 * The devnet: anvil as Base, with the project's contracts and funded accounts (see `startDevnet`).
 */
import fs from "node:fs";
import { type Address, getAddress } from "viem";
import { BASE_CHAIN_ID, BASE_USDC, BLOCK_SECONDS } from "../base.ts";
import { installEas } from "../eas/index.ts";
import { type DevnetAccount, devnetAccounts } from "./accounts.ts";
import { devnetArgs } from "./anvil-args.ts";
import { anvilBinary } from "./anvil-binary.ts";
import { type BackgroundTraffic, startBackgroundTraffic } from "./background.ts";
import { devnetClients } from "./chain.ts";
import { installContracts, installMissingContracts } from "./contracts.ts";
import { DevnetError } from "./devnet-errors.ts";
import { readForkGenesis, recordForkGenesis } from "./forked.ts";
import { fundAccounts } from "./funding.ts";
import { loadFailure, resumeLoaded } from "./loading.ts";
import { type DevnetOptions, type DevnetSettings, devnetSettings } from "./options.ts";
import { type Anvil, launch } from "./process.ts";
import { feedChain, findSavedChain, removeUnfinishedSave } from "./saved-chain.ts";
import { withSaves } from "./saves.ts";
import { launchUpstream, withUpstream } from "./upstream.ts";

export interface Devnet {
  /** JSON-RPC over HTTP, e.g. `http://127.0.0.1:8545`. */
  rpc: string;
  /** Base's 8453, or the id of the chain it plays (`DevnetOptions.chain`). */
  chainId: number;
  /** The token, at Base's canonical USDC address (or the played chain's; checksummed). */
  usdc: Address;
  /** The USDC `owner`, the only account that can `mint`. */
  owner: DevnetAccount;
  /** The signer the x402 facilitator settles from: ETH for gas, no USDC. */
  facilitatorAccount: DevnetAccount;
  /**
   * Wallets holding USDC (and a little ETH, so they can also send their own transactions), each of which
   * has approved Permit2 for all its USDC, as x402's `upto` scheme needs.
   */
  buyers: DevnetAccount[];
  /** The anvil process id. */
  pid: number;
  /** True when the chain was loaded from `statePath` rather than set up anew. */
  resumed: boolean;
  /** The background traffic, when `backgroundTps` asked for it; `stop()` stops it before anvil. */
  background?: BackgroundTraffic;
  /** Mines `blocks` blocks at once (default 1), each 2 s after the previous, including pending transactions. */
  mine(blocks?: number): Promise<void>;
  /** Settles when anvil exits, for whatever reason (after `stop()`, or a crash). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * Saves the chain when there is a `statePath`, then stops anvil (SIGTERM; SIGKILL after 5 s) and waits
   * for it to exit. Idempotent. Rejects, once anvil is stopped, when the save failed: the last save stands.
   */
  stop(): Promise<void>;
}

/** What a devnet is before its process's last wrappings: what `ready` adds the rest to. */
type DevnetBase = Omit<Devnet, "resumed" | "pid" | "exited" | "stop" | "background">;

/** A week of the demo's chain takes about 10 s to save or load here; the margin is for a busy machine. */
const LOAD_TIMEOUT_MS = 180_000;

/**
 * Starts anvil on 127.0.0.1 as Base (chain id 8453), installs USDC, Permit2, x402's `upto` and `exact`
 * proxies, x402's `batch-settlement` escrow and its deposit collectors, and Multicall3 at their canonical
 * addresses and EAS with its SchemaRegistry at Base's predeploys (`../eas/`), funds the buyers and the
 * facilitator signer and has each buyer approve Permit2; resolves once all of it is in a block.
 *
 * Mining: anvil starts with mining off, so setup is deterministic, then mines by interval (`blockTime`).
 * Automine is never used: with many senders it stalls (see shared notes). Each block's timestamp is its
 * parent's plus exactly 2 s (`anvil_setBlockTimestampInterval`), also for `mine()`, so block times follow
 * Base's rule; extra `mine()` calls move the chain clock ahead of the wall clock by 2 s per block.
 *
 * The process is stopped by `stop()`, killed when this Node process exits, and on Linux also when it
 * dies without running exit handlers (SIGKILL, an unhandled signal): `setpriv --pdeathsig`.
 *
 * @example
 * const devnet = await startDevnet({ port: 0, buyers: 2 });
 * const [buyer] = devnet.buyers; // { address, privateKey } holding 1,000 USDC
 * await devnet.stop();
 */
export async function startDevnet(options: DevnetOptions = {}): Promise<Devnet> {
  const settings = devnetSettings(options);
  const { statePath } = options;
  if (statePath) {
    fs.mkdirSync(statePath, { recursive: true });
    removeUnfinishedSave(statePath);
  }
  const saved = statePath ? findSavedChain(statePath) : undefined;
  const binary = options.anvilPath ?? anvilBinary();
  if (!saved && options.stateRoots === false && (options.genesisNumber ?? 0) !== 0) {
    throw new DevnetError("a devnet without state roots forks an empty chain at block 0: no genesisNumber");
  }
  // A saved chain resumes as it was saved: forked if it recorded the genesis it forked.
  const forkGenesis = saved
    ? readForkGenesis(statePath as string)
    : options.stateRoots === false
      ? { timestamp: options.genesisTimestamp ?? Math.floor(Date.now() / 1000) }
      : undefined;
  const upstream = forkGenesis ? await launchUpstream(binary, forkGenesis, settings.hardfork) : undefined;
  const feed = saved?.format === "gzip" ? feedChain(saved.file) : undefined;
  const args = devnetArgs(options, settings, upstream?.port, saved && (feed?.pipe ?? saved.file));
  let launched: Anvil;
  try {
    const devnet = await launch(binary, args, options.startTimeoutMs ?? (saved ? LOAD_TIMEOUT_MS : 15_000));
    launched = upstream ? withUpstream(devnet, upstream) : devnet;
  } catch (error) {
    await upstream?.stop();
    feed?.close();
    throw saved ? await loadFailure(error, saved, feed) : error;
  }
  feed?.close();
  const rpc = `http://127.0.0.1:${launched.port}`;

  try {
    const chainId = options.chain?.chainId ?? BASE_CHAIN_ID;
    const clients = devnetClients(rpc, chainId);
    const { test } = clients;
    const accounts = devnetAccounts(settings.buyerCount);
    const usdc = getAddress(options.chain?.usdc.address ?? BASE_USDC);

    // anvil logs every call and every mined block; at thousands of blocks a second that output costs both
    // processes real CPU. Startup errors were already caught from it.
    await test.setLoggingEnabled(false);
    // Not saved with the state: set on every start, so the next block follows its parent by 2 s.
    await test.setBlockTimestampInterval({ interval: BLOCK_SECONDS });
    const base: DevnetBase = {
      rpc,
      chainId,
      usdc,
      ...accounts,
      mine: (blocks = 1) => test.mine({ blocks, interval: BLOCK_SECONDS }),
    };
    if (saved) {
      await resumeLoaded(clients, saved, upstream !== undefined);
      // A chain saved before x402's later contracts were added resumes with them.
      await installMissingContracts(clients);
    } else {
      await installContracts(test, usdc, accounts.owner.address);
      await fundAccounts(clients, usdc, accounts, settings.buyerUsdc);
    }
    // On every start, not with the others: a chain saved before EAS was added gets it, one saved with it is
    // left as it is, and checking costs tens of milliseconds.
    await installEas(rpc);
    if (settings.blockTime > 0) await test.setIntervalMining({ interval: settings.blockTime });
    // Before the first save, and only for a chain that started: the next start reads it beside that save.
    if (!saved && statePath) recordForkGenesis(statePath, forkGenesis);
    return await ready(base, launched, options, settings, saved !== undefined);
  } catch (error) {
    await launched.stop();
    throw error;
  }
}

/**
 * The devnet, once its chain is whole: its background traffic started, then its saves.
 *
 * Saving starts once the chain is whole: a save during setup or loading would replace a good one.
 * Background traffic starts on the whole chain too (it mints from the owner), before saving does: if it
 * fails to start, nothing is saved.
 */
async function ready(
  base: DevnetBase,
  launched: Anvil,
  { statePath, saveIntervalSeconds }: DevnetOptions,
  { backgroundTps }: DevnetSettings,
  resumed: boolean,
): Promise<Devnet> {
  const background =
    backgroundTps > 0 ? await startBackgroundTraffic(base, { tps: backgroundTps }) : undefined;
  const anvil = statePath ? withSaves(launched, base.rpc, statePath, saveIntervalSeconds) : launched;
  const stop = background
    ? async () => {
        await background.stop();
        await anvil.stop();
      }
    : anvil.stop;
  return { ...base, pid: anvil.pid, exited: anvil.exited, stop, resumed, background };
}
