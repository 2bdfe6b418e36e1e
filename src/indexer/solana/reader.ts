/**
 * `index --rpc URL --chain solana`: Solana's `exact` payments into the analytics store (docs/indexer.md, "Solana").
 *
 * Per known fee payer (the facilitators' registry, `solana-facilitators.json`, and any given with `--facilitator`),
 * `getSignaturesForAddress` pages back through its transactions, and `getTransaction` reads each that landed: one
 * call a payment, where an EVM chain reads hundreds in one `eth_getLogs`. Every read is at commitment `finalized`,
 * which is the reorg depth: a finalized slot is never rolled back, so nothing read is ever read again differently.
 * Then each payer's funding history: the transactions of the token accounts it paid from, and the USDC moved into
 * them, for the provenance screens. What is read is written as Solana lines through the import
 * (src/analytics/import.ts), so the store holds exactly what a file of the same lines gives, held by the same
 * checks, and a run over the same slots adds nothing; a checkpoint at the finalized slot read closes it.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Analytics } from "../../analytics/duckdb.ts";
import { importNdjson } from "../../analytics/import.ts";
import type { FacilitatorRegistry } from "../../chain/facilitators.ts";
import { SOLANA_SLUG, SOLANA_USDC_MINT } from "../../chain/solana/constants.ts";
import { chunk, mapPool } from "../pool.ts";
import { type ParsedTransaction, type SolanaMove, usdcMoves } from "./decode.ts";

export interface SolanaIndexOptions {
  rpc: string;
  analytics: Analytics;
  registry: FacilitatorRegistry;
  /** Signatures asked for a page (the RPC's maximum is 1,000). */
  pageSize?: number;
  /** Calls sent in one HTTP request, as a JSON-RPC batch (1: one call a request). */
  batchSize?: number;
  /** Read no payer's funding history (`--funding-lookback 0`). */
  skipFunding?: boolean;
  signal?: AbortSignal;
}

export interface SolanaIndexSummary {
  chain: typeof SOLANA_SLUG;
  slot: number;
  payments: number;
  transfers: number;
  /** JSON-RPC calls (each call of a batch), the HTTP requests that carried them, and the bytes answered. */
  calls: number;
  requests: number;
  bytes: number;
}

const FINALIZED = { commitment: "finalized" } as const;
/**
 * A batch of 100 `getTransaction` answers is about 0.5 MB; four in flight keep a remote RPC's round trips overlapped
 * without holding more than a few MB of answers at once.
 */
const DEFAULT_BATCH = 100;
const IN_FLIGHT = 4;

interface Call {
  method: string;
  params: unknown[];
}
interface Answer {
  id?: unknown;
  result?: unknown;
  error?: { code: number; message: string };
}

/**
 * A JSON-RPC endpoint, counting the calls made, the HTTP requests that carried them and the bytes answered (the cost
 * `bench:index -- --chain solana --cost` reads). Many calls go as JSON-RPC batches of `batchSize`, a few in flight:
 * the read is one call a transaction whatever is done, and a request a transaction would make its round trips the
 * reader's time. A provider that takes no batches answers one error object, not a list: from then on, one call a
 * request.
 */
export class SolanaRpc {
  calls = 0;
  requests = 0;
  bytes = 0;
  private id = 0;
  private batching: boolean;
  constructor(
    private readonly url: string,
    private readonly signal?: AbortSignal,
    private readonly batchSize = DEFAULT_BATCH,
  ) {
    this.batching = batchSize > 1;
  }

  async call<T>(method: string, params: unknown[]): Promise<T> {
    const answer = (await this.post({ jsonrpc: "2.0", id: ++this.id, method, params }, 1)) as Answer;
    return resultOf<T>(method, answer);
  }

  /** The answers of `calls`, in their order, each passed through `take` as its batch arrives. */
  async many<T, R>(calls: readonly Call[], take: (result: T, index: number) => R): Promise<R[]> {
    const size = this.batching ? this.batchSize : 1;
    const parts = await mapPool(chunk(calls, size), IN_FLIGHT, async (part, n) => {
      const results = await this.batch<T>(part);
      return results.map((r, i) => take(r, n * size + i));
    });
    return parts.flat();
  }

  private async batch<T>(calls: readonly Call[]): Promise<T[]> {
    if (calls.length > 1 && this.batching) {
      const requests = calls.map((c) => ({ jsonrpc: "2.0", id: ++this.id, ...c }));
      const answer = await this.post(requests, calls.length);
      if (Array.isArray(answer)) {
        const byId = new Map((answer as Answer[]).map((a) => [a.id, a]));
        return requests.map((r) => resultOf<T>(r.method, byId.get(r.id) ?? {}));
      }
      this.batching = false;
    }
    const out: T[] = [];
    for (const c of calls) out.push(await this.call<T>(c.method, c.params));
    return out;
  }

  private async post(body: unknown, calls: number): Promise<unknown> {
    this.calls += calls;
    this.requests++;
    const response = await fetch(this.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: this.signal,
    });
    const text = await response.text();
    this.bytes += Buffer.byteLength(text);
    if (!response.ok)
      throw new Error(`HTTP ${response.status} from the RPC (${calls} calls): ${text.slice(0, 200)}`);
    return JSON.parse(text);
  }

  /**
   * Every landed signature of each address at or below the finalized slot, newest first, page by page: the first
   * pages of all the addresses together, then the next pages of those that had a full one.
   */
  async signatures(addresses: readonly string[], pageSize: number): Promise<Map<string, string[]>> {
    const out = new Map(addresses.map((a) => [a, [] as string[]]));
    let open = addresses.map((address) => ({ address, before: undefined as string | undefined }));
    while (open.length > 0) {
      const next: typeof open = [];
      await this.many<{ signature: string; err: unknown }[], void>(
        open.map(({ address, before }) => ({
          method: "getSignaturesForAddress",
          params: [address, { ...FINALIZED, limit: pageSize, ...(before ? { before } : {}) }],
        })),
        (page, i) => {
          const { address } = open[i] as (typeof open)[number];
          const list = out.get(address) as string[];
          for (const s of page) if (s.err === null) list.push(s.signature);
          if (page.length === pageSize) next.push({ address, before: page.at(-1)?.signature });
        },
      );
      open = next;
    }
    return out;
  }

  /** Each transaction of `signatures` (null for one the node does not have), passed through `take`. */
  transactions<R>(
    signatures: readonly string[],
    take: (tx: ParsedTransaction | null, index: number) => R,
  ): Promise<R[]> {
    return this.many(
      signatures.map((signature) => ({
        method: "getTransaction",
        params: [signature, { ...FINALIZED, encoding: "jsonParsed", maxSupportedTransactionVersion: 0 }],
      })),
      take,
    );
  }
}

function resultOf<T>(method: string, answer: Answer): T {
  if (answer.error) throw new Error(`${method}: ${answer.error.message} (${answer.error.code})`);
  if (!("result" in answer)) throw new Error(`${method}: the RPC answered no result`);
  return answer.result as T;
}

/**
 * The USDC moves of every transaction read, by signature: a payer's token account lists the payments it made among
 * its own signatures, and two payers' accounts can share a funding transaction, so each is read once.
 */
class Transactions {
  private readonly moves = new Map<string, readonly SolanaMove[]>();
  constructor(
    private readonly rpc: SolanaRpc,
    private readonly head: number,
  ) {}

  async read(signatures: Iterable<string>): Promise<void> {
    const fresh = [...new Set(signatures)].filter((s) => !this.moves.has(s));
    await this.rpc.transactions(fresh, (tx, i) => {
      // A transaction past the head is the next run's.
      this.moves.set(fresh[i] as string, tx && tx.slot <= this.head ? usdcMoves(tx, SOLANA_USDC_MINT) : []);
    });
  }

  of(signature: string): readonly SolanaMove[] {
    return this.moves.get(signature) ?? [];
  }
}

/** Reads the known fee payers' payments and their payers' funding, and imports them; see the module. */
export async function indexSolana(options: SolanaIndexOptions): Promise<SolanaIndexSummary> {
  const rpc = new SolanaRpc(options.rpc, options.signal, options.batchSize);
  const pageSize = options.pageSize ?? 1_000;
  // The head first: everything read below is at or before it, so the checkpoint says the truth.
  const slot = await rpc.call<number>("getSlot", [FINALIZED]);
  // A skipped slot has no block and no time (-32007): the checkpoint is then the latest slot read that has one.
  const slotTime = await rpc.call<number | null>("getBlockTime", [slot]).catch(() => null);
  const read = new Transactions(rpc, slot);
  const bySigner = await rpc.signatures(options.registry.addresses(), pageSize);
  await read.read([...bySigner.values()].flat());
  const payments: SolanaMove[] = [];
  for (const [feePayer, signatures] of bySigner) {
    for (const signature of signatures) {
      const moves = read.of(signature).filter((m) => m.feePayer === feePayer);
      // Only a payment the listed signer settled from its `since` on (a key listed later is not its payments).
      if (moves.length > 0 && options.registry.judge(feePayer, moves[0]?.blockTime ?? 0).known)
        payments.push(...moves);
    }
  }
  const transfers = options.skipFunding ? [] : await funding(rpc, read, payments, pageSize);
  const latest = [...payments, ...transfers].reduce<SolanaMove | undefined>(
    (a, m) => (a === undefined || m.slot > a.slot ? m : a),
    undefined,
  );
  const head =
    slotTime !== null
      ? { block_number: slot, block_time: slotTime }
      : latest && { block_number: latest.slot, block_time: latest.blockTime };
  const lines = [
    ...payments.map((m) => paymentLine(m)),
    ...transfers.map((m) => transferLine(m)),
    ...(head ? [{ type: "checkpoint", chain: SOLANA_SLUG, ...head }] : []),
  ];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-solana-index-"));
  try {
    const file = path.join(dir, "solana.ndjson");
    fs.writeFileSync(
      file,
      lines
        .map((l) => JSON.stringify(l))
        .join("\n")
        .concat("\n"),
    );
    if (lines.length > 0) await importNdjson(options.analytics, file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return {
    chain: SOLANA_SLUG,
    slot,
    payments: payments.length,
    transfers: transfers.length,
    calls: rpc.calls,
    requests: rpc.requests,
    bytes: rpc.bytes,
  };
}

/**
 * Each payer's funding history: the USDC moved into the token accounts it paid from, by anyone but the payment's
 * own moves (a payer's account also receives refunds and payouts; all are funding for the screens). The payments
 * among an account's signatures were read already.
 */
async function funding(
  rpc: SolanaRpc,
  read: Transactions,
  payments: readonly SolanaMove[],
  pageSize: number,
): Promise<SolanaMove[]> {
  const accounts = [...new Set(payments.map((p) => p.source))];
  const seen = new Set(payments.map((p) => `${p.signature}:${p.index}`));
  const byAccount = await rpc.signatures(accounts, pageSize);
  await read.read([...byAccount.values()].flat());
  const out: SolanaMove[] = [];
  for (const account of accounts) {
    for (const signature of byAccount.get(account) ?? []) {
      for (const move of read.of(signature)) {
        const key = `${move.signature}:${move.index}`;
        if (move.destination === account && !seen.has(key)) {
          seen.add(key);
          out.push(move);
        }
      }
    }
  }
  return out;
}

const onChain = (m: SolanaMove) => ({
  chain: SOLANA_SLUG,
  tx_hash: m.signature,
  log_index: m.index,
  block_number: m.slot,
  block_time: m.blockTime,
});

const paymentLine = (m: SolanaMove) => ({
  type: "payment",
  ...onChain(m),
  facilitator: m.feePayer,
  payer: m.from,
  pay_to: m.to,
  amount: m.amount.toString(),
  asset: SOLANA_USDC_MINT,
  scheme: "exact",
});

const transferLine = (m: SolanaMove) => ({
  type: "transfer",
  ...onChain(m),
  from: m.from,
  to: m.to,
  amount: m.amount.toString(),
});
