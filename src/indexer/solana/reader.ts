/**
 * `index --rpc URL --chain solana`: Solana's x402 payments into the analytics store (docs/indexer.md, "Solana"):
 * `exact` (`decode.ts`), and `upto` and `batch-settlement` through the payment-channels program (`channels.ts`).
 *
 * Per known fee payer (the facilitators' registry, `solana-facilitators.json`, and any given with `--facilitator`),
 * `getSignaturesForAddress` pages back through its transactions, and `getTransaction` reads each that landed once: one
 * call a payment (sent in JSON-RPC batches), where an EVM chain reads hundreds in one `eth_getLogs`. Every read is at commitment `finalized`,
 * which is the reorg depth: a finalized slot is never rolled back, so nothing read is ever read again differently.
 * Then each payer's funding history: the transactions of the token accounts it paid or deposited from, and the USDC
 * moved into them, for the provenance screens. What is read is written as Solana lines through the import
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
import { type ChannelPayment, type ChannelRead, channelMoves } from "./channels.ts";
import { moveOf, type ParsedTransaction, type SolanaMove, usdcLegs } from "./decode.ts";

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

/** What the reader keeps of a transaction that landed at or before the head: a few rows, not its JSON. */
interface Landed {
  feePayer: string | undefined;
  blockTime: number | null;
  /** Its top-level USDC moves: `exact`'s candidates (decode.ts). */
  exact: SolanaMove[];
  /** Every USDC move, at any depth: a payer's funding (a refund or a swap pays into its account by CPI). */
  all: SolanaMove[];
  channels: ChannelRead;
}

/**
 * Every transaction read, by signature: a payer's token account lists the payments it made among its own
 * signatures, and two payers' accounts can share a funding transaction, so each is read once.
 */
class Transactions {
  private readonly landed = new Map<string, Landed | null>();
  constructor(
    private readonly rpc: SolanaRpc,
    private readonly head: number,
  ) {}

  async read(signatures: Iterable<string>): Promise<void> {
    const fresh = [...new Set(signatures)].filter((s) => !this.landed.has(s));
    await this.rpc.transactions(fresh, (tx, i) => {
      // A transaction past the head is the next run's.
      this.landed.set(fresh[i] as string, tx && tx.slot <= this.head ? landedOf(tx) : null);
    });
  }

  of(signature: string): Landed | null {
    return this.landed.get(signature) ?? null;
  }
}

function landedOf(tx: ParsedTransaction): Landed | null {
  if (!tx.meta || tx.meta.err !== null) return null;
  const legs = usdcLegs(tx, SOLANA_USDC_MINT);
  return {
    feePayer: feePayerOf(tx),
    blockTime: tx.blockTime,
    exact: legs.filter((l) => l.parent === null).map(moveOf),
    all: legs.map(moveOf),
    channels: channelMoves(tx, SOLANA_USDC_MINT),
  };
}

const feePayerOf = (tx: ParsedTransaction): string | undefined => {
  const key = tx.transaction.message.accountKeys[0];
  return typeof key === "string" ? key : key?.pubkey;
};

/** Reads the known fee payers' payments and their payers' funding, and imports them; see the module. */
export async function indexSolana(options: SolanaIndexOptions): Promise<SolanaIndexSummary> {
  const rpc = new SolanaRpc(options.rpc, options.signal, options.batchSize);
  const pageSize = options.pageSize ?? 1_000;
  // The head first: everything read below is at or before it, so the checkpoint says the truth.
  const slot = await rpc.call<number>("getSlot", [FINALIZED]);
  // A skipped slot has no block and no time (-32007): the checkpoint is then the latest slot read that has one.
  const slotTime = await rpc.call<number | null>("getBlockTime", [slot]).catch(() => null);
  const txs = new Transactions(rpc, slot);
  const read = await readFacilitators(rpc, txs, options.registry, pageSize);
  const { payments } = read;
  const funded = options.skipFunding ? [] : await funding(rpc, txs, read, pageSize);
  const transfers = [...read.moves, ...funded];
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

/** A payment: `exact`'s (no scheme here) or a channel's payout leg (`channels.ts`). */
type Payment = SolanaMove & Partial<Pick<ChannelPayment, "scheme" | "channel">>;

interface FacilitatorRead {
  payments: Payment[];
  /** The channels' deposits and the legs of theirs that are no payment. */
  moves: SolanaMove[];
  /** The token accounts the payers paid from, or deposited into their channels from. */
  payerAccounts: Set<string>;
}

/**
 * Each known fee payer's transactions: the `exact` payments and the channels' rows of those it paid the fee for
 * from its `since` on. A transaction that only names a facilitator (a `distribute` whose rent payer it is, cranked
 * by someone else: the instruction is permissionless) is none of its: x402scan, too, counts only what a
 * facilitator signed.
 */
async function readFacilitators(
  rpc: SolanaRpc,
  txs: Transactions,
  registry: FacilitatorRegistry,
  pageSize: number,
): Promise<FacilitatorRead> {
  const out: FacilitatorRead = { payments: [], moves: [], payerAccounts: new Set() };
  const batchChannels = new Set<string>();
  const bySigner = await rpc.signatures(registry.addresses(), pageSize);
  await txs.read([...bySigner.values()].flat());
  for (const [feePayer, signatures] of bySigner) {
    for (const signature of signatures) {
      const tx = txs.of(signature);
      if (!tx || tx.feePayer !== feePayer) continue;
      if (tx.blockTime === null)
        throw new Error(`transaction ${signature} has no blockTime: its slot cannot be dated`);
      // Only a payment the listed signer settled from its `since` on (a key listed later is not its payments).
      if (!registry.judge(feePayer, tx.blockTime).known) continue;
      out.payments.push(...tx.exact);
      for (const m of tx.exact) out.payerAccounts.add(m.source);
      out.payments.push(...tx.channels.payments);
      out.moves.push(...tx.channels.moves);
      for (const account of tx.channels.payerAccounts) out.payerAccounts.add(account);
      for (const channel of tx.channels.batchChannels) batchChannels.add(channel);
    }
  }
  // A batch-settlement channel's cooperative close looks like upto's settlement; its open says what it is.
  for (const p of out.payments) if (p.channel && batchChannels.has(p.channel)) p.scheme = "batch-settlement";
  return out;
}

/**
 * Each payer's funding history: the USDC moved into the token accounts it paid or deposited from, at any depth,
 * by anyone but the rows already read (a payer's account also receives refunds and payouts; all are funding for
 * the screens). The payments among an account's signatures were read already.
 */
async function funding(
  rpc: SolanaRpc,
  txs: Transactions,
  read: FacilitatorRead,
  pageSize: number,
): Promise<SolanaMove[]> {
  const accounts = [...read.payerAccounts];
  const seen = new Set([...read.payments, ...read.moves].map((p) => `${p.signature}:${p.index}`));
  const byAccount = await rpc.signatures(accounts, pageSize);
  await txs.read([...byAccount.values()].flat());
  const out: SolanaMove[] = [];
  for (const account of accounts) {
    for (const signature of byAccount.get(account) ?? []) {
      for (const move of txs.of(signature)?.all ?? []) {
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

const paymentLine = (m: Payment) => ({
  type: "payment",
  ...onChain(m),
  facilitator: m.feePayer,
  payer: m.from,
  pay_to: m.to,
  amount: m.amount.toString(),
  asset: SOLANA_USDC_MINT,
  scheme: m.scheme ?? "exact",
  ...(m.channel && { transfer_method: "channel" }),
});

const transferLine = (m: SolanaMove) => ({
  type: "transfer",
  ...onChain(m),
  from: m.from,
  to: m.to,
  amount: m.amount.toString(),
});
