/**
 * CCTP read from the chains (src/indexer/cctp-logs.ts, bridge-messages.ts): Base and Arbitrum One played on two
 * devnets, each with stand-ins of Circle's v1 and v2 contracts that log exactly as Circle's do. A merchant's
 * takings burned on Base (v1) are minted on Arbitrum to a wallet of its own, which burns them back (v2) to fresh
 * wallets on Base, which spend them at the merchant. Both chains indexed into one store hold the sides of
 * every message the import would make of the same events, and the screens follow the merchant's money through
 * the bridge and back, as they do the imported week (test/reports/provenance/bridges.test.ts).
 */
import type { Address, Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import { importNdjson } from "../../src/analytics/import.ts";
import { ARBITRUM_RECORD, BASE_RECORD, type ChainRecord } from "../../src/chain/chains.ts";
import { type Devnet, type DevnetAccount, derive } from "../../src/chain/devnet/index.ts";
import { FacilitatorRegistry } from "../../src/chain/facilitators.ts";
import { type IndexerSummary, runIndexer } from "../../src/indexer/index.ts";
import {
  type Burn,
  burn,
  type CctpChain,
  deployCctp,
  deploymentOf,
  eventOf,
  linkCctp,
  mint,
} from "../helpers/cctp.ts";
import { ndjsonFile } from "../helpers/data.ts";
import { GENESIS, openTempAnalytics, startTestDevnet } from "../helpers/indexer.ts";
import { type ProxyRequest, startRpcProxy } from "../helpers/rpc-proxy.ts";
import { listing } from "../helpers/scenarios.ts";
import { fundedAccount, mineAll, rpc, Settler } from "../helpers/settle.ts";
import { windowFlags } from "../helpers/window-flags.ts";

const USD = 1_000_000n;
const ZERO = "0x0000000000000000000000000000000000000000";
const ZERO_NONCE = `0x${"0".repeat(64)}`;

let base: Devnet;
let arb: Devnet;
let onBase: CctpChain;
let onArb: CctpChain;
/** The merchant on Base, its wallet on Arbitrum, the fresh wallets it pays back on Base, and a stranger. */
const merchant = derive(110);
const away = derive(111);
const fresh = [112, 113, 114].map((i) => derive(i));
const stranger = derive(115);
/** Every burn and mint, in the order they happened, as the test sent them. */
const sides: {
  chain: CctpChain;
  side: "burn" | "mint";
  burn: Burn;
  receipt: Burn["receipt"];
  nonce: string;
}[] = [];
let analytics: Analytics;
const summaries: IndexerSummary[] = [];

const lower = (a: string) => a.toLowerCase() as Address;
const headOf = async (d: Devnet) => Number(await rpc<string>(d.rpc, "eth_blockNumber"));
const timeOfBlock = async (d: Devnet, n: bigint | number) =>
  Number(
    (await rpc<{ timestamp: string }>(d.rpc, "eth_getBlockByNumber", [`0x${n.toString(16)}`, false]))
      .timestamp,
  );

async function bridge(
  from: CctpChain,
  to: CctpChain,
  who: DevnetAccount,
  order: Omit<Parameters<typeof burn>[2], "to">,
  fee?: bigint,
): Promise<void> {
  const b = await burn(from, who, { ...order, to: to.domain });
  const m = await mint(to, to.devnet.owner, b, { fee });
  sides.push({ chain: from, side: "burn", burn: b, receipt: b.receipt, nonce: m.nonce });
  sides.push({ chain: to, side: "mint", burn: b, receipt: m.receipt, nonce: m.nonce });
}

/** The chain's record, its CCTP contracts those of the devnet's stand-ins. */
const recordOf = (chain: CctpChain, record: ChainRecord): ChainRecord => ({
  ...record,
  cctp: deploymentOf(chain),
});

beforeAll(async () => {
  [base, arb] = await Promise.all([
    startTestDevnet({ buyers: 1 }),
    startTestDevnet({ chain: ARBITRUM_RECORD, buyers: 1 }),
  ]);
  [onBase, onArb] = await Promise.all([
    deployCctp(base, 6, derive(120).address),
    deployCctp(arb, 3, derive(121).address),
  ]);
  await linkCctp(onBase, onArb);
  await fundedAccount(base, merchant);
  await fundedAccount(arb, away);
  // The merchant's takings: $4.50 from a buyer through x402.
  const buyer = base.buyers[0] as DevnetAccount;
  const settler = new Settler(base, base.facilitatorAccount);
  const paid = await settler.settle(
    [1, 2, 3].map(() => ({ buyer, payTo: merchant.address, amount: 1_500_000n })),
  );
  await mineAll(
    base,
    paid.map((p) => p.tx),
  );
  // Out through v1 to its wallet on Arbitrum, back through v2 to fresh wallets on Base ($1 each, one with a
  // hook's data), and $0.50 to a stranger, of which Circle's attesters take a fee.
  await bridge(onBase, onArb, merchant, { version: 1, amount: 4_500_000n, recipient: away.address });
  for (const [i, w] of fresh.entries()) {
    await bridge(onArb, onBase, away, {
      version: 2,
      amount: USD,
      recipient: w.address,
      maxFee: 1_000n,
      ...(i === 1 && { hookData: "0xdeadbeef" as Hex }),
    });
  }
  await bridge(
    onArb,
    onBase,
    away,
    { version: 2, amount: 500_000n, recipient: stranger.address, maxFee: 10_000n },
    5_000n,
  );
  // The fresh wallets spend what came back at the merchant: 20 payments of $0.05 each.
  const spends = await settler.settle(
    fresh.flatMap((w) =>
      Array.from({ length: 20 }, () => ({ buyer: w, payTo: merchant.address, amount: 50_000n })),
    ),
  );
  await mineAll(
    base,
    spends.map((p) => p.tx),
  );

  analytics = await openTempAnalytics();
  for (const [chain, record] of [
    [onBase, BASE_RECORD],
    [onArb, ARBITRUM_RECORD],
  ] as const) {
    summaries.push(
      await runIndexer({
        analytics,
        rpc: { url: chain.devnet.rpc },
        registry: FacilitatorRegistry.forChain(record).withSigners([chain.devnet.facilitatorAccount.address]),
        chain: recordOf(chain, record),
        fromBlock: GENESIS + 1,
        toBlock: await headOf(chain.devnet),
      }),
    );
  }
}, 240_000);
afterAll(async () => {
  analytics?.close();
  await Promise.all([base?.stop(), arb?.stop()]);
});

/**
 * The `bridge_message` lines a user would write of the events the test sent (docs/import.md), read from the
 * receipts with viem's ABI decoder: a burn keyed by its `DepositForBurn`, a mint by its `MintAndWithdraw`.
 */
async function linesOf(chain: CctpChain): Promise<object[]> {
  const slug = chain === onBase ? "base" : "arbitrum";
  const out: object[] = [];
  for (const s of sides.filter((x) => x.chain === chain)) {
    const v = s.burn.version;
    const messenger = chain[v === 1 ? "v1" : "v2"].tokenMessenger;
    const messengerName = v === 1 ? "CctpTokenMessengerV1" : "CctpTokenMessengerV2";
    const at = {
      type: "bridge_message",
      chain: slug,
      tx_hash: s.receipt.transactionHash,
      block_number: Number(s.receipt.blockNumber),
      block_time: new Date((await timeOfBlock(chain.devnet, s.receipt.blockNumber)) * 1000).toISOString(),
    };
    if (s.side === "burn") {
      const d = eventOf(s.receipt, messengerName, messenger, "DepositForBurn");
      out.push({
        ...at,
        log_index: d.logIndex,
        side: "burn",
        source_domain: chain.domain,
        destination_domain: d.args.destinationDomain,
        // v2's burn carries no nonce on its own chain: the zero its message holds.
        nonce: v === 1 ? String(d.args.nonce) : ZERO_NONCE,
        sender: d.args.depositor,
        recipient: `0x${(d.args.mintRecipient as string).slice(26)}`,
        amount: String(d.args.amount),
      });
    } else {
      const m = eventOf(s.receipt, messengerName, messenger, "MintAndWithdraw");
      const r = eventOf(
        s.receipt,
        v === 1 ? "CctpMessageTransmitterV1" : "CctpMessageTransmitterV2",
        chain[v === 1 ? "v1" : "v2"].messageTransmitter,
        "MessageReceived",
      );
      out.push({
        ...at,
        log_index: m.logIndex,
        side: "mint",
        source_domain: r.args.sourceDomain,
        destination_domain: chain.domain,
        nonce: typeof r.args.nonce === "bigint" ? String(r.args.nonce) : r.args.nonce,
        // The burn's body names the depositor: messageSender, bytes 100 to 132.
        sender: `0x${(r.args.messageBody as string).slice(2 + 200 + 24, 2 + 264)}`,
        recipient: m.args.mintRecipient,
        amount: String(m.args.amount),
      });
    }
  }
  return out;
}

const rowsOf = (a: Analytics) =>
  a.all<Record<string, unknown>>(
    `SELECT chain, tx_hash, log_index, block_number, epoch(block_time)::BIGINT AS t, side, source_domain,
       destination_domain, nonce, sender, recipient, amount FROM bridge_messages ORDER BY chain, block_number, log_index`,
  );

/** What the screens flag of the fresh wallets' spend at the merchant, over the Base devnet's blocks. */
async function flaggedShare(store: Analytics): Promise<number> {
  const end = summaries[0]?.block as number;
  const [startTime, endTime] = [await timeOfBlock(base, GENESIS), await timeOfBlock(base, end)];
  const flags = await windowFlags(store, undefined, {
    chain: BASE_RECORD,
    startBlock: GENESIS,
    endBlock: end,
    firstDate: new Date(startTime * 1000).toISOString().slice(0, 10),
    startTime: startTime * 1000,
    endTime: endTime * 1000,
  });
  const f = flags({ wallets: fresh.map((w) => lower(w.address)), merchant: lower(merchant.address) });
  expect(f.paid).toBe(3_000_000);
  return f.flagged / f.paid;
}

/** Base's blocks indexed into a fresh store through a proxy: the calls made, by method, and the logs' answers' size. */
async function indexBase(record: ChainRecord) {
  const calls = new Map<string, number>();
  let logBytes = 0;
  const proxy = await startRpcProxy(base.rpc, ({ body }: ProxyRequest) => {
    const all = Array.isArray(body) ? body : [body];
    for (const c of all) calls.set(c.method, (calls.get(c.method) ?? 0) + 1);
    const logs = all.some((c) => c.method === "eth_getLogs");
    return {
      kind: "forward",
      ...(logs && {
        rewrite: (answer: unknown) => {
          logBytes += JSON.stringify(answer).length;
          return answer;
        },
      }),
    };
  });
  const store = await openTempAnalytics();
  try {
    const summary = await runIndexer({
      analytics: store,
      rpc: { url: proxy.url },
      registry: FacilitatorRegistry.forChain(BASE_RECORD).withSigners([base.facilitatorAccount.address]),
      chain: record,
      fromBlock: GENESIS + 1,
      toBlock: summaries[0]?.block as number,
      batchBlocks: 4,
      concurrency: 1,
    });
    return { calls: Object.fromEntries([...calls].sort()), logBytes, summary };
  } finally {
    store.close();
    await proxy.close();
  }
}

describe("CCTP's burns and mints indexed from two chains", () => {
  it("stores every side of every message as the import stores the same events' lines", async () => {
    expect(summaries.map((s) => s.bridges)).toEqual([1 + 4, 1 + 4]);
    const indexed = await rowsOf(analytics);
    expect(indexed).toHaveLength(10);
    const imported = await openTempAnalytics();
    try {
      for (const chain of [onBase, onArb]) await importNdjson(imported, ndjsonFile(await linesOf(chain)));
      expect(indexed).toEqual(await rowsOf(imported));
    } finally {
      imported.close();
    }
    // The v1 message is one nonce on both chains; v2's mints carry the nonce the attesters gave.
    const byKey = (chain: string, side: string) =>
      indexed.filter((r) => r.chain === chain && r.side === side);
    expect(byKey("base", "burn")[0]?.nonce).toBe(byKey("arbitrum", "mint")[0]?.nonce);
    expect(byKey("base", "mint").map((r) => r.nonce)).toEqual(
      sides.filter((s) => s.side === "mint" && s.chain === onBase).map((s) => s.nonce),
    );
    expect(byKey("arbitrum", "burn").every((r) => r.nonce === ZERO_NONCE)).toBe(true);
    // v2's mint is what the recipient got: the stranger's $0.50 less the $0.005 fee.
    expect(indexed.find((r) => r.recipient === lower(stranger.address) && r.side === "mint")?.amount).toBe(
      495_000n,
    );
  }, 60_000);

  it("keeps the transfers the screens read the messages through: the merchant's burn and the wallets' mints", async () => {
    const transfers = await analytics.all<{ from_address: string; to_address: string; amount: bigint }>(
      "SELECT from_address, to_address, amount FROM transfers WHERE chain = 'base' ORDER BY block_number, log_index",
    );
    expect(transfers).toEqual(
      expect.arrayContaining([
        { from_address: lower(merchant.address), to_address: onBase.minter, amount: 4_500_000n },
        ...fresh.map((w) => ({ from_address: ZERO, to_address: lower(w.address), amount: USD })),
      ]),
    );
  });

  it("reads the bridge on the batches' own eth_getLogs: not one call more per block range", async () => {
    const without = await indexBase({ ...BASE_RECORD, cctp: undefined });
    const withCctp = await indexBase(recordOf(onBase, BASE_RECORD));
    expect(without.summary.bridges).toBe(0);
    expect(withCctp.summary.bridges).toBe(5);
    expect(withCctp.calls).toEqual(without.calls);
    // Only the answers grow, by the bridge's own logs (about 2 KB of JSON a side here: its two logs).
    expect(withCctp.logBytes).toBeGreaterThan(without.logBytes);
  }, 60_000);

  it("lets the screens follow the merchant's money through the bridge and back, as the imported messages do", async () => {
    await importNdjson(analytics, ndjsonFile([listing(lower(merchant.address), "item", 0.05)]));
    expect(await flaggedShare(analytics)).toBe(1);
    // Without the messages, the mints are money of unknown origin.
    await analytics.run("DELETE FROM bridge_messages");
    expect(await flaggedShare(analytics)).toBe(0);
    // The same events' lines, imported, give what the indexed messages gave.
    for (const chain of [onBase, onArb]) await importNdjson(analytics, ndjsonFile(await linesOf(chain)));
    expect(await flaggedShare(analytics)).toBe(1);
  }, 60_000);
});
