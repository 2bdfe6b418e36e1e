/**
 * Which plain USDC transfers to keep: the screens need the money links between merchants and their
 * payers (a merchant funding a payer, a payer's money coming back), not every USDC transfer on Base
 * (millions a day). Two rules, both functions of the chain alone:
 *
 * 1. A transfer is kept when its sender or its recipient had already been seen in an x402 payment, as
 *    payer or merchant, at or before the transfer's block (`select`).
 * 2. When a wallet pays for the first time, the transfers that reached it before it was first seen,
 *    back until they explain its balance, and those that reached its unseen funders, level after level,
 *    are fetched and kept; so are those that fed an unseen wallet paying a seen one (`history.ts`;
 *    `newPayers` names the new payers).
 *
 * "At or before the block", not "before this batch", and "first pays in this batch", which only the
 * batch holding that block can see: each rule then gives the same rows however the blocks are split
 * into batches, so a resumed run stores exactly what an uninterrupted one does.
 *
 * Limitation (docs/indexer.md): money that sat in one wallet longer than `--funding-lookback`, or that
 * passed through more wallets than the history's level cap, or through a hub, is not followed.
 */
import type { PaymentRow, TransferRow } from "./classify.ts";

/** A wallet's first block in a payment, and whether it ever paid: what the stored payments say. */
export interface BookRow {
  wallet: string;
  first_block: number | bigint;
  /** False for a wallet only ever paid (a merchant that never paid anyone). Default true. */
  paid?: boolean;
}

export class WalletBook {
  /** wallet -> the first block it appears in an x402 payment. */
  private readonly firstSeen = new Map<string, number>();
  /**
   * Wallets seen only as merchants so far: their first payment as payer still triggers a history. A
   * set of the few merchants rather than a second map over every payer keeps the book's size.
   */
  private readonly merchantOnly = new Set<string>();

  /** Loads the wallets of stored payments (one row per wallet with its first block). */
  static from(rows: Iterable<BookRow>): WalletBook {
    const book = new WalletBook();
    for (const row of rows) {
      book.note(row.wallet, Number(row.first_block));
      if (row.paid === false) book.merchantOnly.add(row.wallet);
    }
    return book;
  }

  get size(): number {
    return this.firstSeen.size;
  }

  /** The first block `wallet` appears in a payment, if it does. */
  first(wallet: string): number | undefined {
    return this.firstSeen.get(wallet);
  }

  /**
   * The payers of `payments` (a batch, in any order) that never paid before it, each with the first
   * block it pays in: the wallets whose funding history to fetch. Reads the book without changing it.
   */
  newPayers(payments: readonly PaymentRow[]): Map<string, number> {
    const out = new Map<string, number>();
    for (const p of payments) {
      if (this.firstSeen.has(p.payer) && !this.merchantOnly.has(p.payer)) continue;
      const known = out.get(p.payer);
      if (known === undefined || p.block < known) out.set(p.payer, p.block);
    }
    return out;
  }

  /** Records the wallets of a batch's payments. */
  addPayments(payments: readonly PaymentRow[]): void {
    for (const p of payments) {
      const isNew = !this.firstSeen.has(p.payTo);
      this.note(p.payer, p.block);
      this.merchantOnly.delete(p.payer);
      this.note(p.payTo, p.block);
      if (isNew && p.payTo !== p.payer) this.merchantOnly.add(p.payTo);
    }
  }

  /** The transfers that touch a wallet seen in a payment at or before their block. */
  select(transfers: readonly TransferRow[]): TransferRow[] {
    return transfers.filter((t) => this.seenBy(t.from, t.block) || this.seenBy(t.to, t.block));
  }

  private seenBy(wallet: string, block: number): boolean {
    const first = this.firstSeen.get(wallet);
    return first !== undefined && first <= block;
  }

  private note(wallet: string, block: number): void {
    const first = this.firstSeen.get(wallet);
    if (first === undefined || block < first) this.firstSeen.set(wallet, block);
  }
}
