/**
 * Which plain USDC transfers to keep: the screens need the money links between merchants and their
 * payers (a merchant funding a payer, a payer's money coming back), not every USDC transfer on Base
 * (millions a day). A transfer is kept when its sender or its recipient had already been seen in an
 * x402 payment, as payer or merchant, at or before the transfer's block.
 *
 * "At or before the block", not "before this batch": the rule then gives the same rows however the
 * blocks are split into batches, so a resumed run stores exactly what an uninterrupted one does.
 *
 * Limitation (docs/indexer.md): a transfer that happens before either wallet's first x402 payment is
 * not kept, e.g. a brand-new merchant funding a fresh wallet that then pays it. Catching those would
 * need each new wallet's history, fetched when it first appears.
 */
import type { PaymentRow, TransferRow } from "./classify.ts";

export class WalletBook {
  /** wallet -> the first block it appears in an x402 payment. */
  private readonly firstSeen = new Map<string, number>();

  /** Loads the wallets of stored payments (one row per wallet with its first block). */
  static from(rows: Iterable<{ wallet: string; first_block: number | bigint }>): WalletBook {
    const book = new WalletBook();
    for (const row of rows) book.note(row.wallet, Number(row.first_block));
    return book;
  }

  get size(): number {
    return this.firstSeen.size;
  }

  /** Records the wallets of a batch's payments. */
  addPayments(payments: readonly PaymentRow[]): void {
    for (const p of payments) {
      this.note(p.payer, p.block);
      this.note(p.payTo, p.block);
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
