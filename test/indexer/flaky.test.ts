import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import { BlockTimeError } from "../../src/chain/block-clock.ts";
import { type Devnet, type DevnetAccount, derive } from "../../src/chain/devnet/index.ts";
import { FacilitatorRegistry } from "../../src/chain/facilitators.ts";
import { type IndexerOptions, RpcGaveUpError, runIndexer } from "../../src/indexer/index.ts";
import { GENESIS, openTempAnalytics, snapshot, startTestDevnet } from "../helpers/indexer.ts";
import { type ProxyAction, type ProxyRequest, seeded, startRpcProxy } from "../helpers/rpc-proxy.ts";
import { fundedAccount, mineAll, rpc, Settler, sendTransfer } from "../helpers/settle.ts";

let devnet: Devnet;
let registry: FacilitatorRegistry;
let head: number;
let settlementBlock: number;

beforeAll(async () => {
  devnet = await startTestDevnet({ buyers: 5 });
  registry = FacilitatorRegistry.base().withSigners([devnet.facilitatorAccount.address]);
  const buyers = devnet.buyers as DevnetAccount[];
  const merchants = [derive(80).address, derive(81).address, (buyers[4] as DevnetAccount).address];
  const facilitator = new Settler(devnet, devnet.facilitatorAccount);
  const stranger = new Settler(devnet, await fundedAccount(devnet, derive(42)));
  // 12 blocks of settlements, a candidate and a funding transfer now and then, empty blocks between.
  for (let round = 0; round < 12; round++) {
    const orders = Array.from({ length: 3 }, (_, i) => ({
      buyer: buyers[(round + i) % 4] as DevnetAccount,
      payTo: merchants[(round * 3 + i) % 3] as `0x${string}`,
      amount: BigInt(1_000 + round * 100 + i),
    }));
    const txs = (await facilitator.settle(orders)).map((p) => p.tx);
    if (round % 4 === 1)
      txs.push(
        ...(
          await stranger.settle([
            { buyer: buyers[0] as DevnetAccount, payTo: merchants[0] as `0x${string}`, amount: 42n },
          ])
        ).map((p) => p.tx),
      );
    if (round % 5 === 2)
      txs.push(
        await sendTransfer(devnet, buyers[4] as DevnetAccount, (buyers[1] as DevnetAccount).address, 7_000n),
      );
    await mineAll(devnet, txs);
    if (round === 0) settlementBlock = Number(await rpc(devnet.rpc, "eth_blockNumber"));
    await devnet.mine(2);
  }
  head = Number(await rpc(devnet.rpc, "eth_blockNumber"));
});
afterAll(() => devnet?.stop());

function index(analytics: Analytics, url: string, options: Partial<IndexerOptions> = {}) {
  return runIndexer({
    analytics,
    rpc: { url, timeoutMs: 500, backoff: { baseMs: 5, maxMs: 40, attempts: 40 } },
    registry,
    fromBlock: GENESIS + 1,
    toBlock: head,
    reorgDepth: 8,
    batchBlocks: 8,
    ...options,
  });
}

const calls = (request: ProxyRequest) => (Array.isArray(request.body) ? request.body : [request.body]);

describe("indexer against a misbehaving RPC", () => {
  it("ends with the same rows through dropped connections, delays, 429s, 5xx, timeouts and refused ranges", async () => {
    const random = seeded(402);
    const seen = { drop: 0, 429: 0, 503: 0, slow: 0, timeout: 0, range: 0, element: 0, missing: 0 };
    // The range refusals of four providers, in turn.
    const refusals: ((from: number, to: number) => ProxyAction)[] = [
      (from) => ({
        kind: "rpc-error",
        code: -32005,
        message: `query returned more than 10000 results. Try with this block range [0x${from.toString(16)}, 0x${(from + 1).toString(16)}].`,
      }),
      () => ({
        kind: "rpc-error",
        code: -32602,
        message:
          "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size",
      }),
      () => ({
        kind: "rpc-error",
        code: -32614,
        message: "eth_getLogs is limited to a 10,000 range",
        status: 413,
      }),
      (from, to) => ({
        kind: "rpc-error",
        code: -32602,
        message: `query exceeds max results 20000, retry with the range ${from}-${to}`,
      }),
    ];
    const proxy = await startRpcProxy(devnet.rpc, (request) => {
      const first = calls(request)[0];
      if (first?.method === "eth_getLogs") {
        const filter = first.params[0] as { fromBlock: string; toBlock: string };
        const from = Number(filter.fromBlock);
        const to = Number(filter.toBlock);
        if (to - from + 1 > 3) {
          seen.range++;
          return (refusals[seen.range % refusals.length] as (f: number, t: number) => ProxyAction)(from, to);
        }
      }
      const count = (fault: keyof typeof seen, action: ProxyAction) => {
        seen[fault]++;
        return action;
      };
      const batch = Array.isArray(request.body) && request.body.length > 1;
      if (batch && seen.element < 2) {
        // One call of a batch rate-limited, another answered null by a lagging node.
        return count("element", {
          kind: "forward",
          rewrite: (answer) => {
            const list = answer as { id: unknown; result?: unknown; error?: unknown }[];
            list[0] = {
              id: list[0]?.id,
              error: { code: -32005, message: "project ID request rate exceeded" },
            };
            if (list[1] && calls(request)[1]?.method === "eth_getBlockByNumber") {
              seen.missing++;
              list[1] = { id: list[1].id, result: null };
            }
            return list;
          },
        });
      }
      // Every fault once at the start, then at random.
      const r = request.index < 6 ? (request.index - 0.5) * 0.05 : random();
      if (r < 0) return { kind: "forward" };
      if (r < 0.05) return count("drop", { kind: "drop" });
      if (r < 0.1) return count(429, { kind: "status", status: 429, headers: { "retry-after": "0" } });
      if (r < 0.15) return count(503, { kind: "status", status: 503 });
      if (r < 0.2) return count("slow", { kind: "forward", delayMs: 100 });
      if (r < 0.25) return count("timeout", { kind: "forward", delayMs: 700 });
      return { kind: "forward" };
    });
    const direct = await openTempAnalytics();
    const flaky = await openTempAnalytics();
    try {
      await index(direct, devnet.rpc);
      const events: string[] = [];
      const summary = await index(flaky, proxy.url, { onEvent: (e) => events.push(e.type) });
      expect(summary.block).toBe(head);
      expect(summary.rpc.retries).toBeGreaterThan(5);
      expect(events).toContain("span");
      const [expected, actual] = [await snapshot(direct), await snapshot(flaky)];
      expect(actual).toEqual(expected);
      expect(expected.payments).toHaveLength(36);
      expect(expected.candidates).toHaveLength(3);
      for (const [fault, count] of Object.entries(seen)) expect(count, fault).toBeGreaterThan(0);
    } finally {
      direct.close();
      flaky.close();
      await proxy.close();
    }
  });

  it("gives up with a clear error after a bounded number of attempts", async () => {
    const proxy = await startRpcProxy(devnet.rpc, () => ({ kind: "status", status: 503 }));
    const analytics = await openTempAnalytics();
    try {
      const run = index(analytics, proxy.url, {
        rpc: { url: proxy.url, backoff: { baseMs: 1, maxMs: 5, attempts: 4 } },
      });
      await expect(run).rejects.toThrow(RpcGaveUpError);
      await expect(run).rejects.toThrow(/the RPC failed 4 times in a row, last: eth_chainId: HTTP 503/);
    } finally {
      analytics.close();
      await proxy.close();
    }
  });

  it("refuses a header whose time breaks Base's 2 s rule, or that disagrees with its logs, and stores nothing of it", async () => {
    for (const lie of ["header", "log"] as const) {
      const proxy = await startRpcProxy(devnet.rpc, (request) => ({
        kind: "forward",
        rewrite: (answer) => {
          const list = Array.isArray(answer) ? answer : [answer];
          const methods = calls(request);
          list.forEach((a, i) => {
            const result = (a as { result?: unknown }).result;
            if (lie === "header" && methods[i]?.method === "eth_getBlockByNumber") {
              const block = result as { number?: string; timestamp: string } | null;
              if (block && Number(block.number) === settlementBlock) {
                block.timestamp = `0x${(Number(block.timestamp) + 1).toString(16)}`;
              }
            }
            if (lie === "log" && methods[i]?.method === "eth_getLogs") {
              for (const log of result as { blockNumber: string; blockTimestamp?: string }[]) {
                if (Number(log.blockNumber) === settlementBlock && log.blockTimestamp) {
                  log.blockTimestamp = `0x${(Number(log.blockTimestamp) - 2).toString(16)}`;
                }
              }
            }
          });
          return answer;
        },
      }));
      const analytics = await openTempAnalytics();
      try {
        await expect(index(analytics, proxy.url, { batchBlocks: 1 })).rejects.toThrow(BlockTimeError);
        const stored = await analytics.one<{ block: bigint | null }>(
          "SELECT max(block_number) AS block FROM checkpoints",
        );
        expect(Number(stored?.block)).toBe(settlementBlock - 1);
        expect(await analytics.one("SELECT count(*) AS n FROM payments")).toEqual({ n: 0n });
      } finally {
        analytics.close();
        await proxy.close();
      }
    }
  });
});
