/**
 * What the funding history costs (`npm run bench:index -- --funding-blocks N [--baseline DIR]`): the
 * indexer over the same settlements with and without the history, on a chain whose first N blocks hold
 * the buyers' funding, through both provider kinds the repository uses (anvil as it is, with
 * trace_filter; and the proxy that refuses trace_* and debug_* as hosted Base endpoints do:
 * test/helpers/provider.ts). With `--baseline DIR` (a checkout of an earlier commit, node_modules
 * beside it) that commit's indexer reads the same chain too, one run after the other.
 *
 * The chain (Cancun and `--prune-history 0`, so that millions of empty blocks mine at about 14,000 a
 * second; anvil then keeps no old state, and the providers answer `balanceOf` at past blocks from the
 * Transfer logs, as an archive node does). 100 buyers minted USDC in block 1, then over N blocks:
 *  - a merchant funds a buyer in the first hundredth, which stays dormant until its first payment
 *    (more than nine weeks later when N is above 2.8 million);
 *  - 60 depositors pay an exchange wallet (a hub: 50 or more senders);
 *  - 60 depositors pay a second exchange, which pays 20 buyers after their first payment;
 *  - the first exchange pays 40 buyers directly and 30 private wallets that pay 30 more buyers;
 *  - a merchant funds a distributor that pays 60 fresh buyers;
 *  - a merchant funds a buyer through 6 private wallets;
 *  - 10 merchants each fund a buyer through two private wallets;
 * then `--funding-settlements` x402 settlements (default 2,000) to 50 merchants: each payer's first payment
 * first, 5 a block and 500 blocks apart (new payers reach the indexer over several batches, as on a live
 * chain; a funded buyer pays its funder first), the second exchange's payouts, then the rest 100 a block
 * from the minted buyers. The indexer reads the settlement blocks only (`fromBlock` = the first), so
 * everything the history stores it reads by eth_getLogs, as on mainnet.
 *
 * Printed per run: the RPC calls, HTTP requests and bytes the provider saw, per 10,000 payments; the
 * history's eth_getLogs (those with a recipient list) and balanceOf calls; the rows it stored; and which
 * of the patterns above are in the store.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type Address, encodeFunctionData, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { BASE_CHAIN_ID, WEEK_BLOCKS } from "../src/chain/base.ts";
import { type Devnet, type DevnetAccount, derive, startDevnet } from "../src/chain/devnet/index.ts";
import { FacilitatorRegistry } from "../src/chain/facilitators.ts";
import { usdcAbi } from "../src/chain/usdc.ts";
import { DEFAULT_BATCH_BLOCKS, DEFAULT_CONCURRENCY, DEFAULT_FUNDING_LOOKBACK } from "../src/indexer/index.ts";
import { type Provider, startProvider } from "../test/helpers/provider.ts";
import { mineAll, rpc, sendRaw, sendTransfer, signSettlements } from "../test/helpers/settle.ts";

export interface FundingBenchOptions {
  /** Blocks of funding history before the settlements. */
  blocks: number;
  settlements: number;
  batchBlocks: number;
  concurrency: number;
  /** A checkout of the code to compare with (its `src/` is imported). */
  baseline?: string;
}

const USD = 1_000_000n;
const BUYERS = 100;
const MERCHANTS = 50;
const PER_BLOCK = 100;
const FIRSTS_PER_BLOCK = 5;
const FIRSTS_GAP = 499;
const MINE_STEP = 100_000;
/** The lookback before this change: the screen's 8 weeks and the window's week. */
const OLD_LOOKBACK = 9 * WEEK_BLOCKS;
const log = (message: string) => process.stderr.write(`${message}\n`);

/** The wallets whose rows the runs are checked for. */
interface Patterns {
  /** Each funded buyer's merchant (a wash buyer's first payment goes to it). */
  funder: Map<string, Address>;
  /** Payers other than the devnet's buyers, in the order their first payments come. */
  extraPayers: DevnetAccount[];
  /** The second exchange's payouts to buyers that already paid: sent after the first payments. */
  later: [DevnetAccount, Address, bigint][];
  chainHops: Hex[];
  dormantFunding: Hex;
  distributorFeed: Hex;
  exchangeDeposits: Hex[];
}

export async function benchFunding(options: Partial<FundingBenchOptions> = {}): Promise<void> {
  const o: FundingBenchOptions = {
    blocks: 3_000_000,
    settlements: 2_000,
    batchBlocks: DEFAULT_BATCH_BLOCKS,
    concurrency: DEFAULT_CONCURRENCY,
    ...options,
  };
  const devnet = await startDevnet({
    port: 0,
    buyers: BUYERS,
    blockTime: 0,
    hardfork: "cancun",
    pruneHistory: 0,
  });
  const providers = {
    trace: await startProvider(devnet.rpc, { hosted: false, archive: devnet.usdc }),
    hosted: await startProvider(devnet.rpc, { hosted: true, archive: devnet.usdc }),
  };
  try {
    let started = performance.now();
    const patterns = await buildFunding(devnet, o.blocks);
    const first = Number(await rpc(devnet.rpc, "eth_blockNumber")) + 1;
    const { last, payments } = await settle(devnet, o.settlements, patterns);
    log(
      `built the chain: ${o.blocks} blocks of funding, ${payments} settlements in blocks ${first}-${last}, ` +
        `${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    started = performance.now();
    const plan: { code: "current" | "baseline"; lookback: number }[] = [
      { code: "current", lookback: 0 },
      ...(o.baseline ? [{ code: "baseline" as const, lookback: OLD_LOOKBACK }] : []),
      { code: "current", lookback: OLD_LOOKBACK },
      { code: "current", lookback: DEFAULT_FUNDING_LOOKBACK },
    ];
    const runs = [];
    for (const [kind, provider] of Object.entries(providers)) {
      for (const p of plan) {
        const root =
          p.code === "baseline" && o.baseline
            ? path.resolve(o.baseline)
            : path.resolve(import.meta.dirname, "..");
        const run = await indexOnce(
          root,
          provider,
          devnet,
          { first, last, payments },
          p.lookback,
          o,
          patterns,
        );
        runs.push({ provider: kind, code: p.code, ...run });
        log(
          `${kind.padEnd(6)} ${p.code.padEnd(8)} lookback ${String(p.lookback).padEnd(8)} ${run.seconds} s; ` +
            `per 10,000 payments: ${run.per10k.calls} calls, ${run.per10k.httpRequests} HTTP, ${run.per10k.mb} MB; ` +
            `history: ${run.historyGetLogs} eth_getLogs, ${run.balanceCalls} balanceOf, ${run.historyRows} rows, ` +
            `${run.balanceRows} balances; found: ${JSON.stringify(run.found)}`,
        );
      }
    }
    const figures = {
      date: new Date().toISOString().slice(0, 10),
      machine: `${os.cpus()[0]?.model ?? "?"}, ${os.cpus().length} cores, Node ${process.version}`,
      fundingBlocks: o.blocks,
      settlements: payments,
      blocks: `${first}-${last}`,
      batchBlocks: o.batchBlocks,
      concurrency: o.concurrency,
      baseline: o.baseline,
      runs,
      measureSeconds: round((performance.now() - started) / 1000),
    };
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  } finally {
    await providers.trace.close();
    await providers.hosted.close();
    await devnet.stop();
  }
}

/** The funding of the buyers over `blocks` blocks. */
async function buildFunding(devnet: Devnet, blocks: number): Promise<Patterns> {
  const buyers = devnet.buyers;
  const exchange = derive(20_000);
  const depositors = Array.from({ length: 60 }, (_, i) => derive(20_001 + i));
  const privates = Array.from({ length: 30 }, (_, i) => derive(21_000 + i));
  const washMerchants = Array.from({ length: 10 }, (_, i) => derive(10_000 + i));
  const washHops = Array.from({ length: 10 }, (_, i) => [derive(22_000 + i), derive(22_100 + i)] as const);
  // The new patterns' merchants are merchants 10-12 of the 50 paid.
  const [chainMerchant, dormantMerchant, feedMerchant] = [10, 11, 12].map((i) => derive(10_000 + i)) as [
    DevnetAccount,
    DevnetAccount,
    DevnetAccount,
  ];
  const chainWallets = Array.from({ length: 6 }, (_, i) => derive(23_000 + i));
  const chainBuyer = derive(23_010);
  const dormantBuyer = derive(23_011);
  const distributor = derive(23_012);
  const distributed = Array.from({ length: 60 }, (_, i) => derive(23_100 + i));
  const exchange2 = derive(24_000);
  const depositors2 = Array.from({ length: 60 }, (_, i) => derive(24_001 + i));
  const gas = [
    exchange,
    ...depositors,
    ...privates,
    ...washMerchants,
    ...washHops.flat(),
    chainMerchant,
    dormantMerchant,
    feedMerchant,
    ...chainWallets,
    distributor,
    exchange2,
    ...depositors2,
  ];
  for (const a of gas) await rpc(devnet.rpc, "anvil_setBalance", [a.address, "0x56bc75e2d63100000"]);
  await mint(
    devnet,
    [
      ...depositors.map((d) => d.address),
      ...washMerchants.map((m) => m.address),
      ...[chainMerchant, dormantMerchant, feedMerchant].map((m) => m.address),
      ...depositors2.map((d) => d.address),
    ],
    100n * USD,
  );

  let mined = Number(await rpc(devnet.rpc, "eth_blockNumber"));
  const start = mined;
  /** Mines empty blocks up to `fraction` of the way, then sends `txs` and mines them. */
  const at = async (fraction: number, send: () => Promise<Hex[]>) => {
    const target = start + Math.floor(blocks * fraction);
    // In steps: one anvil_mine of a few hundred thousand blocks outlasts fetch's 300 s header timeout.
    for (let next = mined + 1; next < target; next += MINE_STEP) {
      const count = Math.min(MINE_STEP, target - next);
      await rpc(devnet.rpc, "anvil_mine", [`0x${count.toString(16)}`, "0x2"]);
    }
    const txs = await send();
    mined = await mineAll(devnet, txs);
    return txs;
  };
  const transfers = async (moves: [DevnetAccount, Address, bigint][]) => {
    const out: Hex[] = [];
    for (const [from, to, amount] of moves) out.push(await sendTransfer(devnet, from, to, amount));
    return out;
  };
  const move = (from: DevnetAccount, to: DevnetAccount, amount: bigint): [DevnetAccount, Address, bigint] => [
    from,
    to.address,
    amount,
  ];

  const [dormantFunding] = (await at(0.01, () =>
    transfers([move(dormantMerchant, dormantBuyer, 10n * USD)]),
  )) as [Hex];
  await at(0.05, () => transfers(depositors.map((d) => move(d, exchange, 50n * USD))));
  const exchangeDeposits = await at(0.06, () =>
    transfers(depositors2.map((d) => move(d, exchange2, 50n * USD))),
  );
  await at(0.3, () =>
    transfers([
      ...privates.map((p) => move(exchange, p, 20n * USD)),
      ...buyers.slice(0, 40).map((b) => move(exchange, b, 10n * USD)),
    ]),
  );
  const [distributorFeed] = (await at(0.5, () =>
    transfers([move(feedMerchant, distributor, 90n * USD)]),
  )) as [Hex];
  await at(0.55, () => transfers(distributed.map((b) => move(distributor, b, USD))));
  await at(0.6, () => transfers(privates.map((p, i) => move(p, buyers[40 + i] as DevnetAccount, 10n * USD))));
  const chainHops: Hex[] = [];
  let from = chainMerchant;
  for (const [i, wallet] of [...chainWallets, chainBuyer].entries()) {
    chainHops.push(...(await at(0.62 + i * 0.01, () => transfers([move(from, wallet, 10n * USD)]))));
    from = wallet;
  }
  await at(0.7, () =>
    transfers(washHops.map(([a], i) => move(washMerchants[i] as DevnetAccount, a, 30n * USD))),
  );
  await at(0.8, () => transfers(washHops.map(([a, b]) => move(a, b, 25n * USD))));
  await at(0.9, () =>
    transfers(washHops.map(([, b], i) => move(b, buyers[70 + i] as DevnetAccount, 20n * USD))),
  );
  await at(1, async () => []);

  const funder = new Map<string, Address>();
  for (const [i, m] of washMerchants.entries())
    funder.set((buyers[70 + i] as DevnetAccount).address, m.address);
  funder.set(dormantBuyer.address, dormantMerchant.address);
  funder.set(chainBuyer.address, chainMerchant.address);
  for (const b of distributed) funder.set(b.address, feedMerchant.address);
  return {
    funder,
    // The dormant buyer first, so that it waits the whole funding span.
    extraPayers: [dormantBuyer, chainBuyer, ...distributed],
    later: buyers.slice(80, 100).map((b) => move(exchange2, b, 5n * USD)),
    chainHops,
    dormantFunding,
    distributorFeed,
    exchangeDeposits,
  };
}

/** Mints `amount` to each address, from the USDC owner. */
async function mint(devnet: Devnet, to: Address[], amount: bigint): Promise<void> {
  const owner = privateKeyToAccount(devnet.owner.privateKey);
  const nonce = Number(await rpc<string>(devnet.rpc, "eth_getTransactionCount", [owner.address, "pending"]));
  const txs = await Promise.all(
    to.map((address, i) =>
      owner.signTransaction({
        chainId: BASE_CHAIN_ID,
        type: "eip1559",
        nonce: nonce + i,
        to: devnet.usdc,
        data: encodeFunctionData({ abi: usdcAbi, functionName: "mint", args: [address, amount] }),
        gas: 100_000n,
        maxFeePerGas: 100_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
      }),
    ),
  );
  await mineAll(devnet, await sendRaw(devnet.rpc, txs));
}

/**
 * The settlements. Each payer's first payment comes first, `FIRSTS_PER_BLOCK` a block and
 * `FIRSTS_GAP` blocks apart, so new payers reach the indexer over several batches as on a live chain;
 * a funded buyer's first payment goes to its funder. Then the second exchange pays buyers that already
 * paid, and the rest follow, `PER_BLOCK` a block. Returns the last block and the settlements sent.
 */
async function settle(
  devnet: Devnet,
  count: number,
  patterns: Patterns,
): Promise<{ last: number; payments: number }> {
  const merchants = Array.from({ length: MERCHANTS }, (_, i) => derive(10_000 + i).address);
  let seed = 8453;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const payers = [...patterns.extraPayers, ...(devnet.buyers as DevnetAccount[])];
  const orders = Array.from({ length: Math.max(count, payers.length) }, (_, i) => {
    const buyer =
      i < payers.length
        ? (payers[i] as DevnetAccount)
        : (devnet.buyers[Math.floor(random() * BUYERS)] as DevnetAccount);
    const payTo =
      i < payers.length
        ? (patterns.funder.get(buyer.address) ?? (merchants[Math.floor(random() * MERCHANTS)] as Address))
        : (merchants[Math.floor(random() * MERCHANTS)] as Address);
    return { buyer, payTo, amount: BigInt(1_000 + Math.floor(random() * 99) * 1_000) };
  });
  const nonce = Number(
    await rpc<string>(devnet.rpc, "eth_getTransactionCount", [devnet.facilitatorAccount.address, "pending"]),
  );
  const signed = await signSettlements(devnet.usdc, devnet.facilitatorAccount, nonce, orders);
  let last = 0;
  let laterSent = false;
  for (let i = 0; i < signed.length; ) {
    if (i >= payers.length && !laterSent) {
      laterSent = true;
      const later: Hex[] = [];
      for (const [from, to, amount] of patterns.later)
        later.push(await sendTransfer(devnet, from, to, amount));
      await mineAll(devnet, later);
    }
    const size = i < payers.length ? FIRSTS_PER_BLOCK : PER_BLOCK;
    const hashes = await sendRaw(
      devnet.rpc,
      signed.slice(i, i + size).map((s) => s.tx),
    );
    last = await mineAll(devnet, hashes);
    i += size;
    if (i < payers.length) await rpc(devnet.rpc, "anvil_mine", [`0x${FIRSTS_GAP.toString(16)}`, "0x2"]);
  }
  return { last, payments: signed.length };
}

async function indexOnce(
  root: string,
  provider: Provider,
  devnet: Devnet,
  range: { first: number; last: number; payments: number },
  lookback: number,
  o: FundingBenchOptions,
  patterns: Patterns,
) {
  // The code measured: this checkout's, or the baseline's (its own indexer and store).
  const { runIndexer } = (await import(
    path.join(root, "src/indexer/index.ts")
  )) as typeof import("../src/indexer/index.ts");
  const { Analytics } = (await import(
    path.join(root, "src/analytics/duckdb.ts")
  )) as typeof import("../src/analytics/duckdb.ts");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-bench-funding-"));
  const analytics = await Analytics.open({ dataDir: dir });
  try {
    provider.reset();
    const t = performance.now();
    const summary = await runIndexer({
      analytics,
      rpc: { url: provider.url, rps: 0 },
      registry: FacilitatorRegistry.base().withSigners([devnet.facilitatorAccount.address]),
      fromBlock: range.first,
      toBlock: range.last,
      batchBlocks: o.batchBlocks,
      concurrency: o.concurrency,
      fundingLookback: lookback,
    });
    const seconds = (performance.now() - t) / 1000;
    const cost = { ...provider.cost };
    const historyGetLogs = cost.seen.filter(
      (c) => c.method === "eth_getLogs" && (c.params[0] as { topics?: unknown[] }).topics?.length === 3,
    ).length;
    const balanceCalls = cost.seen.filter(
      (c) =>
        c.method === "eth_call" && String((c.params[0] as { data?: string }).data).startsWith("0x70a08231"),
    ).length;
    const stored = new Set(
      (await analytics.all<{ tx_hash: string }>("SELECT tx_hash FROM transfers")).map((r) => r.tx_hash),
    );
    const has = (txs: Hex[]) => `${txs.filter((tx) => stored.has(tx)).length}/${txs.length}`;
    const balanceRows = await analytics
      .one<{ n: bigint }>("SELECT count(*) AS n FROM balances")
      .then((r) => Number(r?.n ?? 0n))
      .catch(() => 0);
    const per = (n: number) => Math.round((n * 10_000) / range.payments);
    return {
      lookback,
      seconds: round(seconds),
      calls: cost.calls,
      httpRequests: cost.httpRequests,
      mb: round(cost.bytes / 1e6),
      per10k: {
        calls: per(cost.calls),
        httpRequests: per(cost.httpRequests),
        mb: round((cost.bytes * 10_000) / range.payments / 1e6),
      },
      methods: cost.methods,
      historyGetLogs,
      balanceCalls,
      historyRows: summary.history,
      balanceRows,
      payments: summary.payments,
      commits: summary.batches,
      found: {
        sixWalletChain: has(patterns.chainHops),
        dormant: has([patterns.dormantFunding]),
        distributorFunder: has([patterns.distributorFeed]),
        exchangeDepositors: has(patterns.exchangeDeposits),
      },
    };
  } finally {
    analytics.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
