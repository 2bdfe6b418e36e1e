import {
  Account,
  FailedTransactionMetadata,
  LiteSvm,
  type TransactionMetadata,
} from "litesvm/dist/internal.js";
import { SPL_TOKEN_PROGRAM, TOKEN_2022_PROGRAM } from "../constants.ts";
import { type TransactionErrorJson, transactionErrorJson } from "./errors.ts";
import { base58 } from "./keys.ts";
import { decodeMint, decodeTokenAccount } from "./layouts.ts";
import { decodeWire, fromBase58, type WireTransaction, withBlockhash } from "./wire.ts";

/** A token account's balance as a transaction's meta lists it (`preTokenBalances`, `postTokenBalances`). */
export interface TokenBalance {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  amount: bigint;
  decimals: number;
}

export interface InnerInstructions {
  index: number;
  instructions: { programIdIndex: number; accounts: number[]; data: Uint8Array; stackHeight: number }[];
}

/** What executing a transaction did, in the terms of the RPC's `meta`. */
export interface ExecutionMeta {
  err: TransactionErrorJson | null;
  fee: bigint;
  preBalances: bigint[];
  postBalances: bigint[];
  preTokenBalances: TokenBalance[];
  postTokenBalances: TokenBalance[];
  logMessages: string[];
  innerInstructions: InnerInstructions[];
  computeUnitsConsumed: bigint;
  returnData: { programId: string; data: Uint8Array } | null;
}

/** A transaction in a block: failed ones too, as long as they paid their fee. */
export interface Landed {
  signature: string;
  slot: bigint;
  blockTime: number;
  tx: WireTransaction;
  meta: ExecutionMeta;
}

/** A transaction no block took (bad signature, unknown blockhash, already processed, no fee): it left no trace. */
export interface Dropped {
  signature: string;
  err: TransactionErrorJson;
  logs: string[];
}

export type Sent = { landed: Landed } | { dropped: Dropped };

export interface Simulated {
  err: TransactionErrorJson | null;
  logs: string[];
  unitsConsumed: bigint;
  innerInstructions: InnerInstructions[];
  returnData: ExecutionMeta["returnData"];
  replacementBlockhash: { blockhash: string; lastValidBlockHeight: bigint } | null;
}

const LAMPORTS_PER_SIGNATURE = 5_000n;
const COMPUTE_BUDGET_PROGRAM = "ComputeBudget111111111111111111111111111111";
/** How many blocks a blockhash stays valid for on Solana (`MAX_PROCESSING_AGE`), for `lastValidBlockHeight`. */
const BLOCKHASH_VALID_BLOCKS = 150n;
const TOKEN_PROGRAMS = new Set([SPL_TOKEN_PROGRAM, TOKEN_2022_PROGRAM]);

/**
 * The chain: litesvm's accounts and programs, plus what litesvm does not keep and the RPC must answer from,
 * slots with their times and every landed transaction by signature and by account.
 *
 * Each sent transaction opens a slot of its own (one block, one transaction), dated by the wall clock in
 * whole seconds as a block's time is; a transaction no block takes leaves its slot empty, as a skipped slot.
 * One node, no forks: a landed transaction is final at once.
 *
 * Each slot ends with a new latest blockhash, as each block makes one on a cluster, so two transactions signed
 * alike in different slots differ (x402 v1's SVM client puts no nonce of its own in a payment). A blockhash stays
 * valid for 150 blocks, as on Solana: a transaction signed on it lands in a block up to its
 * `lastValidBlockHeight`, and after that is refused, `BlockhashNotFound`.
 */
export class Ledger {
  readonly svm = new LiteSvm();
  private slotNow = 0n;
  private readonly times = new Map<bigint, number>();
  private readonly landed = new Map<string, Landed>();
  private readonly byAddress = new Map<string, string[]>();
  /** The blockhashes a transaction may still name, oldest first, each with the last block height it lands in. */
  private readonly blockhashes = new Map<string, bigint>();
  readonly genesisTime: number;

  constructor(now: () => number = Date.now) {
    this.now = now;
    this.genesisTime = Math.floor(now() / 1000);
    this.times.set(0n, this.genesisTime);
    this.setClock(0n, this.genesisTime);
    this.blockhashes.set(this.svm.latestBlockhash(), BLOCKHASH_VALID_BLOCKS);
    // litesvm refuses a transaction it ran already (AlreadyProcessed) only while it remembers it, 32 by default;
    // a cluster refuses it for as long as its blockhash is valid (its status cache). A block holds one transaction
    // here, so remembering as many as a blockhash's blocks is enough.
    this.svm.setTransactionHistory(BLOCKHASH_VALID_BLOCKS + 1n);
  }

  private readonly now: () => number;

  get slot(): bigint {
    return this.slotNow;
  }

  /** Block height equals the slot: no slot is ever skipped by a leader here, only left empty. */
  get blockHeight(): bigint {
    return this.slotNow;
  }

  blockTime(slot: bigint): number | undefined {
    return this.times.get(slot);
  }

  latestBlockhash(): { blockhash: string; lastValidBlockHeight: bigint } {
    const blockhash = this.svm.latestBlockhash();
    return { blockhash, lastValidBlockHeight: this.blockhashes.get(blockhash) as bigint };
  }

  /** Whether a transaction naming `blockhash` would land in the next block (`isBlockhashValid`). */
  isBlockhashValid(blockhash: string): boolean {
    const lastValid = this.blockhashes.get(blockhash);
    return lastValid !== undefined && this.blockHeight + 1n <= lastValid;
  }

  /** Landed transactions, failed ones included (`getEpochInfo`'s `transactionCount`). */
  get transactionCount(): number {
    return this.landed.size;
  }

  transaction(signature: string): Landed | undefined {
    return this.landed.get(signature);
  }

  /** Signatures of landed transactions that name `address`, oldest first. */
  signaturesOf(address: string): readonly string[] {
    return this.byAddress.get(address) ?? [];
  }

  account(address: string): Account | null {
    return this.svm.getAccount(fromBase58(address));
  }

  setAccount(
    address: string,
    account: { lamports: bigint; data: Uint8Array; owner: string; executable?: boolean },
  ): void {
    this.svm.setAccount(
      fromBase58(address),
      new Account(account.lamports, account.data, fromBase58(account.owner), account.executable ?? false, 0n),
    );
  }

  /** Executes a signed transaction in a new slot. Throws WireError for bytes that are no transaction. */
  send(bytes: Uint8Array): Sent {
    const tx = decodeWire(bytes);
    const signature = tx.signatures[0] as string;
    const pre = this.snapshot(tx);
    const olderValid = this.isOlderValidBlockhash(tx.recentBlockhash);
    const slot = this.slotNow + 1n;
    const time = Math.max(Math.floor(this.now() / 1000), this.times.get(this.slotNow) ?? 0);
    this.setClock(slot, time);
    this.slotNow = slot;
    const result = this.withBlockhashCheck(!olderValid, () =>
      tx.version === "legacy"
        ? this.svm.sendLegacyTransaction(bytes)
        : this.svm.sendVersionedTransaction(bytes),
    );
    this.nextBlockhash();
    const post = this.snapshot(tx);
    const failed = result instanceof FailedTransactionMetadata;
    const meta = failed ? result.meta() : (result as TransactionMetadata);
    const err = failed ? transactionErrorJson(result.err()) : null;
    // A failed transaction that charged its fee payer was in a block (its fee is gone, its effects are not);
    // one that did not was never taken, as a validator drops it.
    if (failed && pre.balances[0] === post.balances[0]) {
      return { dropped: { signature, err: err as TransactionErrorJson, logs: meta.logs() } };
    }
    this.times.set(slot, time);
    const landed: Landed = {
      signature,
      slot,
      blockTime: time,
      tx,
      meta: {
        err,
        fee: feeOf(tx),
        preBalances: pre.balances,
        postBalances: post.balances,
        preTokenBalances: pre.tokens,
        postTokenBalances: post.tokens,
        ...executionDetails(meta),
      },
    };
    this.landed.set(signature, landed);
    for (const key of new Set(tx.accountKeys)) {
      const list = this.byAddress.get(key) ?? [];
      list.push(signature);
      this.byAddress.set(key, list);
    }
    return { landed };
  }

  /** Runs a transaction against the current state without keeping anything (`simulateTransaction`). */
  simulate(bytes: Uint8Array, options: { sigVerify: boolean; replaceRecentBlockhash: boolean }): Simulated {
    let tx = decodeWire(bytes);
    let run = bytes;
    let replacementBlockhash: Simulated["replacementBlockhash"] = null;
    if (options.replaceRecentBlockhash) {
      replacementBlockhash = this.latestBlockhash();
      run = withBlockhash(tx, replacementBlockhash.blockhash);
      tx = decodeWire(run);
    }
    const sigverify = this.svm.getSigverify();
    this.svm.setSigverify(options.sigVerify);
    const olderValid = this.isOlderValidBlockhash(tx.recentBlockhash);
    try {
      const result = this.withBlockhashCheck(!olderValid, () =>
        tx.version === "legacy"
          ? this.svm.simulateLegacyTransaction(run)
          : this.svm.simulateVersionedTransaction(run),
      );
      const failed = result instanceof FailedTransactionMetadata;
      const meta = failed ? result.meta() : result.meta();
      const details = executionDetails(meta);
      return {
        err: failed ? transactionErrorJson(result.err()) : null,
        logs: details.logMessages,
        unitsConsumed: details.computeUnitsConsumed,
        innerInstructions: details.innerInstructions,
        returnData: details.returnData,
        replacementBlockhash,
      };
    } finally {
      this.svm.setSigverify(sigverify);
    }
  }

  /** Balances and token balances of a transaction's accounts, before or after it runs. */
  private snapshot(tx: WireTransaction): { balances: bigint[]; tokens: TokenBalance[] } {
    const balances: bigint[] = [];
    const tokens: TokenBalance[] = [];
    tx.accountKeys.forEach((key, accountIndex) => {
      const account = this.account(key);
      balances.push(account?.lamports() ?? 0n);
      if (!account) return;
      const programId = base58(account.owner());
      if (!TOKEN_PROGRAMS.has(programId)) return;
      const state = decodeTokenAccount(account.data());
      if (!state) return;
      const mintData = this.account(state.mint)?.data();
      const decimals = mintData ? (decodeMint(mintData)?.decimals ?? 0) : 0;
      tokens.push({
        accountIndex,
        mint: state.mint,
        owner: state.owner,
        programId,
        amount: state.amount,
        decimals,
      });
    });
    return { balances, tokens };
  }

  /**
   * A blockhash valid for the next block that is not litesvm's latest. litesvm takes its latest blockhash only
   * (or a durable nonce): its check is turned off for such a transaction alone, and left on for every other, so
   * a blockhash never issued or too old is refused by litesvm itself, `BlockhashNotFound`.
   */
  private isOlderValidBlockhash(blockhash: string): boolean {
    return blockhash !== this.svm.latestBlockhash() && this.isBlockhashValid(blockhash);
  }

  private withBlockhashCheck<T>(check: boolean, run: () => T): T {
    if (check) return run();
    this.svm.setBlockhashCheck(false);
    try {
      return run();
    } finally {
      this.svm.setBlockhashCheck(true);
    }
  }

  /** The block of the slot just ended makes the new latest blockhash; those too old for the next block go. */
  private nextBlockhash(): void {
    this.svm.expireBlockhash();
    this.blockhashes.set(this.svm.latestBlockhash(), this.blockHeight + BLOCKHASH_VALID_BLOCKS);
    for (const [blockhash, lastValid] of this.blockhashes) {
      if (lastValid > this.blockHeight) break;
      this.blockhashes.delete(blockhash);
    }
  }

  private setClock(slot: bigint, unixTimestamp: number): void {
    const clock = this.svm.getClock();
    clock.slot = slot;
    clock.unixTimestamp = BigInt(unixTimestamp);
    this.svm.setClock(clock);
  }
}

function executionDetails(meta: TransactionMetadata) {
  const innerInstructions: InnerInstructions[] = [];
  meta.innerInstructions().forEach((list, index) => {
    if (list.length === 0) return;
    innerInstructions.push({
      index,
      instructions: list.map((inner) => {
        const compiled = inner.instruction();
        return {
          programIdIndex: compiled.programIdIndex(),
          accounts: [...compiled.accounts()],
          data: compiled.data(),
          stackHeight: inner.stackHeight(),
        };
      }),
    });
  });
  const returned = meta.returnData();
  const data = returned.data();
  return {
    logMessages: meta.logs(),
    innerInstructions,
    computeUnitsConsumed: meta.computeUnitsConsumed(),
    returnData: data.length > 0 ? { programId: base58(returned.programId()), data } : null,
  };
}

/**
 * The fee Solana charges: 5,000 lamports a signature, plus the priority fee (the compute-unit price in
 * micro-lamports times the compute-unit limit, rounded up), as the runtime charges it.
 */
export function feeOf(tx: WireTransaction): bigint {
  let price = 0n;
  let limit: bigint | null = null;
  let others = 0n;
  for (const instruction of tx.instructions) {
    const program = tx.accountKeys[instruction.programIdIndex];
    const view = new DataView(
      instruction.data.buffer,
      instruction.data.byteOffset,
      instruction.data.byteLength,
    );
    if (program !== COMPUTE_BUDGET_PROGRAM) others++;
    else if (instruction.data[0] === 2 && instruction.data.length >= 5)
      limit = BigInt(view.getUint32(1, true));
    else if (instruction.data[0] === 3 && instruction.data.length >= 9) price = view.getBigUint64(1, true);
  }
  // Without a limit instruction, the runtime allows 200,000 units per instruction other than compute-budget ones.
  const units = limit ?? (others * 200_000n > 1_400_000n ? 1_400_000n : others * 200_000n);
  const priority = (price * units + 999_999n) / 1_000_000n;
  return LAMPORTS_PER_SIGNATURE * BigInt(tx.signatures.length) + priority;
}
