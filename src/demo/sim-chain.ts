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
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { BLOCK_SECONDS, PERMIT2_ADDRESS } from "../chain/base.ts";
import { type DevnetAccount, devnetChain } from "../chain/devnet/index.ts";
import { pollReceipt } from "../chain/receipt.ts";
import { usdcAbi } from "../chain/usdc.ts";
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
}

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

  constructor(
    private readonly options: SimChainOptions,
    private readonly wallets: SimWallets,
    private readonly now: () => number,
  ) {
    this.chain = devnetChain(options.rpc);
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
      this.mining = this.mining.then(async () => {
        try {
          const pool = await this.test.getTxpoolStatus();
          if (pool.pending > 0) await this.test.mine({ blocks: 1, interval: BLOCK_SECONDS });
        } catch {
          // anvil is stopping.
        }
      });
    }, MINE_TICK_MS);
  }

  /** The head's number, read now. */
  async head(): Promise<number> {
    return Number(await this.client.getBlockNumber({ cacheTime: 0 }));
  }

  /** Mines empty blocks until the head's time is at least `time` (never past the wall clock). */
  async mineTo(time: number): Promise<void> {
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
    await this.mineTo(this.now() / 1000);
    this.live = true;
    await this.mining;
    await this.test.setIntervalMining({ interval: BLOCK_SECONDS });
  }

  /** Stops the miner; `idle()` then waits for the block it may be mining. */
  stopMiner(): void {
    clearInterval(this.miner);
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
