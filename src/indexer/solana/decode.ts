/**
 * Solana's `exact` payments read from a transaction as `getTransaction` gives it (`encoding: "jsonParsed"`), the
 * way x402's SVM scheme settles them (`specs/schemes/exact/scheme_exact_svm.md`): the buyer's transaction holds one
 * SPL Token (or Token-2022) `TransferChecked` of the mint, and its fee payer (the first account key, the first
 * signer) is the facilitator. The buyer and the merchant are the owners of the token accounts the USDC moved between,
 * read from the transaction's own `preTokenBalances`/`postTokenBalances` (`owner`): never the token accounts.
 *
 * Every move of the mint is numbered, which is its `log_index`: a top-level instruction by its index, then the
 * inner instructions (the ones programs ran by CPI) after all of them, in the order the meta lists them, an SPL
 * Token `Batch` counting once for each instruction it runs. So a payment channel's payouts, which its program makes
 * by CPI (`channels.ts`), each have a number of their own, and the same transaction read twice numbers them alike.
 */

import { base58Bytes } from "../../chain/solana/base58.ts";
import { SPL_TOKEN_PROGRAM, TOKEN_2022_PROGRAM } from "../../chain/solana/constants.ts";

/** What the indexer keeps of one move of USDC: its number in the transaction is its `log_index`. */
export interface SolanaMove {
  signature: string;
  index: number;
  slot: number;
  blockTime: number;
  feePayer: string;
  /** The token accounts, and their owners. */
  source: string;
  destination: string;
  from: string;
  to: string;
  amount: bigint;
}

/** An instruction as jsonParsed gives it: parsed (`program`, `parsed`) for the programs the RPC knows, else raw. */
export interface ParsedInstruction {
  programId?: string;
  program?: string;
  /** An object for most programs; a string for the Memo program. */
  parsed?: unknown;
  accounts?: string[];
  data?: string;
}
interface TokenBalance {
  accountIndex: number;
  mint: string;
  owner?: string;
}
/** The part of a `jsonParsed` transaction the indexer reads. */
export interface ParsedTransaction {
  slot: number;
  blockTime: number | null;
  meta: {
    err: unknown;
    preTokenBalances?: TokenBalance[];
    postTokenBalances?: TokenBalance[];
    innerInstructions?: { index: number; instructions: ParsedInstruction[] }[] | null;
  } | null;
  transaction: {
    signatures: string[];
    message: { accountKeys: ({ pubkey: string } | string)[]; instructions: ParsedInstruction[] };
  };
}

/** A move of the mint at any depth: `parent` is the top-level instruction that ran it, null when it is one. */
export interface UsdcLeg extends SolanaMove {
  parent: number | null;
}

interface Transfer {
  source: string;
  destination: string;
  amount: bigint;
  /** Named by `TransferChecked`; a plain `Transfer` names none. */
  mint?: string;
}

const TOKEN_PROGRAM_NAMES = new Set(["spl-token", "spl-token-2022"]);
const TOKEN_PROGRAM_IDS = new Set([SPL_TOKEN_PROGRAM, TOKEN_2022_PROGRAM]);
const TRANSFER = 3;
const TRANSFER_CHECKED = 12;
const BATCH = 255;
const keyOf = (k: { pubkey: string } | string) => (typeof k === "string" ? k : k.pubkey);
const record = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};

/** The transfer a parsed token instruction (or one inside a parsed `batch`) makes, if it is one. */
function parsedTransfer(parsed: unknown): Transfer | null {
  const { type, info } = record(parsed);
  if (type !== "transferChecked" && type !== "transfer") return null;
  const fields = record(info);
  const amount = record(fields.tokenAmount).amount ?? fields.amount;
  if (typeof fields.source !== "string" || typeof fields.destination !== "string") return null;
  if (typeof amount !== "string" && typeof amount !== "number") return null;
  const mint = typeof fields.mint === "string" ? fields.mint : undefined;
  return { source: fields.source, destination: fields.destination, amount: BigInt(amount), mint };
}

/** A raw token instruction's transfer: `Transfer` (3) and `TransferChecked` (12), their amount a u64 after the tag. */
function rawTransfer(accounts: string[], data: Uint8Array): Transfer | null {
  if (data.length < 9 || (data[0] !== TRANSFER && data[0] !== TRANSFER_CHECKED)) return null;
  const amount = new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(1, true);
  if (data[0] === TRANSFER) {
    const [source, destination] = accounts;
    return source && destination ? { source, destination, amount } : null;
  }
  const [source, mint, destination] = accounts;
  return source && mint && destination ? { source, destination, amount, mint } : null;
}

/**
 * What one inner instruction moved, one entry per number it takes. A `Batch` (SPL Token's p-token: tag 255, then
 * per instruction its account count, data length and data, its accounts taken in turn from the batch's) is the
 * instructions it runs; the payment-channels program pays a sealed channel's legs with one. The RPC parses it as
 * `batch` with its `instructions`; one that gives it raw is read from its bytes.
 */
function innerTransfers(ix: ParsedInstruction): (Transfer | null)[] {
  const parsed = record(ix.parsed);
  if (TOKEN_PROGRAM_NAMES.has(ix.program ?? "") && parsed.type === "batch") {
    const list = record(parsed.info).instructions;
    return Array.isArray(list) && list.length > 0 ? list.map(parsedTransfer) : [null];
  }
  if (ix.parsed !== undefined) return [parsedTransfer(ix.parsed)];
  const data = ix.data === undefined ? null : base58Bytes(ix.data);
  if (!data || !TOKEN_PROGRAM_IDS.has(ix.programId ?? "")) return [null];
  const accounts = ix.accounts ?? [];
  if (data[0] !== BATCH) return [rawTransfer(accounts, data)];
  const out: (Transfer | null)[] = [];
  for (let at = 1, taken = 0; at + 2 <= data.length; ) {
    const count = data[at] as number;
    const length = data[at + 1] as number;
    out.push(rawTransfer(accounts.slice(taken, taken + count), data.subarray(at + 2, at + 2 + length)));
    taken += count;
    at += 2 + length;
  }
  return out.length > 0 ? out : [null];
}

/**
 * Every move of `mint` a landed transaction made, top-level and inner, numbered as the module says, with the
 * owners of both token accounts. A failed transaction moved nothing; a move whose accounts the balances do not
 * show as the mint's, with their owners, is not one of the mint's.
 */
export function usdcLegs(tx: ParsedTransaction, mint: string): UsdcLeg[] {
  if (!tx.meta || tx.meta.err !== null) return [];
  const keys = tx.transaction.message.accountKeys.map(keyOf);
  const balances = new Map<string, TokenBalance>();
  for (const b of [...(tx.meta.preTokenBalances ?? []), ...(tx.meta.postTokenBalances ?? [])]) {
    const key = keys[b.accountIndex];
    if (key !== undefined && b.owner !== undefined && !balances.has(key)) balances.set(key, b);
  }
  const signature = tx.transaction.signatures[0] as string;
  if (tx.blockTime === null)
    throw new Error(`transaction ${signature} has no blockTime: its slot cannot be dated`);
  const blockTime = tx.blockTime;
  const legs: UsdcLeg[] = [];
  const take = (transfer: Transfer | null, index: number, parent: number | null) => {
    if (!transfer) return;
    const src = balances.get(transfer.source);
    const dst = balances.get(transfer.destination);
    // A plain Transfer names no mint: the accounts' balances say which it moved.
    if ((transfer.mint ?? src?.mint) !== mint || src?.mint !== mint || dst?.mint !== mint) return;
    const { source, destination, amount } = transfer;
    const [from, to, feePayer] = [src.owner as string, dst.owner as string, keys[0] as string];
    legs.push({
      signature,
      index,
      parent,
      slot: tx.slot,
      blockTime,
      feePayer,
      source,
      destination,
      from,
      to,
      amount,
    });
  };
  const top = tx.transaction.message.instructions;
  top.forEach((ix, index) => {
    if (TOKEN_PROGRAM_NAMES.has(ix.program ?? "")) take(parsedTransfer(ix.parsed), index, null);
  });
  let next = top.length;
  const inner = [...(tx.meta.innerInstructions ?? [])].sort((a, b) => a.index - b.index);
  for (const group of inner)
    for (const ix of group.instructions)
      for (const transfer of innerTransfers(ix)) take(transfer, next++, group.index);
  return legs;
}

/** A leg as the rows keep it. */
export const moveOf = ({ parent: _, ...move }: UsdcLeg): SolanaMove => move;

/**
 * The `exact` payments' candidates: each top-level `TransferChecked` of `mint` (and a plain `Transfer` between
 * accounts of the mint), with the owners of both accounts. `into` keeps the moves into one token account, at any
 * depth (a payer's funding history: a refund or a swap pays into it by CPI).
 */
export function usdcMoves(tx: ParsedTransaction, mint: string, only?: { into: string }): SolanaMove[] {
  const legs = usdcLegs(tx, mint);
  return (only ? legs.filter((l) => l.destination === only.into) : legs.filter((l) => l.parent === null)).map(
    moveOf,
  );
}
