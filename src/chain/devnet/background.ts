/**
 * Background traffic on a devnet: plain ETH transfers and USDC `transfer`s between accounts of its own, at a
 * steady rate. A Base block holds about 200 transactions of which x402 settlements are a few percent, and
 * what the indexer costs depends on the whole block: it is tested and measured among this, not on a chain
 * that carries payments only.
 */
import {
  type Address,
  type Chain,
  createPublicClient,
  createTestClient,
  encodeFunctionData,
  http,
  type PublicClient,
  type Transport,
} from "viem";
import { type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { BASE_CHAIN_ID, BLOCK_SECONDS, USDC_UNIT } from "../base.ts";
import { pollReceipt } from "../receipt.ts";
import { usdcAbi } from "../usdc.ts";
import { type DevnetAccount, derive } from "./accounts.ts";
import { devnetChain } from "./chain.ts";
import { DevnetError } from "./devnet-errors.ts";
import { signMints } from "./funding.ts";
import { MAX_BACKGROUND_TPS } from "./options.ts";

export interface BackgroundOptions {
  /** Transactions a second, spread evenly over time: Base carries about 100 (200 a block). */
  tps: number;
  /** How many accounts send (and receive). Default: enough that each sends about 4 a block, at least 64. */
  accounts?: number;
}

export type BackgroundKind = "eth" | "usdc";

export interface BackgroundTraffic {
  /** The senders, which are also the recipients: none is a buyer, a merchant or the facilitator. */
  readonly accounts: readonly Address[];
  /** Transactions the node accepted. */
  readonly sent: number;
  /** Transactions it refused, or that never reached it: counted, never thrown. */
  readonly failed: number;
  readonly byKind: Readonly<Record<BackgroundKind, { readonly sent: number; readonly failed: number }>>;
  /** Stops the timer and waits for the sends under way. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Mnemonic index of the first account: past every range the project derives from (buyers from 2, at most
 * 10,000 of them; the demo's wallets from 97; the merchants of benchmarks and tests from 10,000), so the
 * traffic never touches a wallet a payment involves.
 */
export const FIRST_BACKGROUND_INDEX = 1_000_000;
const MIN_ACCOUNTS = 64;
/** A sender's transactions in one block must come in nonce order: short chains keep anvil's pool simple. */
const PER_ACCOUNT_PER_BLOCK = 4;
/** Sends every 50 ms: even enough within a 2 s block, and few enough requests to cost the node little. */
const TICK_MS = 50;
const ETH_BALANCE = 10n ** 24n;
const USDC_BALANCE = 1_000_000n * USDC_UNIT;
const MAX_FEE = 100_000_000_000n;
/**
 * Tips either side of the 1 gwei the devnet's facilitator pays, as a Base block's vary. (anvil mines a block
 * in the order its transactions arrived, not by tip: settlements sent while the traffic runs sit among it.)
 */
const TIPS = [2_000_000_000n, 500_000_000n] as const;
const ETH_GAS = 21_000n;
/** A `transfer` between two holders costs about 35k gas; fixed with margin, so nothing is estimated. */
const USDC_GAS = 100_000n;
/** The funding mints wait for a block: a few of them on a slow machine. */
const FUNDING_TIMEOUT_MS = 60_000;

/**
 * The chain the traffic runs on: the fields of a `Devnet` it needs, given by devnet.ts, which starts it
 * (devnet.ts imports this file, so this one does not import it back).
 */
export interface TrafficChain {
  rpc: string;
  usdc: Address;
  /** The USDC `owner`, which mints the accounts' USDC. */
  owner: DevnetAccount;
}

/**
 * Funds the accounts (ETH with anvil_setBalance, USDC by real mints from the token's owner, up to 1M each)
 * and, once the mints are mined, starts sending. Needs a devnet that mines by interval: the mints wait for
 * a block. Uses the owner's next nonces, so nothing else may mint from it meanwhile.
 */
export async function startBackgroundTraffic(
  devnet: TrafficChain,
  options: BackgroundOptions,
): Promise<BackgroundTraffic> {
  const { tps } = options;
  if (!(Number.isFinite(tps) && tps > 0 && tps <= MAX_BACKGROUND_TPS)) {
    throw new DevnetError(`bad background rate ${tps}: from above 0 to ${MAX_BACKGROUND_TPS} a second`);
  }
  const count =
    options.accounts ?? Math.max(MIN_ACCOUNTS, Math.ceil((tps * BLOCK_SECONDS) / PER_ACCOUNT_PER_BLOCK));
  if (!Number.isInteger(count) || count < 2) throw new DevnetError(`bad background account count ${count}`);

  const chain = devnetChain(devnet.rpc);
  // No retries: a resent batch would come back "already known" and count as failed twice.
  const transport = http(devnet.rpc, { batch: { batchSize: 500 }, retryCount: 0 });
  const client = createPublicClient({ chain, transport });
  const test = createTestClient({ chain, mode: "anvil", transport });
  const accounts = Array.from({ length: count }, (_, i) =>
    privateKeyToAccount(derive(FIRST_BACKGROUND_INDEX + i).privateKey),
  );

  await Promise.all(accounts.map((a) => test.setBalance({ address: a.address, value: ETH_BALANCE })));
  await topUpUsdc(client, devnet, accounts);

  const nonces = new Map<PrivateKeyAccount, number>();
  // Asked of the node at start (a resumed chain's accounts have sent before) and after a failed send.
  const stale = new Set(accounts);
  const resync = async () => {
    await Promise.all(
      [...stale].map(async (a) => {
        nonces.set(a, await client.getTransactionCount({ address: a.address, blockTag: "pending" }));
        stale.delete(a);
      }),
    );
  };
  await resync();

  const byKind = { eth: { sent: 0, failed: 0 }, usdc: { sent: 0, failed: 0 } };
  let next = 0;
  const send = async (n: number) => {
    const batch = Array.from({ length: n }, () => transaction(accounts, devnet.usdc, next++));
    try {
      await resync();
      const signed = await Promise.all(
        batch.map(({ from, request }) => {
          const nonce = nonces.get(from) ?? 0;
          nonces.set(from, nonce + 1);
          return from.signTransaction({ ...request, nonce });
        }),
      );
      const results = await Promise.allSettled(
        signed.map((serializedTransaction) => client.sendRawTransaction({ serializedTransaction })),
      );
      for (const [i, result] of results.entries()) {
        const { from, kind } = batch[i] as (typeof batch)[number];
        if (result.status === "fulfilled") byKind[kind].sent++;
        else {
          byKind[kind].failed++;
          stale.add(from);
        }
      }
    } catch {
      // The node is unreachable (or stopping): every transaction of the batch failed.
      for (const { from, kind } of batch) {
        byKind[kind].failed++;
        stale.add(from);
      }
    }
  };

  let stopped = false;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    const start = performance.now();
    let scheduled = 0;
    // After a stall (a slow node, a busy machine) at most a second's backlog is sent: what is measured is
    // a block's density, which a catch-up burst would distort.
    const burst = Math.max(1, Math.ceil(tps));
    while (!stopped) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, TICK_MS).unref();
      });
      if (stopped) break;
      const due = Math.floor(((performance.now() - start) / 1000) * tps) - scheduled;
      scheduled += due;
      if (due > 0) await send(Math.min(due, burst));
    }
  })();

  let stopping: Promise<void> | undefined;
  return {
    accounts: accounts.map((a) => a.address),
    get sent() {
      return byKind.eth.sent + byKind.usdc.sent;
    },
    get failed() {
      return byKind.eth.failed + byKind.usdc.failed;
    },
    byKind,
    stop() {
      stopping ??= (async () => {
        stopped = true;
        wake?.();
        await loop;
      })();
      return stopping;
    },
  };
}

/**
 * Transaction `i` of the stream: senders take turns, kinds alternate (each sender sends both in turn), the
 * recipient is another account, different each round.
 */
function transaction(accounts: readonly PrivateKeyAccount[], usdc: Address, i: number) {
  const n = accounts.length;
  const round = Math.floor(i / n);
  const sender = i % n;
  const from = accounts[sender] as PrivateKeyAccount;
  const to = (accounts[(sender + 1 + (round % (n - 1))) % n] as PrivateKeyAccount).address;
  const kind: BackgroundKind = (sender + round) % 2 === 0 ? "eth" : "usdc";
  const fees = {
    chainId: BASE_CHAIN_ID,
    type: "eip1559",
    maxFeePerGas: MAX_FEE,
    maxPriorityFeePerGas: TIPS[Math.floor(i / 2) % 2] as bigint,
  } as const;
  const request =
    kind === "eth"
      ? { ...fees, to, value: 1_000_000_000n + BigInt(i % 1_000), gas: ETH_GAS }
      : {
          ...fees,
          to: usdc,
          data: encodeFunctionData({
            abi: usdcAbi,
            functionName: "transfer",
            args: [to, BigInt(1 + (i % 10_000))],
          }),
          gas: USDC_GAS,
        };
  return { from, kind, request };
}

/** Mints each account up to `USDC_BALANCE` (a resumed chain's accounts mostly hold it already) and waits
 * for the mints to be mined: a transfer sent before would revert. */
async function topUpUsdc(
  client: PublicClient<Transport, Chain>,
  devnet: Pick<TrafficChain, "usdc" | "owner">,
  accounts: readonly PrivateKeyAccount[],
): Promise<void> {
  const balances = await Promise.all(
    accounts.map((a) =>
      client.readContract({
        address: devnet.usdc,
        abi: usdcAbi,
        functionName: "balanceOf",
        args: [a.address],
      }),
    ),
  );
  const mints = accounts
    .map((a, i) => ({ to: a.address, amount: USDC_BALANCE - (balances[i] ?? 0n) }))
    .filter((m) => m.amount > USDC_BALANCE / 2n);
  if (mints.length === 0) return;
  const nonce = await client.getTransactionCount({ address: devnet.owner.address, blockTag: "pending" });
  const signed = await Promise.all(
    signMints(
      devnet.owner,
      devnet.usdc,
      nonce,
      { maxFeePerGas: MAX_FEE, maxPriorityFeePerGas: TIPS[0] },
      mints,
    ),
  );
  const hashes = await Promise.all(
    signed.map((serializedTransaction) => client.sendRawTransaction({ serializedTransaction })),
  );
  const receipts = await Promise.all(
    hashes.map((hash) => pollReceipt(client, hash, FUNDING_TIMEOUT_MS, 100)),
  );
  const unmined = receipts.filter((r) => !r).length;
  const reverted = receipts.filter((r) => r && r.status !== "success").length;
  if (unmined > 0 || reverted > 0) {
    throw new DevnetError(
      `funding the background accounts failed: of ${mints.length} mints, ${unmined} not mined within ` +
        `${FUNDING_TIMEOUT_MS / 1000} s (does the devnet mine by interval?) and ${reverted} reverted`,
    );
  }
}
