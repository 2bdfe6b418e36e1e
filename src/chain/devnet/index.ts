/**
 * The project's devnet: a local anvil chain that looks like Base where x402 looks (chain id 8453, USDC
 * at the canonical address with Circle's EIP-712 domain, a block every 2 seconds whose timestamp is
 * exactly 2 s after the previous one), with funded buyer wallets and a facilitator signer.
 */
import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
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
  pad,
  toHex,
} from "viem";
import { HDKey, privateKeyToAccount } from "viem/accounts";
import { AppError } from "../../common/errors.ts";
import { BASE_CHAIN_ID, BASE_USDC, BLOCK_SECONDS, USDC_UNIT } from "../base.ts";
import { USDC_OWNER_SLOT, USDC_RUNTIME_BYTECODE, usdcAbi } from "../usdc.ts";

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
   * A file the chain is saved to on `stop()` (and every `saveIntervalSeconds`) and loaded from on the next
   * start: anvil `--state`. A loaded chain keeps its blocks, logs and balances; setup is skipped and
   * `resumed` is true. About 1.5 KB a block (460 MB for a week of Base blocks).
   */
  statePath?: string;
  /** Also save the chain every this many seconds (anvil `--state-interval`); default only on stop. */
  saveIntervalSeconds?: number;
  /** Path of the anvil binary. Default: the one the `@foundry-rs/anvil` package ships for this platform. */
  anvilPath?: string;
  /** How long anvil may take to listen, in ms. Default 15 s. */
  startTimeoutMs?: number;
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
  /** Wallets holding USDC (and a little ETH, so they can also send their own transactions). */
  buyers: DevnetAccount[];
  /** The anvil process id. */
  pid: number;
  /** True when the chain was loaded from `statePath` rather than set up anew. */
  resumed: boolean;
  /** Mines `blocks` blocks at once (default 1), each 2 s after the previous, including pending transactions. */
  mine(blocks?: number): Promise<void>;
  /** Settles when anvil exits, for whatever reason (after `stop()`, or a crash). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Stops anvil (SIGTERM; SIGKILL after 5 s, or 120 s while a `statePath` chain is saved) and waits for it to exit. Idempotent. */
  stop(): Promise<void>;
}

/** An anvil that could not be started or set up. */
export class DevnetError extends AppError {
  constructor(message: string, options?: ErrorOptions) {
    super(500, "devnet_failed", message, options);
  }
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
const DEFAULT_PORT = 8545;

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
 * Starts anvil on 127.0.0.1 as Base (chain id 8453), installs USDC at the canonical address and funds
 * the buyers and the facilitator signer; resolves once all of it is in a block.
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

  const resuming = options.statePath !== undefined && fs.existsSync(stateFile(options.statePath));
  if (options.statePath) fs.mkdirSync(path.dirname(stateFile(options.statePath)), { recursive: true });
  const args = [
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "--chain-id",
    String(BASE_CHAIN_ID),
    // Base has every Prague (Isthmus) change; pinned so a newer anvil's default cannot change behaviour.
    "--hardfork",
    options.hardfork ?? "prague",
    "--gas-limit",
    String(GAS_LIMIT),
    // No prefunded dev accounts: every funded account is one this module returns.
    "--accounts",
    "0",
    "--no-mining",
    ...(options.genesisTimestamp === undefined ? [] : ["--timestamp", String(options.genesisTimestamp)]),
    ...(options.genesisNumber === undefined ? [] : ["--number", String(options.genesisNumber)]),
    ...(options.pruneHistory === undefined
      ? []
      : ["--prune-history", ...(options.pruneHistory > 0 ? [String(options.pruneHistory)] : [])]),
    ...(options.statePath ? ["--state", stateFile(options.statePath)] : []),
    ...(options.statePath && options.saveIntervalSeconds
      ? ["--state-interval", String(options.saveIntervalSeconds)]
      : []),
  ];
  const anvil = await launch(
    options.anvilPath ?? anvilBinary(),
    args,
    options.startTimeoutMs ?? (options.statePath ? 120_000 : 15_000),
    // Saving a long chain takes seconds (2.5 s for 300,000 blocks): do not kill anvil while it writes.
    options.statePath ? 120_000 : 5_000,
  );

  try {
    const rpc = `http://127.0.0.1:${anvil.port}`;
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
    const base: Omit<Devnet, "resumed"> = {
      rpc,
      chainId: BASE_CHAIN_ID,
      usdc,
      owner,
      facilitatorAccount,
      buyers,
      pid: anvil.pid,
      mine: (blocks = 1) => test.mine({ blocks, interval: BLOCK_SECONDS }),
      exited: anvil.exited,
      stop: anvil.stop,
    };
    if (resuming) {
      const latest = await client.getBlock({ blockTag: "latest" });
      // The saved state's block environment carries the wall time of the save: reset the clock to the
      // last block's, so the next block is 2 s after it.
      const request = test.request as (args: { method: string; params: unknown[] }) => Promise<unknown>;
      await request({ method: "evm_setTime", params: [toHex(latest.timestamp)] });
      if (blockTime > 0) await test.setIntervalMining({ interval: blockTime });
      return { ...base, resumed: true };
    }
    await test.setCode({ address: usdc, bytecode: USDC_RUNTIME_BYTECODE });
    // The constructor never ran here, so `owner` (slot 0) is written directly.
    await test.setStorageAt({ address: usdc, index: USDC_OWNER_SLOT, value: pad(owner.address) });
    await Promise.all([
      test.setBalance({ address: owner.address, value: OWNER_ETH }),
      test.setBalance({ address: facilitatorAccount.address, value: FACILITATOR_ETH }),
      ...buyers.map((b) => test.setBalance({ address: b.address, value: BUYER_ETH })),
    ]);

    // Real mint transactions (not storage writes) so the chain holds the Transfer-from-zero logs an
    // indexer sees for real USDC. Signed locally with fixed nonce, gas and fees: no round trips.
    if (buyerUsdc > 0n && buyers.length > 0) {
      const signer = privateKeyToAccount(owner.privateKey);
      const fees = await client.estimateFeesPerGas();
      const raw = await Promise.all(
        buyers.map((b, nonce) =>
          signer.signTransaction({
            chainId: BASE_CHAIN_ID,
            type: "eip1559",
            nonce,
            to: usdc,
            data: encodeFunctionData({ abi: usdcAbi, functionName: "mint", args: [b.address, buyerUsdc] }),
            gas: MINT_GAS,
            maxFeePerGas: fees.maxFeePerGas * 2n,
            maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
          }),
        ),
      );
      await Promise.all(
        raw.map((serializedTransaction) => client.sendRawTransaction({ serializedTransaction })),
      );
      // A block holds thousands of mints; mine until the pool is empty (each block takes at least one).
      for (let blocks = 1; ; blocks++) {
        await test.mine({ blocks: 1, interval: BLOCK_SECONDS });
        const pool = await test.getTxpoolStatus();
        if (pool.pending === 0 && pool.queued === 0) break;
        if (blocks >= buyers.length)
          throw new DevnetError("funding the buyers failed: mints stuck in the pool");
      }
      const supply = await client.readContract({ address: usdc, abi: usdcAbi, functionName: "totalSupply" });
      if (supply !== buyerUsdc * BigInt(buyers.length)) {
        throw new DevnetError(`funding the buyers failed: USDC total supply is ${supply}`);
      }
    } else {
      await test.mine({ blocks: 1, interval: BLOCK_SECONDS });
    }
    if (blockTime > 0) await test.setIntervalMining({ interval: blockTime });
    return { ...base, resumed: false };
  } catch (error) {
    await anvil.stop();
    throw error;
  }
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

/** anvil takes a directory and writes `state.json` in it. */
function stateFile(statePath: string): string {
  return statePath.endsWith(".json") ? statePath : path.join(statePath, "state.json");
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

interface Anvil {
  pid: number;
  port: number;
  exited: Devnet["exited"];
  stop(): Promise<void>;
}

/** Spawns anvil and resolves with its port once it listens; rejects (and leaves nothing running) otherwise. */
async function launch(
  binary: string,
  args: string[],
  timeoutMs: number,
  stopGraceMs: number,
): Promise<Anvil> {
  if (!fs.existsSync(binary)) throw new DevnetError(`anvil not found at ${binary}`);
  // On Linux, setpriv makes the kernel kill anvil when its parent dies, even by SIGKILL; it then execs
  // anvil, so the pid we hold is anvil's own.
  const pdeathsig = process.platform === "linux" && fs.existsSync("/usr/bin/setpriv");
  const child: ChildProcess = pdeathsig
    ? spawn("/usr/bin/setpriv", ["--pdeathsig", "KILL", "--", binary, ...args], SPAWN_OPTIONS)
    : spawn(binary, args, SPAWN_OPTIONS);

  // anvil logs every RPC call and transaction to stdout: keep draining it (a full pipe would block anvil)
  // and keep the last lines for error messages.
  const tail: string[] = [];
  let onLine: ((line: string) => void) | undefined;
  const collect = (stream: NodeJS.ReadableStream | null) => {
    let partial = "";
    stream?.on("data", (chunk: Buffer) => {
      const lines = (partial + chunk.toString("utf8")).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        if (line.trim() === "") continue;
        tail.push(line);
        if (tail.length > 20) tail.shift();
        onLine?.(line);
      }
    });
  };
  collect(child.stdout);
  collect(child.stderr);

  const killOnExit = () => child.kill("SIGKILL");
  process.on("exit", killOnExit);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => {
      process.off("exit", killOnExit);
      resolve({ code, signal });
    });
  });
  // A spawn failure (ENOENT, EACCES) comes as 'error' and may come without 'exit'.
  const failed = new Promise<Error>((resolve) => child.once("error", resolve));

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), stopGraceMs);
    await Promise.race([exited, failed]);
    clearTimeout(timer);
  };

  const describe = () => (tail.length > 0 ? `:\n${tail.join("\n")}` : "");
  let timer: NodeJS.Timeout | undefined;
  try {
    const port = await Promise.race([
      new Promise<number>((resolve) => {
        onLine = (line) => {
          const match = /Listening on [\d.]+:(\d+)/.exec(line);
          if (match) resolve(Number(match[1]));
        };
      }),
      exited.then(({ code, signal }) => {
        throw new DevnetError(`anvil exited (${signal ?? `code ${code}`}) before listening${describe()}`);
      }),
      failed.then((error) => {
        throw new DevnetError(`cannot start anvil: ${error.message}`);
      }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new DevnetError(`anvil did not listen within ${timeoutMs} ms${describe()}`)),
          timeoutMs,
        );
      }),
    ]);
    onLine = undefined;
    return { pid: child.pid as number, port, exited, stop };
  } catch (error) {
    await stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

const SPAWN_OPTIONS: SpawnOptions = {
  stdio: ["ignore", "pipe", "pipe"],
  // Own process group: a Ctrl-C in a terminal reaches only us, and we stop anvil in order.
  detached: true,
};
