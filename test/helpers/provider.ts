/**
 * A JSON-RPC provider in front of anvil (beside rpc-proxy.ts, which misbehaves on demand: this one
 * behaves as a provider kind does), on 127.0.0.1, that counts what its clients cost it: HTTP
 * requests, calls (each call of a batch) and the bytes it answers. As `hosted`, it is a Base endpoint as
 * most are: `trace_*` and `debug_*` refused ("method not found", as geth answers) and `web3_clientVersion`
 * naming op-geth; otherwise it passes everything through, trace_filter included. `untimed` drops the logs'
 * `blockTimestamp`, as nodes before 2025 do. Used by the indexer's tests and `bench:index -- --cost`.
 *
 * `archive` (a USDC address) answers `balanceOf` at a past block from the token's Transfer logs, as an
 * archive node would from its state: a chain of millions of blocks mines fast only with anvil's
 * `--prune-history 0`, which keeps no old state. Those answers are counted like any call.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface RpcCost {
  httpRequests: number;
  calls: number;
  bytes: number;
  /** Calls by method. */
  methods: Record<string, number>;
  /** Every call, in order. */
  seen: { method: string; params: unknown[] }[];
}

export interface Provider {
  url: string;
  cost: RpcCost;
  reset(): void;
  close(): Promise<void>;
}

interface Call {
  jsonrpc: "2.0";
  id: number | string;
  method: string;
  params?: unknown[];
}

export const OP_GETH_VERSION = "op-geth/v1.101503.1-stable/linux-amd64/go1.23.4";

export async function startProvider(
  upstream: string,
  { hosted, untimed = false, archive }: { hosted: boolean; untimed?: boolean; archive?: string },
): Promise<Provider> {
  const cost: RpcCost = { httpRequests: 0, calls: 0, bytes: 0, methods: {}, seen: [] };
  const pastBalance = archive ? pastBalances(upstream, archive) : undefined;
  const local = (call: Call): object | undefined => {
    if (!hosted) return undefined;
    if (/^(trace|debug)_/.test(call.method))
      return {
        jsonrpc: "2.0",
        id: call.id,
        error: { code: -32601, message: `the method ${call.method} does not exist/is not available` },
      };
    if (call.method === "web3_clientVersion") return { jsonrpc: "2.0", id: call.id, result: OP_GETH_VERSION };
    return undefined;
  };
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Call | Call[];
    const calls = Array.isArray(body) ? body : [body];
    cost.httpRequests++;
    cost.calls += calls.length;
    for (const call of calls) {
      cost.methods[call.method] = (cost.methods[call.method] ?? 0) + 1;
      cost.seen.push({ method: call.method, params: call.params ?? [] });
    }
    const answered = new Map<Call, object | undefined>(calls.map((call) => [call, local(call)]));
    if (pastBalance)
      for (const call of calls) {
        const balance = answered.get(call) ? undefined : await pastBalance(call);
        if (balance !== undefined) answered.set(call, { jsonrpc: "2.0", id: call.id, result: balance });
      }
    const onward = calls.filter((call) => answered.get(call) === undefined);
    if (onward.length > 0) {
      const reply = await fetch(upstream, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(onward),
      });
      const replies = (await reply.json()) as { id: Call["id"]; result?: unknown }[];
      if (untimed)
        for (const r of replies)
          if (Array.isArray(r.result))
            for (const log of r.result as Record<string, unknown>[]) delete log.blockTimestamp;
      const byId = new Map(replies.map((r) => [r.id, r]));
      for (const call of onward) answered.set(call, byId.get(call.id));
    }
    const out = JSON.stringify(
      Array.isArray(body) ? calls.map((c) => answered.get(c)) : answered.get(calls[0] as Call),
    );
    cost.bytes += Buffer.byteLength(out);
    response.writeHead(200, { "content-type": "application/json" }).end(out);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cost,
    reset() {
      Object.assign(cost, { httpRequests: 0, calls: 0, bytes: 0, methods: {}, seen: [] });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

/**
 * `balanceOf` on `usdc` at numbered blocks, answered from the token's Transfer logs, fetched once and
 * then as far as each question needs (the chains these serve do not reorg).
 */
function pastBalances(upstream: string, usdc: string) {
  const moves: { block: number; from: string; to: string; value: bigint }[] = [];
  let fetchedTo = -1;
  // Requests arrive concurrently: one question at a time, so that no range is fetched twice.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = (call: Call): Promise<string | undefined> => {
    const answer = queue.then(() => answerOne(call));
    queue = answer.catch(() => {});
    return answer;
  };
  return serial;
  async function answerOne(call: Call): Promise<string | undefined> {
    const [tx, tag] = (call.params ?? []) as [{ to?: string; data?: string } | undefined, unknown];
    if (call.method !== "eth_call" || tx?.to?.toLowerCase() !== usdc.toLowerCase()) return undefined;
    if (!tx.data?.startsWith("0x70a08231") || typeof tag !== "string" || !/^0x[0-9a-f]+$/i.test(tag))
      return undefined;
    const block = Number(tag);
    if (block > fetchedTo) {
      const reply = await fetch(upstream, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "eth_getLogs",
          params: [
            {
              address: usdc,
              topics: [TRANSFER],
              fromBlock: `0x${(fetchedTo + 1).toString(16)}`,
              toBlock: tag,
            },
          ],
        }),
      });
      const answer = (await reply.json()) as {
        result: { blockNumber: string; topics: string[]; data: string }[];
      };
      for (const log of answer.result)
        moves.push({
          block: Number(log.blockNumber),
          from: `0x${log.topics[1]?.slice(26)}`,
          to: `0x${log.topics[2]?.slice(26)}`,
          value: BigInt(log.data),
        });
      fetchedTo = block;
    }
    const wallet = `0x${tx.data.slice(-40)}`.toLowerCase();
    let balance = 0n;
    for (const m of moves) {
      if (m.block > block) continue;
      if (m.to === wallet) balance += m.value;
      if (m.from === wallet) balance -= m.value;
    }
    return `0x${balance.toString(16).padStart(64, "0")}`;
  }
}
