/**
 * The simulator's side of the devnet: its clients, the miner that puts waiting transactions in a block
 * while the plan catches up, the empty blocks that move the chain to an action's time, and the
 * transactions the simulated wallets send themselves (gas, Permit2 approvals, USDC mints and transfers).
 */
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  type Hash,
  http,
  maxUint256,
  parseUnits,
  toHex,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { BLOCK_SECONDS, PERMIT2_ADDRESS } from "../chain/base.ts";
import { type DevnetAccount, devnetChain } from "../chain/devnet/index.ts";
import { pollReceipt } from "../chain/receipt.ts";
import { usdcAbi } from "../chain/usdc.ts";
import { DEFAULT_REORG_DEPTH } from "../indexer/index.ts";
import type { Action, WalletId } from "./plan-types.ts";
import type { SimWallets } from "./sim-wallets.ts";

const MINE_TICK_MS = 15;
/**
 * `anvil_mine` is not idempotent: a call viem gave up on (its 10 s default) and sent again mined its blocks
 * twice, and a day's 43,200 empty blocks on a loaded machine took longer than that, so the chain ran days
 * past the plan. Mining calls get one try and as long as the largest burst takes.
 */
const MINE_TIMEOUT_MS = 600_000;
/** A transaction waits one tick while catching up and a block (2 s) when live: a minute is a failure. */
const RECEIPT_TIMEOUT_MS = 60_000;

export interface SimChainOptions {
  rpc: string;
  usdc: `0x${string}`;
  /** The token owner, who mints. */
  owner: DevnetAccount;
  /** Chain time of the chain's first block (each block is 2 s after its parent). */
  genesisTime: number;
  /** Number of the chain's first block (default 0). */
  genesisNumber?: number;
  /** The chain's id (default Base's 8453). */
  chainId?: number;
  /**
   * Blocks as transactions come, Arbitrum's way, instead of one every 2 s: no empty blocks while the plan
   * catches up, a block for what waits each tick at the plan's time (several blocks share a second), then
   * the blocks that confirm the week, and when live a block for what waits each 250 ms tick, at the wall
   * clock's second, or an empty one every second.
   */
  blocksOnDemand?: boolean;
}

/** A live chain that mines on demand looks this often for waiting transactions (Arbitrum's 250 ms blocks). */
const LIVE_TICK_MS = 250;
/** Arbitrum's rate, for the blocks that confirm a played week: four a second. */
const BLOCKS_PER_SECOND = 4;

export class SimChain {
  readonly chain;
  readonly client;
  private readonly test;
  private readonly walletClient;
  /** Whether the plan reached the present: the devnet then mines a block every 2 s on its own. */
  live = false;
  private mining: Promise<void> = Promise.resolve();
  private readonly miner: NodeJS.Timeout;
  private readonly gassed = new Set<string>();
  private readonly approvals = new Map<WalletId, Promise<void>>();
  /** On demand: the plan's time, the timestamp of the next block while catching up. */
  private planTime = 0;
  /** On demand: the timestamp of the last block mined, read from the chain first. */
  private lastTimestamp: number | undefined;
  private liveMiner: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: SimChainOptions,
    private readonly wallets: SimWallets,
    private readonly now: () => number,
  ) {
    this.chain = devnetChain(options.rpc, options.chainId);
    const transport = http(options.rpc, { batch: { batchSize: 200, wait: 5 } });
    this.client = createPublicClient({ chain: this.chain, transport });
    this.test = createTestClient({
      chain: this.chain,
      mode: "anvil",
      transport: http(options.rpc, { retryCount: 0, timeout: MINE_TIMEOUT_MS }),
    });
    this.walletClient = createWalletClient({ chain: this.chain, transport });
    // While catching up, a transaction waits at most one tick for its block.
    this.miner = setInterval(() => {
      if (this.live) return;
      this.mining = this.mining.then(() => this.mineWaiting(this.planTime));
    }, MINE_TICK_MS);
  }

  /** Mines a block if a transaction waits (or, with `every`, if the last block is that old): at `time` on demand. */
  private async mineWaiting(time: number, every?: number): Promise<void> {
    try {
      const pool = await this.test.getTxpoolStatus();
      if (!this.options.blocksOnDemand) {
        if (pool.pending > 0) await this.test.mine({ blocks: 1, interval: BLOCK_SECONDS });
        return;
      }
      this.lastTimestamp ??= Number((await this.client.getBlock({ blockTag: "latest" })).timestamp);
      const at = Math.max(time, this.lastTimestamp);
      if (pool.pending === 0 && (every === undefined || at - this.lastTimestamp < every)) return;
      // evm_mine with a timestamp: exactly that one, which may equal the parent's.
      await this.test.request({ method: "evm_mine", params: [toHex(at)] } as never);
      this.lastTimestamp = at;
    } catch {
      // anvil is stopping.
    }
  }

  /** The head's number, read now. */
  async head(): Promise<number> {
    return Number(await this.client.getBlockNumber({ cacheTime: 0 }));
  }

  /** Mines empty blocks until the head's time is at least `time` (never past the wall clock). */
  async mineTo(time: number): Promise<void> {
    if (this.options.blocksOnDemand) {
      // No empty blocks: the next one is dated the action's time.
      this.planTime = Math.max(this.planTime, Math.min(time, Math.floor(this.now() / 1000)));
      return;
    }
    const first = this.options.genesisNumber ?? 0;
    const { genesisTime } = this.options;
    const target = Math.min(
      first + Math.ceil((time - genesisTime) / BLOCK_SECONDS),
      first + Math.floor((this.now() / 1000 - genesisTime) / BLOCK_SECONDS),
    );
    await this.mining;
    const head = await this.head();
    if (target > head) await this.test.mine({ blocks: target - head, interval: BLOCK_SECONDS });
  }

  /** The plan reached the present: from here the chain follows the wall clock. */
  async goLive(): Promise<void> {
    if (this.options.blocksOnDemand) {
      this.live = true;
      await this.mining;
      await this.confirmPlayed();
      this.liveMiner = setInterval(() => {
        this.mining = this.mining.then(() => this.mineWaiting(Math.floor(this.now() / 1000), 1));
      }, LIVE_TICK_MS);
      return;
    }
    await this.mineTo(this.now() / 1000);
    this.live = true;
    await this.mining;
    await this.test.setIntervalMining({ interval: BLOCK_SECONDS });
  }

  /**
   * The blocks after the played week that confirm it, at Arbitrum's four a second up to now: an indexer
   * holds back its last `DEFAULT_REORG_DEPTH` blocks, which without them would be the week's own (catching
   * up mined a block only where a transaction waited). Live, a block a second then keeps it moving.
   */
  private async confirmPlayed(): Promise<void> {
    const now = Math.floor(this.now() / 1000);
    this.lastTimestamp ??= Number((await this.client.getBlock({ blockTag: "latest" })).timestamp);
    for (let i = DEFAULT_REORG_DEPTH - 1; i >= 0; i--) {
      const at = Math.max(this.lastTimestamp, now - Math.floor(i / BLOCKS_PER_SECOND));
      await this.test.request({ method: "evm_mine", params: [toHex(at)] } as never);
      this.lastTimestamp = at;
    }
  }

  /** Stops the miner; `idle()` then waits for the block it may be mining. */
  stopMiner(): void {
    clearInterval(this.miner);
    clearInterval(this.liveMiner);
  }

  idle(): Promise<void> {
    return this.mining;
  }

  /**
   * Permit2 may move a wallet's USDC once the wallet approved it: checked on chain, so a resumed demo does
   * not approve again, and once per wallet however many of its calls run at once.
   */
  approvePermit2(id: WalletId): Promise<void> {
    let approval = this.approvals.get(id);
    if (!approval) {
      approval = this.approve(id);
      approval.catch(() => this.approvals.delete(id));
      this.approvals.set(id, approval);
    }
    return approval;
  }

  /** Sends a mint or a transfer of USDC; resolves with its hash once the node has it. */
  async transfer(action: Extract<Action, { type: "mint" | "transfer" }>): Promise<Hash> {
    const amount = parseUnits(String(action.usd), 6);
    const common = { chain: this.chain, address: this.options.usdc, abi: usdcAbi, gas: 120_000n } as const;
    await this.gas(
      action.type === "mint" ? this.options.owner.address : this.wallets.account(action.from).address,
    );
    return action.type === "mint"
      ? this.walletClient.writeContract({
          ...common,
          account: privateKeyToAccount(this.options.owner.privateKey),
          functionName: "mint",
          args: [this.wallets.account(action.to).address, amount],
        })
      : this.walletClient.writeContract({
          ...common,
          account: this.wallets.account(action.from),
          functionName: "transfer",
          args: [this.wallets.account(action.to).address, amount],
        });
  }

  /** Waits for a transaction the simulator sent; one not mined in time stops the simulator. */
  async confirmed(hash: Hash): Promise<void> {
    if (!(await pollReceipt(this.client, hash, RECEIPT_TIMEOUT_MS, 20))) {
      throw new Error(`transaction ${hash} was not mined within ${RECEIPT_TIMEOUT_MS / 1000} s`);
    }
  }

  private async approve(id: WalletId): Promise<void> {
    const owner = this.wallets.account(id);
    const common = { address: this.options.usdc, abi: usdcAbi } as const;
    const allowance = await this.client.readContract({
      ...common,
      functionName: "allowance",
      args: [owner.address, PERMIT2_ADDRESS],
    });
    if (allowance >= maxUint256 / 2n) return;
    await this.gas(owner.address);
    const hash = await this.walletClient.writeContract({
      ...common,
      chain: this.chain,
      account: owner,
      functionName: "approve",
      args: [PERMIT2_ADDRESS, maxUint256],
      gas: 80_000n,
    });
    const receipt = await pollReceipt(this.client, hash, RECEIPT_TIMEOUT_MS, 20);
    if (receipt?.status !== "success") throw new Error(`approving Permit2 failed (${hash})`);
  }

  /**
   * Senders of transactions need gas; x402 payers do not (the facilitator pays it). Given on first use:
   * on a chain with state roots (one an earlier version saved) every account is one more leaf anvil
   * rehashes for every block.
   */
  private async gas(address: `0x${string}`): Promise<void> {
    if (this.gassed.has(address)) return;
    await this.test.setBalance({ address, value: 10n ** 18n });
    this.gassed.add(address);
  }
}
