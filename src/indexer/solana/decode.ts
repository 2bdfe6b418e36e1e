/**
 * Solana's `exact` payments read from a transaction as `getTransaction` gives it (`encoding: "jsonParsed"`), the
 * way x402's SVM scheme settles them (`specs/schemes/exact/scheme_exact_svm.md`): the buyer's transaction holds one
 * SPL Token (or Token-2022) `TransferChecked` of the mint, and its fee payer (the first account key, the first
 * signer) is the facilitator. The buyer and the merchant are the owners of the token accounts the USDC moved between,
 * read from the transaction's own `preTokenBalances`/`postTokenBalances` (`owner`): never the token accounts.
 */

/** What the indexer keeps of one move of USDC: its top-level instruction's index is its `log_index`. */
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

interface ParsedInstruction {
  programId?: string;
  program?: string;
  parsed?: { type?: string; info?: Record<string, unknown> };
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
  meta: { err: unknown; preTokenBalances?: TokenBalance[]; postTokenBalances?: TokenBalance[] } | null;
  transaction: {
    signatures: string[];
    message: { accountKeys: ({ pubkey: string } | string)[]; instructions: ParsedInstruction[] };
  };
}

const TOKEN_PROGRAMS = new Set(["spl-token", "spl-token-2022"]);
const keyOf = (k: { pubkey: string } | string) => (typeof k === "string" ? k : k.pubkey);

/**
 * The USDC moves of a landed transaction: each top-level `TransferChecked` of `mint` (and a plain `Transfer`
 * between accounts of the mint, which funding may use), with the owners of both accounts. A failed transaction
 * moved nothing. `only` keeps the moves into one token account (a payer's funding history).
 */
export function usdcMoves(tx: ParsedTransaction, mint: string, only?: { into: string }): SolanaMove[] {
  if (!tx.meta || tx.meta.err !== null) return [];
  const keys = tx.transaction.message.accountKeys.map(keyOf);
  const balances = [...(tx.meta.preTokenBalances ?? []), ...(tx.meta.postTokenBalances ?? [])];
  const account = (address: string) => {
    const index = keys.indexOf(address);
    return balances.find((b) => b.accountIndex === index && b.owner !== undefined);
  };
  const signature = tx.transaction.signatures[0] as string;
  if (tx.blockTime === null)
    throw new Error(`transaction ${signature} has no blockTime: its slot cannot be dated`);
  const moves: SolanaMove[] = [];
  tx.transaction.message.instructions.forEach((ix, index) => {
    const type = ix.parsed?.type;
    if (!TOKEN_PROGRAMS.has(ix.program ?? "") || (type !== "transferChecked" && type !== "transfer")) return;
    const info = ix.parsed?.info ?? {};
    const source = String(info.source);
    const destination = String(info.destination);
    const src = account(source);
    const dst = account(destination);
    // A plain Transfer names no mint: the accounts' balances say which it moved.
    if ((info.mint ?? src?.mint) !== mint || dst?.mint !== mint || !src?.owner || !dst.owner) return;
    if (only && destination !== only.into) return;
    const amount = (info.tokenAmount as { amount?: string } | undefined)?.amount ?? info.amount;
    moves.push({
      signature,
      index,
      slot: tx.slot,
      blockTime: tx.blockTime as number,
      feePayer: keys[0] as string,
      source,
      destination,
      from: src.owner,
      to: dst.owner,
      amount: BigInt(String(amount)),
    });
  });
  return moves;
}
