/**
 * `index --rpc URL --chain solana`: Solana's x402 payments into the analytics store (docs/indexer.md, "Solana"):
 * `exact` (`decode.ts`), and `upto` and `batch-settlement` through the payment-channels program (`channels.ts`).
 *
 * Per known fee payer (the facilitators' registry, `solana-facilitators.json`, and any given with `--facilitator`),
 * `getSignaturesForAddress` pages back through its transactions, and `getTransaction` reads each that landed: one
 * call a payment, where an EVM chain reads hundreds in one `eth_getLogs`. Every read is at commitment `finalized`,
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
import { type ChannelPayment, channelMoves } from "./channels.ts";
import { type ParsedTransaction, type SolanaMove, usdcMoves } from "./decode.ts";

export interface SolanaIndexOptions {
  rpc: string;
  analytics: Analytics;
  registry: FacilitatorRegistry;
  /** Signatures asked for a page (the RPC's maximum is 1,000). */
  pageSize?: number;
  /** Read no payer's funding history (`--funding-lookback 0`). */
  skipFunding?: boolean;
  signal?: AbortSignal;
}

export interface SolanaIndexSummary {
  chain: typeof SOLANA_SLUG;
  slot: number;
  payments: number;
  transfers: number;
  calls: number;
  bytes: number;
}

const FINALIZED = { commitment: "finalized" } as const;

/** A JSON-RPC endpoint, counting the calls made and the bytes answered (the cost `bench:index --cost` reads). */
export class SolanaRpc {
  calls = 0;
  bytes = 0;
  private id = 0;
  constructor(
    private readonly url: string,
    private readonly signal?: AbortSignal,
  ) {}

  async call<T>(method: string, params: unknown[]): Promise<T> {
    this.calls++;
    const response = await fetch(this.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: ++this.id, method, params }),
      signal: this.signal,
    });
    const text = await response.text();
    this.bytes += Buffer.byteLength(text);
    if (!response.ok)
      throw new Error(`${method}: HTTP ${response.status} from the RPC: ${text.slice(0, 200)}`);
    const body = JSON.parse(text) as { result?: T; error?: { code: number; message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message} (${body.error.code})`);
    return body.result as T;
  }

  /** Every landed signature of `address` at or below the finalized slot, newest first, page by page. */
  async signatures(address: string, pageSize: number): Promise<string[]> {
    const out: string[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await this.call<{ signature: string; err: unknown }[]>("getSignaturesForAddress", [
        address,
        { ...FINALIZED, limit: pageSize, ...(before ? { before } : {}) },
      ]);
      for (const s of page) if (s.err === null) out.push(s.signature);
      if (page.length < pageSize) return out;
      before = page.at(-1)?.signature;
    }
  }

  transaction(signature: string): Promise<ParsedTransaction | null> {
    return this.call("getTransaction", [
      signature,
      { ...FINALIZED, encoding: "jsonParsed", maxSupportedTransactionVersion: 0 },
    ]);
  }
}

/** Reads the known fee payers' payments and their payers' funding, and imports them; see the module. */
export async function indexSolana(options: SolanaIndexOptions): Promise<SolanaIndexSummary> {
  const rpc = new SolanaRpc(options.rpc, options.signal);
  const pageSize = options.pageSize ?? 1_000;
  // The head first: everything read below is at or before it, so the checkpoint says the truth.
  const slot = await rpc.call<number>("getSlot", [FINALIZED]);
  // A skipped slot has no block and no time (-32007): the checkpoint is then the latest slot read that has one.
  const slotTime = await rpc.call<number | null>("getBlockTime", [slot]).catch(() => null);
  const read = await readFacilitators(rpc, options.registry, slot, pageSize);
  const { payments } = read;
  const funded = options.skipFunding ? [] : await funding(rpc, read, slot, pageSize);
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
  registry: FacilitatorRegistry,
  slot: number,
  pageSize: number,
): Promise<FacilitatorRead> {
  const out: FacilitatorRead = { payments: [], moves: [], payerAccounts: new Set() };
  const batchChannels = new Set<string>();
  for (const feePayer of registry.addresses()) {
    for (const signature of await rpc.signatures(feePayer, pageSize)) {
      const tx = await rpc.transaction(signature);
      if (!tx || tx.slot > slot || !tx.meta || tx.meta.err !== null || feePayerOf(tx) !== feePayer) continue;
      if (tx.blockTime === null)
        throw new Error(`transaction ${signature} has no blockTime: its slot cannot be dated`);
      // Only a payment the listed signer settled from its `since` on (a key listed later is not its payments).
      if (!registry.judge(feePayer, tx.blockTime).known) continue;
      const exact = usdcMoves(tx, SOLANA_USDC_MINT);
      out.payments.push(...exact);
      for (const m of exact) out.payerAccounts.add(m.source);
      const channels = channelMoves(tx, SOLANA_USDC_MINT);
      out.payments.push(...channels.payments);
      out.moves.push(...channels.moves);
      for (const account of channels.payerAccounts) out.payerAccounts.add(account);
      for (const channel of channels.batchChannels) batchChannels.add(channel);
    }
  }
  // A batch-settlement channel's cooperative close looks like upto's settlement; its open says what it is.
  for (const p of out.payments) if (p.channel && batchChannels.has(p.channel)) p.scheme = "batch-settlement";
  return out;
}

const feePayerOf = (tx: ParsedTransaction): string | undefined => {
  const key = tx.transaction.message.accountKeys[0];
  return typeof key === "string" ? key : key?.pubkey;
};

/**
 * Each payer's funding history: the USDC moved into the token accounts it paid or deposited from, at any depth,
 * by anyone but the rows already read (a payer's account also receives refunds and payouts; all are funding for
 * the screens).
 */
async function funding(
  rpc: SolanaRpc,
  read: FacilitatorRead,
  slot: number,
  pageSize: number,
): Promise<SolanaMove[]> {
  const seen = new Set([...read.payments, ...read.moves].map((p) => `${p.signature}:${p.index}`));
  const out: SolanaMove[] = [];
  for (const account of read.payerAccounts) {
    for (const signature of await rpc.signatures(account, pageSize)) {
      const tx = await rpc.transaction(signature);
      if (!tx || tx.slot > slot) continue;
      for (const move of usdcMoves(tx, SOLANA_USDC_MINT, { into: account })) {
        const key = `${move.signature}:${move.index}`;
        if (!seen.has(key)) {
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
