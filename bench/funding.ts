/**
 * What the funding history costs (`npm run bench:index -- --funding-blocks N`): the indexer over the same
 * settlements with `fundingLookback` 0 and N, on a chain whose first N blocks hold the buyers' funding.
 *
 * The chain (Cancun, so that N empty blocks mine at a few thousand a second; Prague's history contract
 * would slow anvil to about 125 blocks/s): 100 buyers minted USDC in block 1, then over N blocks
 *  - 60 depositors pay an exchange wallet (a hub: 50 or more senders),
 *  - the exchange pays 40 buyers directly and 30 private wallets that pay 30 more buyers,
 *  - 10 merchants each fund a buyer through two private wallets (the pattern `merchant_funded` is for),
 *  - 20 buyers have only their mint,
 * then `--funding-settlements` x402 settlements (default 2,000) from the buyers to 50 merchants: each
 * buyer's first payment first, 5 a block and 500 blocks apart (new payers reach the indexer over several
 * batches, as on a live chain; a funded buyer pays its funder first), then the rest 100 a block. The indexer reads the settlement blocks only
 * (`fromBlock` = the first), so everything the history stores it reads by eth_getLogs, as on mainnet.
 *
 * Printed: per run the RPC calls, HTTP requests and bytes (the client's stats), the eth_getLogs calls
 * the history made (those with a topic2 list), the rows it stored and the payments the report then
 * flags merchant_funded; and the calls a batch with new payers costs per level at the 8-week lookback.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type Address, encodeFunctionData, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { Analytics } from "../src/analytics/duckdb.ts";
import { BASE_CHAIN_ID } from "../src/chain/base.ts";
import { type Devnet, type DevnetAccount, derive, startDevnet } from "../src/chain/devnet/index.ts";
import { FacilitatorRegistry } from "../src/chain/facilitators.ts";
import { usdcAbi } from "../src/chain/usdc.ts";
import { DEFAULT_BATCH_BLOCKS, DEFAULT_CONCURRENCY, runIndexer } from "../src/indexer/index.ts";
import { DEFAULT_FUNDING_LOOKBACK, HISTORY_FIRST_SPAN } from "../src/indexer/indexer.ts";
import { THRESHOLDS } from "../src/reports/screens/index.ts";
import { ReportService } from "../src/reports/service.ts";
import { mineAll, rpc, sendRaw, sendTransfer, signSettlements } from "../test/helpers/settle.ts";

export interface FundingBenchOptions {
  /** Blocks of funding history before the settlements; the history's lookback in the second run. */
  blocks: number;
  settlements: number;
  batchBlocks: number;
  concurrency: number;
}

const USD = 1_000_000n;
const BUYERS = 100;
const MERCHANTS = 50;
const PER_BLOCK = 100;
const FIRSTS_PER_BLOCK = 5;
const FIRSTS_GAP = 499;
const MINE_STEP = 20_000;
const log = (message: string) => process.stderr.write(`${message}\n`);

export async function benchFunding(options: Partial<FundingBenchOptions> = {}): Promise<void> {
  const o: FundingBenchOptions = {
    blocks: 100_000,
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
  try {
    let started = performance.now();
    const { washPairs } = await buildFunding(devnet, o.blocks);
    const first = Number(await rpc(devnet.rpc, "eth_blockNumber")) + 1;
    const last = await settle(devnet, o.settlements, washPairs);
    log(
      `built the chain: ${o.blocks} blocks of funding, ${o.settlements} settlements in blocks ${first}-${last}, ` +
        `${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    started = performance.now();
    const runs = [];
    for (const lookback of [0, o.blocks])
      runs.push(await indexOnce(devnet, first, last, lookback, o, washPairs));
    const levels = THRESHOLDS.fundingMaxHops - 1;
    // The default lookback, on a provider that answers whole filtered ranges (spans start at
    // HISTORY_FIRST_SPAN and grow to the lookback) and on one that caps them at --batch-blocks.
    const lookback = DEFAULT_FUNDING_LOOKBACK;
    const perLevel = {
      first: Math.ceil(lookback / HISTORY_FIRST_SPAN),
      grown: 1,
      capped: Math.ceil((lookback + o.batchBlocks) / o.batchBlocks),
    };
    const figures = {
      date: new Date().toISOString().slice(0, 10),
      machine: `${os.cpus()[0]?.model ?? "?"}, ${os.cpus().length} cores, Node ${process.version}`,
      fundingBlocks: o.blocks,
      settlements: o.settlements,
      blocks: `${first}-${last}`,
      batchBlocks: o.batchBlocks,
      concurrency: o.concurrency,
      runs,
      defaultLookback: { lookback, getLogsPerLevel: perLevel, levels },
      measureSeconds: round((performance.now() - started) / 1000),
    };
    for (const r of runs) {
      log(
        `--funding-lookback ${String(r.lookback).padEnd(7)} ${r.seconds} s, ${r.calls} calls in ${r.httpRequests} requests, ` +
          `${r.mb} MB; history: ${r.historyGetLogs} eth_getLogs, ${r.historyRows} rows; ${r.commits} commits; ` +
          `merchant_funded: ${r.flaggedTx} payments of the wash merchants, ${r.otherLinked} funded or ring elsewhere`,
      );
    }
    log(
      `at the default lookback (${lookback} blocks), a commit with new payers costs per level read (1-${levels} levels, ` +
        `500 new wallets a call): ${perLevel.first} eth_getLogs while the span grows, ${perLevel.grown} once grown; ` +
        `${perLevel.capped} on a provider that caps ranges at --batch-blocks ${o.batchBlocks}`,
    );
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  } finally {
    await devnet.stop();
  }
}

/** The funding of the buyers over `blocks` blocks; which merchant funded which buyer. */
async function buildFunding(devnet: Devnet, blocks: number): Promise<{ washPairs: [number, number][] }> {
  const buyers = devnet.buyers;
  const exchange = derive(20_000);
  const depositors = Array.from({ length: 60 }, (_, i) => derive(20_001 + i));
  const privates = Array.from({ length: 30 }, (_, i) => derive(21_000 + i));
  const washMerchants = Array.from({ length: 10 }, (_, i) => derive(10_000 + i));
  const washHops = Array.from({ length: 10 }, (_, i) => [derive(22_000 + i), derive(22_100 + i)] as const);
  const gas = [exchange, ...depositors, ...privates, ...washMerchants, ...washHops.flat()];
  for (const a of gas) await rpc(devnet.rpc, "anvil_setBalance", [a.address, "0x56bc75e2d63100000"]);
  await mint(
    devnet,
    [...depositors.map((d) => d.address), ...washMerchants.map((m) => m.address)],
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
    mined = await mineAll(devnet, await send());
  };
  const transfers = async (moves: [DevnetAccount, Address, bigint][]) => {
    const out: Hex[] = [];
    for (const [from, to, amount] of moves) out.push(await sendTransfer(devnet, from, to, amount));
    return out;
  };

  await at(0.05, () => transfers(depositors.map((d) => [d, exchange.address, 50n * USD])));
  await at(0.3, () =>
    transfers([
      ...privates.map((p): [DevnetAccount, Address, bigint] => [exchange, p.address, 20n * USD]),
      ...buyers.slice(0, 40).map((b): [DevnetAccount, Address, bigint] => [exchange, b.address, 10n * USD]),
    ]),
  );
  await at(0.6, () =>
    transfers(privates.map((p, i) => [p, (buyers[40 + i] as DevnetAccount).address, 10n * USD])),
  );
  await at(0.7, () =>
    transfers(washHops.map(([a], i) => [washMerchants[i] as DevnetAccount, a.address, 30n * USD])),
  );
  await at(0.8, () => transfers(washHops.map(([a, b]) => [a, b.address, 25n * USD])));
  await at(0.9, () =>
    transfers(washHops.map(([, b], i) => [b, (buyers[70 + i] as DevnetAccount).address, 20n * USD])),
  );
  await at(1, async () => []);
  return { washPairs: washMerchants.map((_, i) => [70 + i, i]) };
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
 * The settlements. Each buyer's first payment comes first, `FIRSTS_PER_BLOCK` a block and
 * `FIRSTS_GAP` blocks apart, so new payers reach the indexer over several batches as on a live chain;
 * a wash buyer's first payment goes to its funder. The rest follow, `PER_BLOCK` a block. Returns the
 * last block.
 */
async function settle(devnet: Devnet, count: number, washPairs: [number, number][]): Promise<number> {
  const merchants = Array.from({ length: MERCHANTS }, (_, i) => derive(10_000 + i).address);
  const funder = new Map(washPairs);
  let seed = 8453;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const orders = Array.from({ length: Math.max(count, BUYERS) }, (_, i) => {
    const buyer = i < BUYERS ? i : Math.floor(random() * BUYERS);
    const merchant =
      i < BUYERS ? (funder.get(i) ?? Math.floor(random() * MERCHANTS)) : Math.floor(random() * MERCHANTS);
    return {
      buyer: devnet.buyers[buyer] as DevnetAccount,
      payTo: merchants[merchant] as Address,
      amount: BigInt(1_000 + Math.floor(random() * 99) * 1_000),
    };
  });
  const nonce = Number(
    await rpc<string>(devnet.rpc, "eth_getTransactionCount", [devnet.facilitatorAccount.address, "pending"]),
  );
  const signed = await signSettlements(devnet.usdc, devnet.facilitatorAccount, nonce, orders);
  let last = 0;
  for (let i = 0; i < signed.length; ) {
    const size = i < BUYERS ? FIRSTS_PER_BLOCK : PER_BLOCK;
    const hashes = await sendRaw(
      devnet.rpc,
      signed.slice(i, i + size).map((s) => s.tx),
    );
    last = await mineAll(devnet, hashes);
    i += size;
    if (i < BUYERS) await rpc(devnet.rpc, "anvil_mine", [`0x${FIRSTS_GAP.toString(16)}`, "0x2"]);
  }
  return last;
}

async function indexOnce(
  devnet: Devnet,
  first: number,
  last: number,
  lookback: number,
  o: FundingBenchOptions,
  washPairs: [number, number][],
) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-bench-funding-"));
  const analytics = await Analytics.open({ dataDir: dir });
  let historyGetLogs = 0;
  const counting: typeof fetch = (input, init) => {
    const body = JSON.parse(String(init?.body)) as { method?: string; params?: [{ topics?: unknown[] }] };
    if (body.method === "eth_getLogs" && body.params?.[0]?.topics?.length === 3) historyGetLogs++;
    return fetch(input, init);
  };
  try {
    const t = performance.now();
    const summary = await runIndexer({
      analytics,
      rpc: { url: devnet.rpc, rps: 0, fetch: counting },
      registry: FacilitatorRegistry.base().withSigners([devnet.facilitatorAccount.address]),
      fromBlock: first,
      toBlock: last,
      batchBlocks: o.batchBlocks,
      concurrency: o.concurrency,
      fundingLookback: lookback,
    });
    const seconds = (performance.now() - t) / 1000;
    const service = new ReportService(analytics, { publicUrl: "https://bench.test" });
    // The wash merchants' buyers, and the money-link flags of any other merchant's (none expected: the
    // random buyers here look like probers to the screens, with or without the history).
    const wash = new Set(washPairs.map(([, m]) => m));
    let flaggedTx = 0;
    let otherLinked = 0;
    for (let m = 0; m < MERCHANTS; m++) {
      const { flags } = (await service.report(derive(10_000 + m).address.toLowerCase())).report;
      if (wash.has(m)) flaggedTx += flags.merchant_funded?.tx ?? 0;
      else otherLinked += (flags.merchant_funded?.tx ?? 0) + (flags.ring?.tx ?? 0);
    }
    return {
      lookback,
      seconds: round(seconds),
      calls: summary.rpc.calls,
      httpRequests: summary.rpc.httpRequests,
      mb: round(summary.rpc.bytes / 1e6),
      historyGetLogs,
      historyRows: summary.history,
      transfers: summary.transfers,
      payments: summary.payments,
      flaggedTx,
      otherLinked,
      commits: summary.batches,
    };
  } finally {
    analytics.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
