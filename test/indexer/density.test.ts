import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import { type Devnet, type DevnetAccount, derive } from "../../src/chain/devnet/index.ts";
import { FacilitatorRegistry } from "../../src/chain/facilitators.ts";
import { type IndexerEvent, type IndexerOptions, runIndexer } from "../../src/indexer/index.ts";
import { openTempAnalytics, type Snapshot, snapshot, startTestDevnet } from "../helpers/indexer.ts";
import { type Provider, startProvider } from "../helpers/provider.ts";
import { fundedAccount, type Paid, rpc, Settler, sendRaw, Traffic } from "../helpers/settle.ts";

/**
 * Base-like blocks: x402 settlements among plain transfers, at the densities the indexer's way of reading
 * senders turns on (docs/indexer.md, "The rule"). Every way, through both kinds of provider, must find
 * the same payments and candidates.
 */
let devnet: Devnet;
let registry: FacilitatorRegistry;
let from: number;
let to: number;
let expected: Snapshot;
/** Block number -> the settlements in it. */
const blocks = new Map<string, { number: number; paid: Paid[] }>();

beforeAll(async () => {
  devnet = await startTestDevnet({ buyers: 8 });
  registry = FacilitatorRegistry.base().withSigners([devnet.facilitatorAccount.address]);
  const traffic = new Traffic(devnet, { senders: 40 });
  await traffic.fund();
  const facilitator = new Settler(devnet, devnet.facilitatorAccount);
  const stranger = new Settler(devnet, await fundedAccount(devnet, derive(41)));
  const buyers = devnet.buyers as DevnetAccount[];
  const orders = (n: number, offset = 0) =>
    Array.from({ length: n }, (_, i) => ({
      buyer: buyers[(i + offset) % buyers.length] as DevnetAccount,
      payTo: derive(10_000 + (i % 7)).address,
      amount: BigInt(1_000 * (1 + i + offset)),
    }));
  /** One block: `settle`'s settlements in the middle of `plain` transfers; checks it holds them all. */
  const block = async (name: string, plain: number, settle: () => Promise<Paid[]>) => {
    await sendRaw(devnet.rpc, await traffic.sign(Math.floor(plain / 2)));
    const paid = await settle();
    await sendRaw(devnet.rpc, await traffic.sign(plain - Math.floor(plain / 2)));
    await devnet.mine(1);
    const number = Number(await rpc(devnet.rpc, "eth_blockNumber"));
    const count = Number(
      await rpc(devnet.rpc, "eth_getBlockTransactionCountByNumber", [`0x${number.toString(16)}`]),
    );
    if (count !== plain + paid.length) throw new Error(`block ${name} holds ${count} transactions`);
    blocks.set(name, { number, paid });
  };
  from = Number(await rpc(devnet.rpc, "eth_blockNumber")) + 1;
  await block("one among 60", 59, () => facilitator.settle(orders(1)));
  await block("four and a stranger's among 60", 55, async () => [
    ...(await facilitator.settle(orders(4, 1))),
    ...(await stranger.settle(orders(1, 5))),
  ]);
  // 14 transfers, 32 settlements, 14 transfers: the logs show at least 46 transactions, 32 of them
  // settlements: most of the block.
  await block("32 among 60", 28, () => facilitator.settle(orders(32, 6)));
  // 84, 32, 84: the logs show at least 116 transactions, 32 of them settlements: a few.
  await block("32 among 200", 168, () => facilitator.settle(orders(32, 38)));
  await devnet.mine(2);
  to = Number(await rpc(devnet.rpc, "eth_blockNumber"));

  const reference = await openTempAnalytics();
  try {
    await index(reference, { senderStrategy: "block", rpc: { url: devnet.rpc } });
    expected = await snapshot(reference);
  } finally {
    reference.close();
  }
}, 120_000);
afterAll(async () => {
  await devnet?.stop();
});

function index(analytics: Analytics, options: Partial<IndexerOptions>) {
  return runIndexer({
    analytics,
    rpc: { url: devnet.rpc },
    registry,
    fromBlock: from,
    toBlock: to,
    reorgDepth: 4,
    fundingLookback: 0,
    ...options,
  });
}

/** Indexes through a provider of `kind`; expects the reference rows; returns what the provider saw. */
async function indexThrough(
  kind: { hosted: boolean; untimed?: boolean },
  options: Partial<IndexerOptions> = {},
): Promise<{ seen: Provider["cost"]["seen"]; strategy: unknown }> {
  const provider = await startProvider(devnet.rpc, kind);
  const analytics = await openTempAnalytics();
  try {
    const events: IndexerEvent[] = [];
    await index(analytics, { rpc: { url: provider.url }, onEvent: (e) => events.push(e), ...options });
    expect(await snapshot(analytics)).toEqual(expected);
    const start = events.find((e) => e.type === "start") as { txFrom: unknown };
    return { seen: provider.cost.seen, strategy: start.txFrom };
  } finally {
    analytics.close();
    await provider.close();
  }
}

const hashesIn = (name: string) => (blocks.get(name)?.paid ?? []).map((p) => p.tx.toLowerCase());
const numberOf = (name: string) => blocks.get(name)?.number as number;

describe("the indexer at Base-like densities", () => {
  it("finds every payment and the stranger's candidate in the reference rows", () => {
    expect(expected.payments).toHaveLength(1 + 4 + 32 + 32);
    expect(expected.candidates).toHaveLength(1);
  });

  it("without trace: reads thin blocks' settlements by hash and a block that is mostly settlements whole", async () => {
    const { seen, strategy } = await indexThrough({ hosted: true });
    expect(strategy).toBe("mixed");
    const whole = seen.filter((c) => c.method === "eth_getBlockByNumber" && c.params[1] === true);
    expect(whole.map((c) => Number(c.params[0]))).toEqual([numberOf("32 among 60")]);
    const byHash = new Set(
      seen.filter((c) => c.method === "eth_getTransactionByHash").map((c) => String(c.params[0])),
    );
    for (const name of ["one among 60", "four and a stranger's among 60", "32 among 200"])
      for (const tx of hashesIn(name)) expect(byHash.has(tx), `${name}: ${tx}`).toBe(true);
    expect(byHash.size).toBe(1 + 5 + 32);
  });

  it("with trace: one trace_filter for the known signer's settlements, the stranger's by hash", async () => {
    const { seen, strategy } = await indexThrough({ hosted: false });
    expect(strategy).toBe("trace");
    const stranger = hashesIn("four and a stranger's among 60").at(-1);
    expect(seen.filter((c) => c.method === "eth_getTransactionByHash").map((c) => c.params[0])).toEqual([
      stranger,
    ]);
    expect(seen.filter((c) => c.method === "eth_getBlockByNumber" && c.params[1] === true)).toEqual([]);
  });

  it("gives the same rows forced to each way, and where logs carry no block time", async () => {
    for (const senderStrategy of ["tx", "mixed", "trace"] as const)
      await indexThrough({ hosted: senderStrategy !== "trace", untimed: true }, { senderStrategy });
  });
});
