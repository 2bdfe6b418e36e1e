import http from "node:http";
import type { AddressInfo } from "node:net";
import { type Hex, pad } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import { BASE_USDC } from "../../src/chain/base.ts";
import { type Devnet, type DevnetAccount, derive } from "../../src/chain/devnet/index.ts";
import { FacilitatorRegistry } from "../../src/chain/facilitators.ts";
import { listCandidates } from "../../src/indexer/candidates.ts";
import { TRANSFER_TOPIC } from "../../src/indexer/decode.ts";
import { type IndexerEvent, type IndexerOptions, runIndexer } from "../../src/indexer/index.ts";
import { ReportService } from "../../src/reports/index.ts";
import { GENESIS, openTempAnalytics, type Snapshot, snapshot, startTestDevnet } from "../helpers/indexer.ts";
import { type Provider, startProvider } from "../helpers/provider.ts";
import { fundedAccount, mineAll, type Paid, rpc, Settler, sendTransfer } from "../helpers/settle.ts";

let devnet: Devnet;
let registry: FacilitatorRegistry;
let head: number;
let merchant: DevnetAccount;
const shop = derive(60).address;
let unknownSender: DevnetAccount;
let paid: Paid[];
let unknownPaid: Paid[];
let funding: Hex;
let unrelated: Hex;
const blockOf = new Map<string, number>();
const timeOf = new Map<number, number>();

beforeAll(async () => {
  devnet = await startTestDevnet({ buyers: 6 });
  registry = FacilitatorRegistry.base().withSigners([devnet.facilitatorAccount.address]);
  const [b0, b1, b2, b3, m, b5] = devnet.buyers as DevnetAccount[];
  merchant = m as DevnetAccount;
  unknownSender = await fundedAccount(devnet, derive(41));

  const facilitator = new Settler(devnet, devnet.facilitatorAccount);
  paid = await facilitator.settle([
    { buyer: b0 as DevnetAccount, payTo: merchant.address, amount: 1_250_000n },
    { buyer: b1 as DevnetAccount, payTo: merchant.address, amount: 2_500_000n },
    { buyer: b2 as DevnetAccount, payTo: shop, amount: 10_000_000n },
    { buyer: b0 as DevnetAccount, payTo: shop, amount: 1_234_000n },
  ]);
  await mineAll(
    devnet,
    paid.map((p) => p.tx),
  );
  unknownPaid = await new Settler(devnet, unknownSender).settle([
    { buyer: b3 as DevnetAccount, payTo: merchant.address, amount: 777_000n },
  ]);
  // The merchant sends money to one of its payers (kept: a funding edge); b5, who never pays
  // through x402, sends to a fresh wallet (not kept).
  funding = await sendTransfer(devnet, merchant, (b0 as DevnetAccount).address, 5_000_000n);
  unrelated = await sendTransfer(devnet, b5 as DevnetAccount, derive(70).address, 3_000_000n);
  await mineAll(devnet, [...unknownPaid.map((p) => p.tx), funding, unrelated]);
  await devnet.mine(3);
  head = Number(await rpc(devnet.rpc, "eth_blockNumber"));

  for (const tx of [...paid, ...unknownPaid].map((p) => p.tx).concat(funding)) {
    const receipt = await rpc<{ blockNumber: string }>(devnet.rpc, "eth_getTransactionReceipt", [tx]);
    blockOf.set(tx, Number(receipt.blockNumber));
  }
  for (const block of new Set(blockOf.values())) {
    const header = await rpc<{ timestamp: string }>(devnet.rpc, "eth_getBlockByNumber", [
      `0x${block.toString(16)}`,
      false,
    ]);
    timeOf.set(block, Number(header.timestamp));
  }
});
afterAll(() => devnet?.stop());

function index(analytics: Analytics, options: Partial<IndexerOptions> = {}) {
  return runIndexer({
    analytics,
    rpc: { url: devnet.rpc },
    registry,
    fromBlock: GENESIS + 1,
    toBlock: head,
    reorgDepth: 16,
    ...options,
  });
}

const iso = (unix: number) => new Date(unix * 1000);

/**
 * The rows of the chain indexed with whole blocks, which seven tests compare their way's rows with: indexed once
 * (the chain is fixed after beforeAll), where each indexed it into a new store of its own (issue 87 item 6).
 */
let byBlocks: Promise<Snapshot> | undefined;
function rowsByBlocks(): Promise<Snapshot> {
  byBlocks ??= (async () => {
    const analytics = await openTempAnalytics();
    try {
      await index(analytics, { senderStrategy: "block" });
      return await snapshot(analytics);
    } finally {
      analytics.close();
    }
  })();
  return byBlocks;
}

/**
 * A store indexed with the default options and that run's summary, which three tests only read: indexed once,
 * where each indexed a store of its own (issue 87 item 6). A test that writes (a report's build, a resume)
 * indexes its own.
 */
let byDefault: Promise<{ analytics: Analytics; summary: Awaited<ReturnType<typeof index>> }> | undefined;
function indexedByDefault() {
  byDefault ??= openTempAnalytics().then(async (analytics) => {
    try {
      return { analytics, summary: await index(analytics) };
    } catch (error) {
      analytics.close();
      throw error;
    }
  });
  return byDefault;
}
afterAll(async () => (await byDefault?.catch(() => undefined))?.analytics.close());

describe("indexer on a devnet", () => {
  it("stores the settlements of a known signer as payments, with exact amounts, times, payers and payees", async () => {
    const { analytics, summary } = await indexedByDefault();
    expect(summary).toMatchObject({ block: head, payments: 4, candidates: 1, stopped: "done", reorgs: 0 });
    const rows = await analytics.all(
      "SELECT tx_hash, block_number, block_time, facilitator, payer, pay_to, amount, asset FROM payments ORDER BY amount",
    );
    const expected = [...paid]
      .sort((a, b) => Number(a.amount - b.amount))
      .map((p) => ({
        tx_hash: p.tx,
        block_number: BigInt(blockOf.get(p.tx) as number),
        block_time: iso(timeOf.get(blockOf.get(p.tx) as number) as number),
        facilitator: devnet.facilitatorAccount.address.toLowerCase(),
        payer: p.payer,
        pay_to: p.payTo,
        amount: p.amount,
        asset: BASE_USDC,
      }));
    expect(rows).toEqual(expected);
    // The key is the Transfer log, which follows its AuthorizationUsed log.
    const keys = await analytics.all<{ log_index: number }>(
      "SELECT log_index FROM payments ORDER BY log_index",
    );
    expect(keys.every((k) => k.log_index % 2 === 1)).toBe(true);
    expect(
      (await analytics.all<{ address: string }>("SELECT address FROM merchants ORDER BY address")).map(
        (m) => m.address,
      ),
    ).toEqual([merchant.address.toLowerCase(), shop.toLowerCase()].sort());
    expect(await analytics.one("SELECT block_number, block_time FROM checkpoints")).toEqual({
      block_number: BigInt(head),
      block_time: iso(
        (timeOf.get(blockOf.get(funding) as number) as number) +
          2 * (head - (blockOf.get(funding) as number)),
      ),
    });
  });

  it("keeps a settlement sent by an unknown account as a facilitator candidate, not a payment", async () => {
    const { analytics } = await indexedByDefault();
    const [candidate] = unknownPaid;
    expect(
      await analytics.all(
        "SELECT tx_hash, sender, payer, pay_to, amount, reason FROM facilitator_candidates",
      ),
    ).toEqual([
      {
        tx_hash: candidate?.tx,
        sender: unknownSender.address.toLowerCase(),
        payer: candidate?.payer,
        pay_to: candidate?.payTo,
        amount: 777_000n,
        reason: "unknown_sender",
      },
    ]);
    expect(
      await analytics.one("SELECT count(*) AS n FROM payments WHERE tx_hash = $1", [candidate?.tx as string]),
    ).toEqual({
      n: 0n,
    });
    expect(await listCandidates(analytics, registry)).toEqual([
      expect.objectContaining({
        sender: unknownSender.address.toLowerCase(),
        settlements: 1,
        usdc: "0.777000",
        payers: 1,
        pay_tos: 1,
        reasons: ["unknown_sender"],
        registry: null,
      }),
    ]);
  });

  it("does not count mints as payments and keeps the transfers that touch a paying or paid wallet, or funded a payer", async () => {
    const { analytics } = await indexedByDefault();
    const bare = await openTempAnalytics();
    try {
      await index(bare, { fundingLookback: 0 });
      // The devnet funded the buyers with mints (Transfer from the zero address) in block GENESIS + 1, beside
      // each buyer's approval of Permit2 (an Approval log, not a Transfer).
      const mints = await rpc<unknown[]>(devnet.rpc, "eth_getLogs", [
        {
          address: BASE_USDC,
          topics: [TRANSFER_TOPIC, pad("0x0")],
          fromBlock: `0x${(GENESIS + 1).toString(16)}`,
          toBlock: `0x${(GENESIS + 1).toString(16)}`,
        },
      ]);
      expect(mints).toHaveLength(6);
      expect(
        await analytics.one("SELECT count(*) AS n FROM payments WHERE block_number = $1", [GENESIS + 1]),
      ).toEqual({ n: 0n });
      const rows = (a: Analytics) =>
        a.all<{ tx_hash: string; from_address: string; to_address: string; amount: bigint }>(
          "SELECT tx_hash, from_address, to_address, amount FROM transfers ORDER BY amount, to_address",
        );
      const kept = [
        // The candidate's settlement moved money to a merchant already paid through x402.
        {
          tx_hash: unknownPaid[0]?.tx,
          from_address: unknownPaid[0]?.payer,
          to_address: merchant.address.toLowerCase(),
          amount: 777_000n,
        },
        {
          tx_hash: funding,
          from_address: merchant.address.toLowerCase(),
          to_address: (devnet.buyers[0] as DevnetAccount).address.toLowerCase(),
          amount: 5_000_000n,
        },
      ];
      expect(await rows(bare)).toEqual(kept);
      // With the funding history, the mints that reached the three x402 payers before they first paid,
      // and b3's: it paid only through an unknown sender, a kept transfer into a paid merchant from a
      // wallet never seen in a payment, whose depositors are read once; not the merchant's or b5's.
      const payers = new Set([...paid.map((p) => p.payer), unknownPaid[0]?.payer as string]);
      expect(await rows(analytics)).toEqual([
        ...kept,
        ...[...payers].sort().map((payer) => ({
          tx_hash: expect.any(String),
          from_address: "0x0000000000000000000000000000000000000000",
          to_address: payer,
          amount: 1_000_000_000n,
        })),
      ]);
    } finally {
      bare.close();
    }
  });

  it("gives the report exactly what was paid: tx, usd and buyers over indexed data", async () => {
    const analytics = await openTempAnalytics();
    try {
      await index(analytics);
      const service = new ReportService(analytics, { publicUrl: "https://reports.test" });
      const m = await service.report(merchant.address.toLowerCase());
      expect(m.report).toMatchObject({
        tx: 2,
        usd: 3.75,
        buyers: 2,
        // The merchant later sent b0 more than b0 paid it: a ring, by the screens' rule.
        real_tx: 1,
        flags: { ring: { tx: 1, usd: 1.25 } },
        window: { end_block: head, complete: true },
      });
      const s = await service.report(shop.toLowerCase());
      expect(s.report).toMatchObject({ tx: 2, usd: 11.23, buyers: 2, paid: { median: 5.617 } });
      const board = await service.leaderboard();
      expect(board.merchants.map((e) => e.address)).toEqual([
        shop.toLowerCase(),
        merchant.address.toLowerCase(),
      ]);
    } finally {
      analytics.close();
    }
  });

  it("resumes from its checkpoint and never stores a payment twice", async () => {
    const analytics = await openTempAnalytics();
    try {
      await index(analytics, { toBlock: blockOf.get(paid[0]?.tx as string) });
      const first = await analytics.one<{ n: bigint }>("SELECT count(*) AS n FROM payments");
      expect(first?.n).toBe(4n);
      const again = await index(analytics);
      expect(again).toMatchObject({ payments: 0, candidates: 1 });
      const before = await snapshot(analytics);
      // Nothing left to do: a third run adds nothing and keeps every row.
      expect(await index(analytics)).toMatchObject({ payments: 0, candidates: 0, transfers: 0, batches: 0 });
      expect(await snapshot(analytics)).toEqual(before);
      expect(before.payments).toHaveLength(4);
    } finally {
      analytics.close();
    }
  });

  it("starts by default at the registry's first date, or the chain's first block when that is later", async () => {
    const analytics = await openTempAnalytics();
    try {
      const events: IndexerEvent[] = [];
      await index(analytics, { fromBlock: undefined, onEvent: (e) => events.push(e) });
      // The devnet's genesis is newer than any Base facilitator's start: indexing starts there.
      expect(events[0]).toMatchObject({ type: "start", from: GENESIS, resumed: false, txFrom: "trace" });
      expect(await analytics.one("SELECT count(*) AS n, min(block_number) AS first FROM payments")).toEqual({
        n: 4n,
        first: BigInt(blockOf.get(paid[0]?.tx as string) as number),
      });
    } finally {
      analytics.close();
    }
  });

  it("gives the same rows whatever the batch size, concurrency or way of fetching senders", async () => {
    const expected = await rowsByBlocks();
    for (const [senderStrategy, batchBlocks, concurrency] of [
      ["tx", 1, 3],
      ["trace", 2, 1],
      ["auto", 1000, 4],
    ] as const) {
      const other = await openTempAnalytics();
      try {
        await index(other, { senderStrategy, batchBlocks, concurrency });
        expect(await snapshot(other), senderStrategy).toEqual(expected);
      } finally {
        other.close();
      }
    }
  });

  /** Indexes with `options` and expects the rows read with full blocks. */
  async function expectSameRowsAsBlocks(options: Partial<IndexerOptions>): Promise<void> {
    const expected = await rowsByBlocks();
    const other = await openTempAnalytics();
    try {
      await index(other, options);
      expect(await snapshot(other)).toEqual(expected);
    } finally {
      other.close();
    }
  }

  it("reads senders by transaction hash where the node does not serve trace_filter", async () => {
    let refused = 0;
    // A node without trace_filter (geth-like): "method not found" to it, the rest passes through.
    const noFilter: typeof fetch = async (input, init) => {
      const body = JSON.parse(String(init?.body)) as
        | { id: number; method: string }
        | { id: number; method: string }[];
      const calls = Array.isArray(body) ? body : [body];
      if (!calls.some((c) => c.method === "trace_filter")) return fetch(input, init);
      refused++;
      const error = (c: { id: number }) => ({
        jsonrpc: "2.0",
        id: c.id,
        error: { code: -32601, message: "the method trace_filter does not exist/is not available" },
      });
      return Response.json(Array.isArray(body) ? calls.map(error) : error(calls[0] as { id: number }));
    };
    await expectSameRowsAsBlocks({
      senderStrategy: "trace",
      batchBlocks: 1,
      rpc: { url: devnet.rpc, fetch: noFilter },
    });
    // Asked once, then remembered as missing.
    expect(refused).toBe(1);
  });

  it("falls back to transactions by hash when trace_filter keeps failing (a long range timing out)", async () => {
    let failed = 0;
    const failing: typeof fetch = async (input, init) => {
      if (!String(init?.body).includes('"trace_filter"')) return fetch(input, init);
      failed++;
      return new Response("upstream timed out", { status: 503 });
    };
    const backoff = { baseMs: 1, maxMs: 2, attempts: 2 };
    await expectSameRowsAsBlocks({
      senderStrategy: "trace",
      batchBlocks: 1,
      rpc: { url: devnet.rpc, fetch: failing, backoff },
    });
    // Tried twice per batch, and asked again by the next batch: a failure is not a missing method.
    expect(failed).toBeGreaterThan(2);
    expect(failed % 2).toBe(0);
  });

  describe("by what the provider serves", () => {
    type Seen = Provider["cost"]["seen"];
    /** Runs `check` with a provider in front of the devnet (test/helpers/provider.ts), then closes it. */
    async function through(
      options: { hosted: boolean; untimed?: boolean },
      check: (provider: Provider) => Promise<void>,
    ) {
      const provider = await startProvider(devnet.rpc, options);
      try {
        await check(provider);
      } finally {
        await provider.close();
      }
    }
    const headerReads = (seen: Seen) =>
      seen
        .filter((c) => c.method === "eth_getBlockByNumber" && c.params[1] === false)
        .map((c) => Number(c.params[0]));
    const wholeReads = (seen: Seen) =>
      seen
        .filter((c) => c.method === "eth_getBlockByNumber" && c.params[1] === true)
        .map((c) => Number(c.params[0]));
    const byHash = (seen: Seen) =>
      seen.filter((c) => c.method === "eth_getTransactionByHash").map((c) => String(c.params[0]));
    const settlementBlocks = () => new Set([...paid, ...unknownPaid].map((p) => blockOf.get(p.tx) as number));

    it("reads senders by hash where trace_filter is not served, and block times from the logs", () =>
      through({ hosted: true }, async (provider) => {
        const events: IndexerEvent[] = [];
        await expectSameRowsAsBlocks({ rpc: { url: provider.url }, onEvent: (e) => events.push(e) });
        const { seen } = provider.cost;
        // auto asked for trace_filter once, was refused, and chose the way every node serves.
        expect(events[0]).toMatchObject({ type: "start", txFrom: "mixed" });
        expect(seen.filter((c) => c.method.startsWith("trace_"))).toHaveLength(1);
        // Each sender by hash, or with its whole block.
        for (const tx of [...paid, ...unknownPaid].map((p) => p.tx.toLowerCase()))
          expect(byHash(seen).includes(tx) || wholeReads(seen).includes(blockOf.get(tx) as number), tx).toBe(
            true,
          );
        // No settlement block's header: their times and hashes came with their logs (one batch: its ends
        // and the chain's head are the only headers read).
        expect(headerReads(seen).filter((n) => settlementBlocks().has(n))).toEqual([]);
      }));

    it("reads a block whole where settlements are most of it, and by hash where they are few", () =>
      through({ hosted: true }, async (provider) => {
        await expectSameRowsAsBlocks({ senderStrategy: "mixed", rpc: { url: provider.url } });
        // The first block: four settlements and nothing else.
        expect(wholeReads(provider.cost.seen)).toEqual([blockOf.get(paid[0]?.tx as string)]);
        // The second: one settlement beside two plain transfers (its logs show at least three transactions).
        expect(byHash(provider.cost.seen)).toEqual(unknownPaid.map((p) => p.tx.toLowerCase()));
      }));

    it("reads each settlement block's header where the logs carry no block time", () =>
      through({ hosted: true, untimed: true }, async (provider) => {
        await expectSameRowsAsBlocks({ senderStrategy: "tx", rpc: { url: provider.url } });
        for (const block of settlementBlocks()) expect(headerReads(provider.cost.seen)).toContain(block);
      }));

    it("asks trace_filter for the known signers' calls where it is served, and only unknown senders by hash", () =>
      through({ hosted: false }, async (provider) => {
        const events: IndexerEvent[] = [];
        await expectSameRowsAsBlocks({ rpc: { url: provider.url }, onEvent: (e) => events.push(e) });
        expect(events[0]).toMatchObject({ type: "start", txFrom: "trace" });
        expect(byHash(provider.cost.seen)).toEqual(unknownPaid.map((p) => p.tx.toLowerCase()));
        expect(wholeReads(provider.cost.seen)).toEqual([]);
      }));
  });

  it("reads the Base USDC listings of a discovery endpoint into the listings the report shows", async () => {
    const items = [
      {
        resource: "https://api.weather.test/forecast",
        type: "http",
        x402Version: 2,
        accepts: [
          {
            scheme: "exact",
            network: "eip155:8453",
            asset: BASE_USDC,
            amount: "1000",
            payTo: merchant.address,
            maxTimeoutSeconds: 60,
            extra: {},
          },
          {
            scheme: "exact",
            network: "eip155:84532",
            asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
            amount: "1000",
            payTo: merchant.address,
          },
        ],
        lastUpdated: "2026-11-20T10:00:00Z",
        description: "Seven-day forecast",
        extensions: { bazaar: { info: { input: { type: "http", method: "GET" } } } },
      },
      {
        resource: "https://api.weather.test/alerts",
        type: "http",
        x402Version: 1,
        accepts: [
          {
            scheme: "exact",
            network: "base",
            asset: BASE_USDC.toUpperCase().replace("0X", "0x"),
            maxAmountRequired: "25000",
            payTo: merchant.address,
            description: "Severe weather alerts",
            outputSchema: { input: { type: "http", method: "post" } },
          },
        ],
        lastUpdated: "2026-11-20T10:00:00Z",
      },
      // Not USDC on Base, not a web resource: ignored.
      {
        resource: "https://other.test/x",
        type: "http",
        accepts: [{ network: "eip155:1", asset: BASE_USDC, amount: "5", payTo: shop }],
      },
      {
        resource: "mcp:tool",
        type: "mcp",
        accepts: [{ network: "eip155:8453", asset: BASE_USDC, amount: "5", payTo: shop }],
      },
      {
        resource: "https://tools.shop.test/convert",
        type: "http",
        accepts: [{ scheme: "exact", network: "eip155:8453", asset: BASE_USDC, amount: "2000", payTo: shop }],
        lastUpdated: "2026-11-20T10:00:00Z",
      },
    ];
    const requests: string[] = [];
    const server = http.createServer((req, res) => {
      requests.push(req.url ?? "");
      const url = new URL(req.url ?? "/", "http://x");
      if (url.pathname !== "/discovery/resources") {
        res.writeHead(404).end();
        return;
      }
      const limit = Number(url.searchParams.get("limit"));
      const offset = Number(url.searchParams.get("offset"));
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          x402Version: 2,
          items: items.slice(offset, offset + Math.min(limit, 2)),
          pagination: { limit: 2, offset, total: items.length },
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const analytics = await openTempAnalytics();
    try {
      const { port } = server.address() as AddressInfo;
      const events: string[] = [];
      await index(analytics, {
        discovery: { url: `http://127.0.0.1:${port}/discovery/resources?type=http` },
        onEvent: (e) => events.push(e.type),
      });
      expect(events).toContain("listings");
      expect(requests).toEqual([
        "/discovery/resources?type=http&limit=100&offset=0",
        "/discovery/resources?type=http&limit=100&offset=2",
        "/discovery/resources?type=http&limit=100&offset=4",
      ]);
      expect(await analytics.all("SELECT * FROM listings ORDER BY resource")).toEqual([
        {
          pay_to: merchant.address.toLowerCase(),
          resource: "https://api.weather.test/alerts",
          method: "POST",
          price_usd: 0.025,
          description: "Severe weather alerts",
          host: "api.weather.test",
        },
        {
          pay_to: merchant.address.toLowerCase(),
          resource: "https://api.weather.test/forecast",
          method: "GET",
          price_usd: 0.001,
          description: "Seven-day forecast",
          host: "api.weather.test",
        },
        {
          pay_to: shop.toLowerCase(),
          resource: "https://tools.shop.test/convert",
          method: "",
          price_usd: 0.002,
          description: "",
          host: "tools.shop.test",
        },
      ]);
      const { report } = await new ReportService(analytics, { publicUrl: "https://r.test" }).report(
        merchant.address.toLowerCase(),
      );
      expect(report.name).toBe("api.weather.test");
      expect(report.bazaar_listings.map((l) => l.price_usd)).toEqual([0.001, 0.025]);
    } finally {
      analytics.close();
      server.close();
    }
  });
});
