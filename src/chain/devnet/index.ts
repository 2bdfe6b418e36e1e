import crypto from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import {
  type Address,
  createPublicClient,
  createTestClient,
  defineChain,
  encodeFunctionData,
  getAddress,
  type Hex,
  http,
  maxUint256,
  pad,
  toHex,
  zeroHash,
} from "viem";
import { HDKey, privateKeyToAccount } from "viem/accounts";
import { log } from "../../common/log.ts";
import {
  BASE_CHAIN_ID,
  BASE_USDC,
  BLOCK_SECONDS,
  MULTICALL3_ADDRESS,
  PERMIT2_ADDRESS,
  USDC_UNIT,
  X402_UPTO_PROXY_ADDRESS,
} from "../base.ts";
import { MULTICALL3_RUNTIME_BYTECODE } from "../multicall3.ts";
import { PERMIT2_RUNTIME_BYTECODE } from "../permit2.ts";
import { UPTO_PROXY_RUNTIME_BYTECODE } from "../upto-proxy.ts";
import { USDC_OWNER_SLOT, USDC_RUNTIME_BYTECODE, usdcAbi } from "../usdc.ts";
import { type BackgroundTraffic, MAX_BACKGROUND_TPS, startBackgroundTraffic } from "./background.ts";
import { DevnetError, SavedChainError } from "./devnet-errors.ts";
import { emptyChainArgs, FORK_GENESIS_FILE, forkArgs, readForkGenesis, recordForkGenesis } from "./forked.ts";
import { type Anvil, launch } from "./process.ts";
import { feedChain, findSavedChain, removeUnfinishedSave, saveChain } from "./saved-chain.ts";

export { DevnetError, SavedChainError };

export interface DevnetOptions {
  /** Port on 127.0.0.1; 0 lets the system pick a free one (read it from `rpc`). Default 8545. */
  port?: number;
  /** How many funded buyer wallets to create. Default 3. */
  buyers?: number;
  /** USDC minted to each buyer, in atomic units (6 decimals). Default 1,000 USDC. */
  buyerUsdc?: bigint;
  /**
   * Wall-clock seconds between blocks (interval mining), default 2 like Base. 0 = no timer: blocks are
   * made only by `mine()`. Either way every block's timestamp is exactly 2 s after its parent's.
   */
  blockTime?: number;
  /** Timestamp of block 0 (unix seconds). Default: now. Start in the past to `mine()` a history up to now. */
  genesisTimestamp?: number;
  /**
   * Number of the genesis block (anvil `--number`). Default 0. Reports need a window of 302,400 blocks,
   * which anvil cannot mine quickly (about 300 empty blocks/s here): start the chain that high instead.
   */
  genesisNumber?: number;
  /**
   * EVM rules, default "prague" (what Base runs). A long chain wants "cancun": under Prague every block
   * writes its parent hash into the EIP-2935 history contract, and anvil's block cost grows with that
   * contract's storage (measured: 125 empty blocks/s after 8,191 blocks, against 50,000/s under Cancun).
   */
  hardfork?: "prague" | "cancun";
  /**
   * Keep the states of only this many recent blocks (anvil `--prune-history [N]`; 0: none): calls at
   * older blocks fail; logs, receipts and traces stay. Without it anvil keeps a state per block and slows
   * as the chain grows; with N > 0 it copies state for every block (measured: 270 blocks/s in the demo
   * against 1,000+ with 0). With 0, a call at "latest" that races a burst of mined blocks can rarely
   * find no state (an error the caller retries or reports).
   */
  pruneHistory?: number;
  /**
   * A directory the chain is saved in on `stop()` (and every `saveIntervalSeconds`), as `state.json.gz`,
   * and loaded from on the next start (./saved-chain.ts). A loaded chain keeps its blocks, logs and
   * balances; setup is skipped and `resumed` is true. About 100 bytes a block (40 MB for a week of Base
   * blocks with the demo's traffic).
   */
  statePath?: string;
  /** Also save the chain every this many seconds; default only on stop. */
  saveIntervalSeconds?: number;
  /**
   * False: blocks without state roots, for a chain of many blocks (./forked.ts): the devnet forks an empty
   * anvil (a second process) at block 0 and computes no state trie, so an empty block costs the same however
   * much state the chain holds (measured: 74,000 empty blocks/s over 2,000 storage slots, against 450/s).
   * Needs `genesisNumber` 0. A saved chain resumes as it was saved, whatever this says. Default true.
   */
  stateRoots?: boolean;
  /** Path of the anvil binary. Default: the one the `@foundry-rs/anvil` package ships for this platform. */
  anvilPath?: string;
  /** How long anvil may take to listen, in ms. Default 15 s. */
  startTimeoutMs?: number;
  /**
   * Transactions a second of background traffic (./background.ts), ETH and USDC transfers between accounts
   * of its own, so that blocks are as dense as Base's (about 100 a second). 0 or absent: none. Needs
   * interval mining (`blockTime` > 0).
   */
  backgroundTps?: number;
}

/** A funded key pair. The keys are anvil's well-known test keys: never use them on a real chain. */
export interface DevnetAccount {
  address: Address;
  privateKey: Hex;
}

export interface Devnet {
  /** JSON-RPC over HTTP, e.g. `http://127.0.0.1:8545`. */
  rpc: string;
  chainId: typeof BASE_CHAIN_ID;
  /** The token, at Base's canonical USDC address (checksummed). */
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

/** anvil's default test mnemonic: its keys are public, which is what a devnet wants. */
export const DEVNET_MNEMONIC = "test test test test test test test test test test test junk";
/** Derivation indices: 0 owns the token, 1 is the facilitator signer, 2 onwards are the buyers. */
const OWNER_INDEX = 0;
const FACILITATOR_INDEX = 1;
const FIRST_BUYER_INDEX = 2;

const ETH = 10n ** 18n;
const OWNER_ETH = 1_000n * ETH;
const FACILITATOR_ETH = 1_000n * ETH;
const BUYER_ETH = 1n * ETH;
/**
 * Block gas limit. A settlement to a new payee costs about 83k gas, so anvil's default of 30M holds only
 * ~360 per block (180/s at one block per 2 s): the block, not the facilitator, would bound a benchmark.
 */
const GAS_LIMIT = 300_000_000n;
/** Gas for one `mint` (about 53k to a fresh account), with margin; fixed so funding needs no estimates. */
const MINT_GAS = 120_000n;
/** Gas for one buyer's `approve` of Permit2 (about 46k from a zero allowance), with margin. */
const APPROVE_GAS = 100_000n;
const DEFAULT_PORT = 8545;
/** A week of the demo's chain takes about 10 s to save or load here; the margin is for a busy machine. */
const SAVE_TIMEOUT_MS = 120_000;
const LOAD_TIMEOUT_MS = 180_000;

/** A viem chain for the devnet: Base's id, the local RPC, and Base's 2 s block time as viem's polling hint. */
export function devnetChain(rpc: string) {
  return defineChain({
    id: BASE_CHAIN_ID,
    name: "Base (x402-merchants devnet)",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpc] } },
    blockTime: BLOCK_SECONDS * 1000,
  });
}

/**
 * Starts anvil on 127.0.0.1 as Base (chain id 8453), installs USDC, Permit2, x402's `upto` proxy and
 * Multicall3 at their canonical addresses, funds the buyers and the facilitator signer and has each buyer
 * approve Permit2; resolves once all of it is in a block.
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
  const port = options.port ?? DEFAULT_PORT;
  const buyerCount = options.buyers ?? 3;
  const buyerUsdc = options.buyerUsdc ?? 1_000n * USDC_UNIT;
  const blockTime = options.blockTime ?? BLOCK_SECONDS;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new DevnetError(`bad port ${port}`);
  if (!Number.isInteger(buyerCount) || buyerCount < 0) throw new DevnetError(`bad buyer count ${buyerCount}`);
  if (!Number.isInteger(blockTime) || blockTime < 0) throw new DevnetError(`bad block time ${blockTime}`);
  const backgroundTps = options.backgroundTps ?? 0;
  if (!(backgroundTps >= 0 && backgroundTps <= MAX_BACKGROUND_TPS)) {
    throw new DevnetError(`bad background rate ${backgroundTps}: from 0 to ${MAX_BACKGROUND_TPS} a second`);
  }
  if (backgroundTps > 0 && blockTime === 0) {
    throw new DevnetError("background traffic needs interval mining: a block time above 0");
  }

  const { statePath } = options;
  if (statePath) {
    fs.mkdirSync(statePath, { recursive: true });
    removeUnfinishedSave(statePath);
  }
  const saved = statePath ? findSavedChain(statePath) : undefined;
  const hardfork = options.hardfork ?? "prague";
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
  const upstream = forkGenesis
    ? await launch(
        binary,
        emptyChainArgs(forkGenesis, { chainId: BASE_CHAIN_ID, hardfork, gasLimit: GAS_LIMIT }),
        15_000,
      )
    : undefined;
  const feed = saved?.format === "gzip" ? feedChain(saved.file) : undefined;
  const args = [
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "--chain-id",
    String(BASE_CHAIN_ID),
    // Base has every Prague (Isthmus) change; pinned so a newer anvil's default cannot change behaviour.
    "--hardfork",
    hardfork,
    "--gas-limit",
    String(GAS_LIMIT),
    // No prefunded dev accounts: every funded account is one this module returns.
    "--accounts",
    "0",
    "--no-mining",
    ...(upstream
      ? forkArgs(`http://127.0.0.1:${upstream.port}`)
      : [
          ...(options.genesisTimestamp === undefined
            ? []
            : ["--timestamp", String(options.genesisTimestamp)]),
          ...(options.genesisNumber === undefined ? [] : ["--number", String(options.genesisNumber)]),
        ]),
    ...(options.pruneHistory === undefined
      ? []
      : ["--prune-history", ...(options.pruneHistory > 0 ? [String(options.pruneHistory)] : [])]),
    ...(saved ? ["--load-state", feed?.pipe ?? saved.file] : []),
  ];
  let launched: Anvil;
  try {
    const devnet = await launch(binary, args, options.startTimeoutMs ?? (saved ? LOAD_TIMEOUT_MS : 15_000));
    launched = upstream ? withUpstream(devnet, upstream) : devnet;
  } catch (error) {
    await upstream?.stop();
    feed?.close();
    // A file that does not decompress; not a pipe anvil stopped reading (EPIPE), which says nothing of it.
    const unreadable = await feed?.fed.then(
      () => undefined,
      (reason: NodeJS.ErrnoException) => (reason.code === "EPIPE" ? undefined : reason.message),
    );
    // anvil reads the state before it listens: a state it refused is named in its complaint.
    const refused = /^error: .*--load-state.*$/m.exec((error as Error).message)?.[0];
    if (saved && (unreadable || refused)) throw new SavedChainError(saved.file, unreadable ?? refused ?? "");
    throw error;
  }
  feed?.close();
  const rpc = `http://127.0.0.1:${launched.port}`;

  try {
    const chain = devnetChain(rpc);
    const transport = http(rpc, { batch: { batchSize: 500 } });
    const test = createTestClient({ chain, mode: "anvil", transport });
    const client = createPublicClient({ chain, transport });

    const owner = derive(OWNER_INDEX);
    const facilitatorAccount = derive(FACILITATOR_INDEX);
    const buyers = Array.from({ length: buyerCount }, (_, i) => derive(FIRST_BUYER_INDEX + i));
    const usdc = getAddress(BASE_USDC);

    // anvil logs every call and every mined block; at thousands of blocks a second that output costs both
    // processes real CPU. Startup errors were already caught from it.
    await test.setLoggingEnabled(false);
    // Not saved with the state: set on every start, so the next block follows its parent by 2 s.
    await test.setBlockTimestampInterval({ interval: BLOCK_SECONDS });
    // Saving starts once the chain is whole: a save during setup or loading would replace a good one.
    // Background traffic starts on the whole chain too (it mints from the owner), before saving does: if it
    // fails to start, nothing is saved.
    const ready = async (resumed: boolean): Promise<Devnet> => {
      const background =
        backgroundTps > 0 ? await startBackgroundTraffic(base, { tps: backgroundTps }) : undefined;
      const anvil = statePath ? withSaves(launched, rpc, statePath, options.saveIntervalSeconds) : launched;
      const stop = background
        ? async () => {
            await background.stop();
            await anvil.stop();
          }
        : anvil.stop;
      return { ...base, pid: anvil.pid, exited: anvil.exited, stop, resumed, background };
    };
    const base: Omit<Devnet, "resumed" | "pid" | "exited" | "stop" | "background"> = {
      rpc,
      chainId: BASE_CHAIN_ID,
      usdc,
      owner,
      facilitatorAccount,
      buyers,
      mine: (blocks = 1) => test.mine({ blocks, interval: BLOCK_SECONDS }),
    };
    if (saved) {
      const latest = await client.getBlock({ blockTag: "latest" });
      // Loaded without its upstream, a forked chain would answer zero for every account it had not touched.
      if (!upstream && latest.number > 0n && latest.stateRoot === zeroHash) {
        throw new SavedChainError(
          saved.file,
          `its blocks have no state roots (it forked an empty chain) and ${FORK_GENESIS_FILE} beside it is missing: restore that file`,
        );
      }
      // The saved state's block environment carries the wall time of the save: reset the clock to the
      // last block's, so the next block is 2 s after it.
      const request = test.request as (args: { method: string; params: unknown[] }) => Promise<unknown>;
      await request({ method: "evm_setTime", params: [toHex(latest.timestamp)] });
      if (blockTime > 0) await test.setIntervalMining({ interval: blockTime });
      return await ready(true);
    }
    // A resumed chain has these codes in its saved state; a fresh one gets them here (no constructor runs:
    // each contract is written to need none).
    await Promise.all([
      test.setCode({ address: usdc, bytecode: USDC_RUNTIME_BYTECODE }),
      test.setCode({ address: PERMIT2_ADDRESS, bytecode: PERMIT2_RUNTIME_BYTECODE }),
      test.setCode({ address: X402_UPTO_PROXY_ADDRESS, bytecode: UPTO_PROXY_RUNTIME_BYTECODE }),
      test.setCode({ address: MULTICALL3_ADDRESS, bytecode: MULTICALL3_RUNTIME_BYTECODE }),
    ]);
    // The constructor never ran here, so `owner` (slot 0) is written directly.
    await test.setStorageAt({ address: usdc, index: USDC_OWNER_SLOT, value: pad(owner.address) });
    await Promise.all([
      test.setBalance({ address: owner.address, value: OWNER_ETH }),
      test.setBalance({ address: facilitatorAccount.address, value: FACILITATOR_ETH }),
      ...buyers.map((b) => test.setBalance({ address: b.address, value: BUYER_ETH })),
    ]);

    // Real mint and approve transactions (not storage writes) so the chain holds the Transfer-from-zero and
    // Approval logs an indexer sees for real USDC. Signed locally with fixed nonce, gas and fees: no round
    // trips. Each buyer approves Permit2 for everything (its nonce 0), as a wallet does once before its
    // first Permit2 payment.
    if (buyers.length > 0) {
      const fees = await client.estimateFeesPerGas();
      const fixed = {
        chainId: BASE_CHAIN_ID,
        type: "eip1559",
        to: usdc,
        maxFeePerGas: fees.maxFeePerGas * 2n,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      } as const;
      const mints =
        buyerUsdc > 0n
          ? signMints(
              owner,
              usdc,
              0,
              fixed,
              buyers.map((b) => ({ to: b.address, amount: buyerUsdc })),
            )
          : [];
      const approvals = buyers.map((b) =>
        privateKeyToAccount(b.privateKey).signTransaction({
          ...fixed,
          nonce: 0,
          data: encodeFunctionData({
            abi: usdcAbi,
            functionName: "approve",
            args: [PERMIT2_ADDRESS, maxUint256],
          }),
          gas: APPROVE_GAS,
        }),
      );
      const raw = await Promise.all([...mints, ...approvals]);
      await Promise.all(
        raw.map((serializedTransaction) => client.sendRawTransaction({ serializedTransaction })),
      );
      // A block holds thousands of these; mine until the pool is empty (each block takes at least one).
      for (let blocks = 1; ; blocks++) {
        await test.mine({ blocks: 1, interval: BLOCK_SECONDS });
        const pool = await test.getTxpoolStatus();
        if (pool.pending === 0 && pool.queued === 0) break;
        if (blocks >= raw.length)
          throw new DevnetError("funding the buyers failed: transactions stuck in the pool");
      }
      const supply = await client.readContract({ address: usdc, abi: usdcAbi, functionName: "totalSupply" });
      if (supply !== buyerUsdc * BigInt(buyers.length)) {
        throw new DevnetError(`funding the buyers failed: USDC total supply is ${supply}`);
      }
      const allowances = await Promise.all(
        buyers.map((b) =>
          client.readContract({
            address: usdc,
            abi: usdcAbi,
            functionName: "allowance",
            args: [b.address, PERMIT2_ADDRESS],
          }),
        ),
      );
      if (allowances.some((a) => a !== maxUint256)) {
        throw new DevnetError("funding the buyers failed: a buyer's Permit2 approval did not land");
      }
    } else {
      await test.mine({ blocks: 1, interval: BLOCK_SECONDS });
    }
    if (blockTime > 0) await test.setIntervalMining({ interval: blockTime });
    // Before the first save, and only for a chain that started: the next start reads it beside that save.
    if (statePath) recordForkGenesis(statePath, forkGenesis);
    return await ready(false);
  } catch (error) {
    await launched.stop();
    throw error;
  }
}

/**
 * USDC `mint` transactions from the token's owner, signed locally with consecutive nonces from `nonce` and
 * fixed gas: real mints rather than storage writes, so the chain holds the Transfer-from-zero logs an
 * indexer sees for real USDC.
 */
export function signMints(
  owner: DevnetAccount,
  usdc: Address,
  nonce: number,
  fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
  mints: readonly { to: Address; amount: bigint }[],
): Promise<Hex>[] {
  const signer = privateKeyToAccount(owner.privateKey);
  return mints.map(({ to, amount }, i) =>
    signer.signTransaction({
      chainId: BASE_CHAIN_ID,
      type: "eip1559",
      to: usdc,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      nonce: nonce + i,
      data: encodeFunctionData({ abi: usdcAbi, functionName: "mint", args: [to, amount] }),
      gas: MINT_GAS,
    }),
  );
}

/** The anvil binary inside `@foundry-rs/anvil-<os>-<arch>`, run directly rather than through the package's
 * node wrapper, so the process we signal is anvil itself. */
export function anvilBinary(): string {
  const arch = { x64: "amd64", arm64: "arm64" }[process.arch as string];
  const name = `@foundry-rs/anvil-${process.platform}-${arch}`;
  const require = createRequire(import.meta.url);
  let dir: string;
  try {
    dir = path.dirname(require.resolve(`${name}/package.json`));
  } catch {
    throw new DevnetError(
      `no anvil binary for ${process.platform}-${process.arch}: ${name} is not installed`,
    );
  }
  return path.join(dir, "bin", process.platform === "win32" ? "anvil.exe" : "anvil");
}

/**
 * `anvil` with its chain saved to `dir` every `intervalSeconds` (if given) and before it stops. Saves run
 * one at a time; one that fails on the timer is logged and the next tries again.
 */
function withSaves(anvil: Anvil, rpc: string, dir: string, intervalSeconds: number | undefined): Anvil {
  let last: Promise<unknown> = Promise.resolve();
  const save = () => {
    const next = last.then(() => saveChain(rpc, dir, SAVE_TIMEOUT_MS));
    last = next.catch(() => undefined);
    return next;
  };
  const timer = intervalSeconds
    ? setInterval(() => {
        save().catch((error) => log("warn", "saving the devnet's chain failed", { dir, error }));
      }, intervalSeconds * 1000)
    : undefined;
  timer?.unref();
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      clearInterval(timer);
      let failure: unknown;
      // A chain that already exited has nothing left to save: the last save stands.
      if (!(await settled(anvil.exited))) await save().catch((error) => (failure = error));
      await anvil.stop();
      if (failure) {
        throw new DevnetError(
          `could not save the chain in ${dir} (${(failure as Error).message}); the last save stands`,
          { cause: failure },
        );
      }
    })();
    return stopping;
  };
  return { ...anvil, stop };
}

/**
 * The devnet and the empty chain it forks, as one process: stopping stops both, the devnet first, and one
 * exiting on its own stops the other (a devnet that lost its upstream cannot read an untouched account).
 */
function withUpstream(devnet: Anvil, upstream: Anvil): Anvil {
  void upstream.exited.then(async () => {
    if (await settled(devnet.exited)) return;
    log("warn", "the devnet's empty upstream chain exited: stopping the devnet", { pid: upstream.pid });
    await devnet.stop();
  });
  void devnet.exited.then(() => upstream.stop());
  return {
    ...devnet,
    stop: async () => {
      await devnet.stop();
      await upstream.stop();
    },
  };
}

/** Whether `promise` has already settled, without waiting for it. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  const pending = Symbol();
  return (await Promise.race([promise, Promise.resolve(pending)])) !== pending;
}

let masterKey: HDKey | undefined;

/** Account `index` of the devnet mnemonic at anvil's derivation path m/44'/60'/0'/0/index. */
export function derive(index: number): DevnetAccount {
  // BIP-39 seed = PBKDF2-HMAC-SHA512(mnemonic, "mnemonic", 2048 rounds): native and computed once,
  // instead of once per account as viem's mnemonicToAccount would.
  masterKey ??= HDKey.fromMasterSeed(
    crypto.pbkdf2Sync(DEVNET_MNEMONIC.normalize("NFKD"), "mnemonic", 2048, 64, "sha512"),
  );
  const key = masterKey.derive(`m/44'/60'/0'/0/${index}`).privateKey;
  if (!key) throw new DevnetError(`cannot derive account ${index}`);
  const privateKey = toHex(key);
  return { address: privateKeyToAccount(privateKey).address, privateKey };
}
