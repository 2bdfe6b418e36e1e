/**
 * Where a wallet's money came from, transfer by transfer, first in first out: each wallet is a queue of
 * lots in the order they arrived, and every payment or transfer out spends the oldest lots first (the
 * rule of Clayton's case; Anderson et al., "Bitcoin Redux", 2018). A lot that leaves a merchant's wallet
 * is labelled with that merchant and keeps the label through any number of wallets, at any age: whether
 * the merchant's money paid the merchant is a question of where the payer's money came from, not of how
 * many wallets it passed through or when.
 *
 * Why FIFO rather than haircut (each outflow carrying the tainted share of the balance): both are linear
 * and proportional over a wallet's life, but FIFO attributes each payment to the transfers that funded
 * it, so the evidence can show them one by one; and the money a wallet holds at a block is exactly its
 * latest inflows up to its balance, so a balance read at one block (`balances`) settles everything older
 * that the data does not show, whatever was spent out of sight.
 *
 * Money the data cannot explain (a wallet spending more than it was seen to receive; a balance above
 * what was seen) is of unknown origin, unlabelled: the screen flags only what it can trace.
 *
 * Haircut where FIFO would guess: a wallet that pays out more than the data saw it receive, and whose
 * balance the data does not hold (an exchange whose deposits the data holds only in part), spent money the
 * data cannot place in its queue. FIFO would hand the little that is visible (a merchant's deposit) whole
 * to the next payouts, and genuine customers of the exchange would carry it. Of those wallets (`haircut`),
 * each outflow takes from the queue only the share of what the wallet paid out that the data saw arrive
 * (`seen / paid`), the rest being of unknown origin: the visible money is spread over the payouts in
 * proportion. Totals are FIFO's (the merchant's deposit reaches the payers whole if they spend it all),
 * only who carries it changes. Where the data is whole (`seen >= paid`) FIFO stays: it follows money
 * exactly, and a pool that mixed it could be diluted by money sent round through the wallet.
 */

/** A transfer that moved a lot, and the one that moved it before: the lot's way from its first label. */
export interface Hop {
  from: string;
  to: string;
  block: number;
  /** The transfer's whole amount (atomic units), not the lot's share of it. */
  amount: bigint;
  tx: string;
  prev: Hop | null;
  /** A hub's payout read as a deposit's money coming back (`returns.ts`): the span and chance it was read at. */
  hubReturn?: { spanMs: number; chance: number };
}

/** Labels: the merchants whose wallets the money has been in, sorted; shared, never mutated. */
type Labels = readonly string[];

interface Lot {
  amount: bigint;
  labels: Labels;
  /** The transfer that brought the lot into its wallet (null for money of unknown origin). */
  via: Hop | null;
}

/** What a payment was paid with: how much of it was the payee's own money, and the way of the first such lot. */
export interface Attribution {
  /** Atomic units of the payment that had been in the payee's wallet before. */
  own: bigint;
  /** The way the payee's money came, for the first lot of it spent (null when none was). */
  way: Hop | null;
}

const NONE: Labels = [];

/** The smaller of two amounts (Math.min takes no bigint). */
const least = (a: bigint, b: bigint): bigint => (a < b ? a : b);

/**
 * The money read back out of hubs that are not followed (`returns.ts`): how much of each deposit (by
 * transfer key) to hold back, and what each payout takes from which deposit.
 */
export interface Returns {
  deposits: ReadonlyMap<string, bigint>;
  payouts: ReadonlyMap<
    string,
    readonly { deposit: string; amount: bigint; spanMs: number; chance: number }[]
  >;
}

const NO_RETURNS: Returns = { deposits: new Map(), payouts: new Map() };

/** What the data saw a wallet receive and pay out: its outflows carry visible money at `seen / paid` (at most 1). */
export interface Visible {
  seen: bigint;
  paid: bigint;
}

/**
 * The FIFO ledger of the wallets it is told about. Events must come in chain order (block, then log
 * index). Wallets that are `opaque` (hubs whose holdings the data cannot show) are not tracked: what
 * they receive is lost to the screen, what they send is of unknown origin.
 */
export class ProvenanceLedger {
  private readonly queues = new Map<string, Lots>();
  /** Interned label lists, so that a lot's labels compare by identity and cost no copy. */
  private readonly interned = new Map<string, Labels>();
  /** Refunds: what each payer paid each merchant so far, less what came back as refunds ("payer merchant"). */
  private readonly refundable = new Map<string, bigint>();
  /** Of each deposit into a hub not followed that comes back (`returns`), the lots held back for its payouts. */
  private readonly held = new Map<string, Lots>();

  constructor(
    private readonly merchants: ReadonlySet<string>,
    private readonly opaque: ReadonlySet<string> = new Set(),
    private readonly haircut: ReadonlyMap<string, Visible> = new Map(),
    private readonly returns: Returns = NO_RETURNS,
  ) {}

  /**
   * A plain transfer. A transfer from a merchant to a wallet that paid it is a refund up to what the
   * wallet paid it and was not yet given back: that part is the customer's own money returning, so it
   * carries no label (refunded customers are customers); the rest is the merchant's money.
   *
   * Into a hub not followed, the money is lost to the screen, except the part of a deposit read as coming
   * back (`returns`, by the transfer's `key`): it is held back, and the payouts that return it take it
   * out again, after the rest of the payout (of unknown origin, the hub's own money) and with their hop
   * behind the deposit's, so the way shows both transfers.
   */
  transfer(t: { from: string; to: string; amount: bigint; block: number; tx: string; key?: string }): void {
    if (t.amount <= 0n || t.from === t.to) return;
    const hop: Hop = { from: t.from, to: t.to, block: t.block, amount: t.amount, tx: t.tx, prev: null };
    let refund = 0n;
    if (this.merchants.has(t.from)) {
      const key = `${t.to} ${t.from}`;
      const owed = this.refundable.get(key) ?? 0n;
      refund = owed < t.amount ? owed : t.amount;
      if (refund > 0n) this.refundable.set(key, owed - refund);
    }
    // The refund leaves the merchant's wallet like any money, unlabelled.
    this.spend(t.from, refund);
    let lots: (Lot & { hop?: Hop })[] = this.spend(t.from, t.amount - refund);
    if (this.opaque.has(t.to)) {
      const back = t.key === undefined ? undefined : this.returns.deposits.get(t.key);
      if (back) this.hold(t.key as string, lots, back, hop);
      return;
    }
    const shares = t.key === undefined ? undefined : this.returns.payouts.get(t.key);
    if (shares && this.opaque.has(t.from)) lots = this.returned(lots, shares, hop);
    const queue = this.queue(t.to);
    if (refund > 0n) queue.push({ amount: refund, labels: NONE, via: hop });
    for (const lot of lots)
      queue.push({ amount: lot.amount, labels: lot.labels, via: { ...(lot.hop ?? hop), prev: lot.via } });
  }

  /** Holds back up to `amount` of the lots a deposit took into a hub, with the deposit's hop behind them. */
  private hold(key: string, lots: readonly Lot[], amount: bigint, hop: Hop): void {
    const held = this.held.get(key) ?? new Lots();
    let left = amount;
    for (const lot of lots) {
      if (left <= 0n) break;
      const take = least(lot.amount, left);
      held.push({ amount: take, labels: lot.labels, via: { ...hop, prev: lot.via } });
      left -= take;
    }
    this.held.set(key, held);
  }

  /**
   * A payout out of a hub not followed (`lots`: all of unknown origin) that returns deposits' money: what it
   * takes of each deposit held back goes after the rest, its hop marked as read back (the screen flags only
   * what it can trace, so the unknown part is handed on first).
   */
  private returned(
    lots: readonly Lot[],
    shares: readonly { deposit: string; amount: bigint; spanMs: number; chance: number }[],
    hop: Hop,
  ): (Lot & { hop?: Hop })[] {
    let total = 0n;
    for (const lot of lots) total += lot.amount;
    const back: (Lot & { hop: Hop })[] = [];
    let taken = 0n;
    for (const share of shares) {
      const held = this.held.get(share.deposit);
      if (!held) continue;
      const want = least(share.amount, total - taken);
      const marked = { ...hop, hubReturn: { spanMs: share.spanMs, chance: share.chance } };
      for (const lot of held.take(want)) {
        back.push({ ...lot, hop: marked });
        taken += lot.amount;
      }
      if (held.empty) this.held.delete(share.deposit);
    }
    if (taken === 0n) return [...lots];
    return total > taken ? [{ amount: total - taken, labels: NONE, via: null }, ...back] : back;
  }

  /** Money of unknown origin arrived (x402 payments from wallets the screen does not follow). */
  income(wallet: string, amount: bigint): void {
    if (amount > 0n && !this.opaque.has(wallet)) this.queue(wallet).push({ amount, labels: NONE, via: null });
  }

  /**
   * An x402 payment from `payer` to `payTo`: it spends the oldest lots of `from` (the payer, or the
   * batch-settlement channel a claim draws on), and the payee receives them. Returns how much of it was
   * the payee's own money.
   */
  payment(p: {
    payer: string;
    from?: string;
    payTo: string;
    amount: bigint;
    block: number;
    tx: string;
  }): Attribution {
    const key = `${p.payer} ${p.payTo}`;
    this.refundable.set(key, (this.refundable.get(key) ?? 0n) + p.amount);
    const from = p.from ?? p.payer;
    const lots = this.spend(from, p.amount);
    let own = 0n;
    let way: Hop | null = null;
    for (const lot of lots) {
      if (!lot.labels.includes(p.payTo)) continue;
      own += lot.amount;
      way ??= lot.via;
    }
    if (p.payer !== p.payTo && !this.opaque.has(p.payTo)) {
      const queue = this.queue(p.payTo);
      const hop: Hop = { from, to: p.payTo, block: p.block, amount: p.amount, tx: p.tx, prev: null };
      for (const lot of lots)
        queue.push({ amount: lot.amount, labels: lot.labels, via: { ...hop, prev: lot.via } });
    }
    return { own, way };
  }

  /**
   * The chain says `wallet` held `amount` at the end of this block. Lots beyond it were spent out of
   * sight, oldest first, so they are dropped from the front; a shortfall is money older than anything
   * seen (what the indexer reads back covers the balance), so it goes in front, of unknown origin.
   */
  balance(wallet: string, amount: bigint): void {
    if (this.opaque.has(wallet)) return;
    const queue = this.queue(wallet);
    if (queue.total > amount) queue.take(queue.total - amount);
    else if (queue.total < amount) queue.unshift({ amount: amount - queue.total, labels: NONE, via: null });
  }

  /** Takes `amount` from the front of the wallet's queue; a merchant's own label is added to what it sends. */
  private spend(wallet: string, amount: bigint): Lot[] {
    if (amount <= 0n) return [];
    const queue = this.opaque.has(wallet) ? undefined : this.queues.get(wallet);
    const visible = this.haircut.get(wallet);
    // Of a wallet that paid out more than it was seen to receive, each outflow is that visible share.
    const want = visible && visible.paid > visible.seen ? (amount * visible.seen) / visible.paid : amount;
    const out = queue ? queue.take(want) : [];
    let taken = 0n;
    for (const lot of out) taken += lot.amount;
    // Sent beyond what was seen to arrive: money of unknown origin. Out of a haircut wallet it goes first:
    // the order inside one transfer is no fact, and the screen flags only what it can trace.
    if (taken < amount) {
      const unknown = { amount: amount - taken, labels: NONE, via: null };
      if (visible) out.unshift(unknown);
      else out.push(unknown);
    }
    if (queue?.empty) this.queues.delete(wallet);
    if (!this.merchants.has(wallet)) return out;
    return out.map((lot) => ({ ...lot, labels: this.withLabel(lot.labels, wallet) }));
  }

  private queue(wallet: string): Lots {
    let queue = this.queues.get(wallet);
    if (!queue) {
      queue = new Lots();
      this.queues.set(wallet, queue);
    }
    return queue;
  }

  private withLabel(labels: Labels, label: string): Labels {
    if (labels.includes(label)) return labels;
    const next = [...labels, label].sort();
    const key = next.join(" ");
    const known = this.interned.get(key);
    if (known) return known;
    this.interned.set(key, next);
    return next;
  }
}

/**
 * A wallet's lots, oldest first, with their total: taking from the front moves an index rather than the
 * array (a wallet that spends often from many lots would otherwise cost the square of its lots).
 */
class Lots {
  private items: Lot[] = [];
  private head = 0;
  total = 0n;

  get empty(): boolean {
    return this.head === this.items.length;
  }

  /** Appends a lot, merged into the last one when they carry the same labels and came by the same transfer. */
  push(lot: Lot): void {
    this.total += lot.amount;
    const last = this.head < this.items.length ? this.items[this.items.length - 1] : undefined;
    if (
      last &&
      last.labels === lot.labels &&
      last.via?.tx === lot.via?.tx &&
      last.via?.from === lot.via?.from
    ) {
      last.amount += lot.amount;
      return;
    }
    this.items.push(lot);
  }

  unshift(lot: Lot): void {
    this.total += lot.amount;
    if (this.head > 0) this.items[--this.head] = lot;
    else this.items.unshift(lot);
  }

  /** Up to `amount` from the front, the last lot taken split where it must be. */
  take(amount: bigint): Lot[] {
    const out: Lot[] = [];
    let left = amount;
    while (left > 0n && this.head < this.items.length) {
      const lot = this.items[this.head] as Lot;
      if (lot.amount <= left) {
        this.head++;
        out.push(lot);
        left -= lot.amount;
      } else {
        out.push({ ...lot, amount: left });
        lot.amount -= left;
        left = 0n;
      }
    }
    this.total -= amount - left;
    if (this.head > 1_024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return out;
  }
}
