/**
 * Money that comes back through a hub the provenance walk does not follow (docs/screens.md, "Money that comes
 * back through a hub"; methodology 1.8.0, issue 84). A merchant that deposits its takings at an exchange and has
 * fresh wallets withdraw about as much minutes later, to spend it at its prices, launders its own money through
 * a wallet whose money is everyone's: FIFO cannot follow it (the exchange's millions come first), and following
 * the exchange would make every customer it pays the merchant's.
 *
 * What is read instead is a coincidence in time and amount, repeated day after day. For each merchant that
 * deposits at hubs not followed (from its own wallet or one of its strong cluster), over the window and up to a
 * day before it: those hubs' payouts to wallets that pay the merchant in the window, out of any of them, not only
 * the one it deposited at (since 1.10.0: money put into one exchange comes out of another as well, an account at
 * each, and a bridge that is no CCTP takes money in at one wallet and pays it out of another; the hubs are one
 * pool). At each span of `SPANS` after a deposit
 * (deposits whose spans overlap are one run), what came out to the buyers, up to what the run deposited, is
 * compared with the same buyers' payouts from the hubs outside every span at the same hours of the day
 * (`returnNearMs` either side, every day): the share of that time from which a span holds as much, one span
 * added so that a return nobody else makes is not impossible, is the run's chance. A day counts once (its
 * likeliest run among as many deposits), and the order statistics of the days' chances give how surely the
 * returns are the merchant's; from `returnWeakChance` down to `returnStrongChance` the read weighs 0 to 1 by
 * the logarithm, as behaviour links do. Read twice: all the payouts, and the fresh ones (a wallet's first
 * money) against the fresh ones at other times; the surest reading is taken.
 *
 * What is read is the excess: the payouts' dollars in the runs' spans less what the buyers' rate at those hours
 * puts there, at most what each run deposited and saw come out, times the weight. It is carried by the payouts
 * in the spans, those to fresh wallets first (cheap to fake with a cent sent a week before, so it only orders),
 * each in proportion to what it was paid. Each share names its deposit, and the FIFO pass
 * (`provenance-ledger.ts`) holds that much of the deposit's lots back for the payout: the merchant's label, and
 * the way, pass through the hub only there, and only as much of the merchant's money as the deposit held.
 *
 * Leaves `rw_hub_returns` (depositor, wallet): the ways the pass walks through a hub (`reach.ts`).
 */
import type { Analytics } from "../../analytics/duckdb.ts";
import type { AnyChainRecord } from "../../chain/chains.ts";
import { sqlChain, sqlTimestamp } from "../scope.ts";
import { THRESHOLDS } from "../screens/thresholds.ts";
import { binomialTail } from "./behaviour.ts";

export const RETURN_TABLES = ["rw_return_depositors", "rw_return_moves", "rw_hub_returns"];

/** A transfer's key in the pass: its transaction and log index (an exchange pays many wallets in one transaction). */
export const transferKey = (tx: string, pos: number | bigint) => `${tx} ${pos}`;

/** A deposit's money read back out of the hub in one payout. */
export interface ReturnShare {
  /** The deposit's `transferKey`. */
  deposit: string;
  amount: bigint;
  /** The span (ms) at which the return was read, and the null model's chance of the deposits followed. */
  spanMs: number;
  chance: number;
}

export interface HubReturns {
  /** Per deposit (`transferKey`): how much of it comes back, which the pass holds back for the payouts. */
  deposits: Map<string, bigint>;
  /** Per payout (`transferKey`): the deposits' money in it. */
  payouts: Map<string, ReturnShare[]>;
}

export interface HubMove {
  merchant: string;
  /** The hub deposited at, or paid out of. */
  hub: string;
  /** 0: a deposit, 1: a payout to a buyer of the merchant. */
  kind: number;
  wallet: string;
  tx: string;
  pos: number;
  block: number;
  /** ms */
  at: number;
  amount: bigint;
  fresh: boolean;
}

interface Period {
  from: number;
  to: number;
}

/**
 * Reads the returns of the window ending at block `end` (times in ms: the window's start and end), over
 * `rw_merchants`, `rw_pair_totals`, `rw_strong_clusters`, `rw_inflow` and `rw_prov_opaque`: what the pass
 * holds back of each deposit and gives each payout.
 */
export async function hubReturns(
  analytics: Analytics,
  chain: AnyChainRecord,
  bounds: { end: number; startTime: number; endTime: number },
): Promise<HubReturns> {
  const window = { from: bounds.startTime, to: bounds.endTime };
  const from = window.from - THRESHOLDS.returnMaxSpanMs;
  // A merchant's wallets: its own and those of its strong cluster (a wallet it funded to do the depositing);
  // another merchant's wallet deposits its own takings.
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_return_depositors AS
     SELECT wallet AS depositor, wallet AS merchant FROM rw_merchants
     UNION
     SELECT c.wallet, m.wallet FROM rw_strong_clusters m JOIN rw_strong_clusters c USING (cluster)
     WHERE m.wallet IN (SELECT wallet FROM rw_merchants) AND c.wallet <> m.wallet
       AND c.wallet NOT IN (SELECT wallet FROM rw_merchants)`,
  );
  // Only the hubs' transfers of the period, and of them only the merchants' deposits and the payouts to the
  // buyers of merchants that deposit: a few merchants' rows, never every buyer an exchange pays.
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_return_moves AS
     WITH t AS MATERIALIZED (
       SELECT tx_hash, log_index, block_number, epoch_ms(block_time) AS at_ms, from_address, to_address, amount
       FROM transfers
       WHERE ${sqlChain(chain)} AND block_number <= $end AND block_time >= ${sqlTimestamp(from)}
         AND amount > 0 AND from_address <> to_address
         AND (to_address IN (SELECT wallet FROM rw_prov_opaque) OR from_address IN (SELECT wallet FROM rw_prov_opaque))
     ), deposits AS (
       SELECT d.merchant, t.to_address AS hub, t.from_address AS wallet, t.* FROM t
       JOIN rw_return_depositors d ON d.depositor = t.from_address
       WHERE t.to_address IN (SELECT wallet FROM rw_prov_opaque)
     ), merchants AS (
       SELECT DISTINCT merchant FROM deposits
     ), payouts AS (
       -- Out of any hub not followed: money into one exchange comes out of another as well (an account at
       -- each), and a bridge that is no CCTP takes it in at one wallet and pays it out of another.
       SELECT p.merchant, t.from_address AS hub, t.to_address AS wallet, t.* FROM t
       JOIN rw_pair_totals q ON q.payer = t.to_address JOIN merchants p ON p.merchant = q.pay_to
       ANTI JOIN rw_return_depositors d ON d.depositor = t.to_address AND d.merchant = p.merchant
       WHERE t.from_address IN (SELECT wallet FROM rw_prov_opaque)
     ), firsts AS (
       SELECT wallet, min(first_at) AS first_at FROM rw_inflow
       WHERE wallet IN (SELECT wallet FROM payouts) GROUP BY wallet
     )
     SELECT merchant, hub, 0 AS kind, wallet, tx_hash, log_index, block_number, at_ms, amount, false AS fresh
     FROM deposits
     UNION ALL
     SELECT merchant, hub, 1, wallet, tx_hash, log_index, block_number, at_ms, amount,
       block_number * 1000000 + log_index <= coalesce(f.first_at, 0) AS fresh
     FROM payouts LEFT JOIN firsts f USING (wallet)`,
    { end: bounds.end },
  );
  const rows = await analytics.all<{
    merchant: string;
    hub: string;
    kind: number;
    wallet: string;
    tx_hash: string;
    log_index: number;
    block_number: bigint | number;
    at_ms: bigint | number;
    amount: bigint | number;
    fresh: boolean;
  }>(
    `SELECT * FROM rw_return_moves
     SEMI JOIN (SELECT DISTINCT merchant FROM rw_return_moves WHERE kind = 1) USING (merchant)
     ORDER BY merchant, block_number, log_index, kind`,
  );
  const byMerchant = new Map<string, HubMove[]>();
  for (const r of rows) {
    const key = r.merchant;
    const move: HubMove = {
      merchant: r.merchant,
      hub: r.hub,
      kind: Number(r.kind),
      wallet: r.wallet,
      tx: r.tx_hash,
      pos: Number(r.log_index),
      block: Number(r.block_number),
      at: Number(r.at_ms),
      amount: BigInt(r.amount),
      fresh: r.fresh,
    };
    const list = byMerchant.get(key);
    if (list) list.push(move);
    else byMerchant.set(key, [move]);
  }
  const out: HubReturns = { deposits: new Map(), payouts: new Map() };
  const ways: { depositor: string; wallet: string }[] = [];
  for (const moves of byMerchant.values()) {
    for (const share of readPair(moves, window)) {
      const d = share.deposit;
      out.deposits.set(
        transferKey(d.tx, d.pos),
        (out.deposits.get(transferKey(d.tx, d.pos)) ?? 0n) + share.amount,
      );
      const key = transferKey(share.payout.tx, share.payout.pos);
      const list = out.payouts.get(key) ?? [];
      list.push({
        deposit: transferKey(d.tx, d.pos),
        amount: share.amount,
        spanMs: share.spanMs,
        chance: share.chance,
      });
      out.payouts.set(key, list);
      ways.push({ depositor: d.wallet, wallet: share.payout.wallet });
    }
  }
  await analytics.run("CREATE OR REPLACE TEMP TABLE rw_hub_returns (depositor VARCHAR, wallet VARCHAR)");
  await analytics.append("rw_hub_returns", ways, (a, w) => {
    a.appendVarchar(w.depositor);
    a.appendVarchar(w.wallet);
  });
  return out;
}

interface Share {
  deposit: HubMove;
  payout: HubMove;
  amount: bigint;
  spanMs: number;
  chance: number;
}

/** A run of deposits whose spans overlap, read as one, and the payouts in its span. */
interface Run {
  deposits: HubMove[];
  from: number;
  to: number;
  payouts: HubMove[];
}

interface Reading {
  spanMs: number;
  chance: number;
  /** Atomic units read as the deposits' money. */
  read: bigint;
  /** The runs read (their payouts carry it). */
  runs: Run[];
}

/** The spans a return is read at: from `returnMinSpanMs` to `returnMaxSpanMs`, each `returnSpanStep` times the last. */
export const SPANS: readonly number[] = (() => {
  const t = THRESHOLDS;
  const spans: number[] = [];
  for (let s = t.returnMinSpanMs; s < t.returnMaxSpanMs; s *= t.returnSpanStep) spans.push(Math.round(s));
  return [...spans, t.returnMaxSpanMs];
})();

/**
 * One merchant's deposits at hubs not followed and their payouts to its buyers (chain order), over the window and
 * the longest span before it: the shares read. Each span reads the window and one span before it (a deposit
 * made that long before the window can come back in it; one made earlier has had its day).
 */
export function readPair(moves: readonly HubMove[], window: Period): Share[] {
  let best: Reading | null = null;
  // Read twice: all the payouts, and those that were their wallet's first money (fresh) against the fresh
  // payouts at other times. A customer's first withdrawal happens once; a farm's wallets are all new.
  const fresh = moves.filter((m) => m.kind === 0 || m.fresh);
  for (const read of [moves, fresh])
    for (const spanMs of SPANS) {
      const from = window.from - spanMs;
      const reading = readSpan(
        read.filter((m) => m.at >= from),
        { from, to: window.to },
        spanMs,
      );
      // The surest reading: a longer span than the returns need holds more of the customers' own
      // withdrawals, which its excess would hand them. At equal chance, the one that reads most.
      if (
        reading &&
        (!best ||
          reading.chance < best.chance ||
          (reading.chance === best.chance && reading.read > best.read))
      )
        best = reading;
    }
  return best ? carry(best) : [];
}

/** What one span reads: null where the deposits' spans leave too little time for a base rate. */
function readSpan(moves: readonly HubMove[], period: Period, spanMs: number): Reading | null {
  const runs: Run[] = [];
  const out: HubMove[] = [];
  let open: Run | null = null;
  for (const m of moves) {
    if (open && m.at > open.to) open = null;
    if (m.kind === 0) {
      if (open) {
        open.deposits.push(m);
        open.to = m.at + spanMs;
      } else {
        open = { deposits: [m], from: m.at, to: m.at + spanMs, payouts: [] };
        runs.push(open);
      }
    } else if (open) open.payouts.push(m);
    else out.push(m);
  }
  const length = period.to - period.from;
  let spanned = 0;
  for (const r of runs) spanned += Math.max(0, Math.min(r.to, period.to) - Math.max(r.from, period.from));
  if (spanned > THRESHOLDS.returnMaxSpanShare * length) return null;
  const base = new BaseRate(out, runs, spanMs, period);
  // Each run's chance: of the time outside the spans at the same hours of the day, how much a span starting
  // there holds as many of the buyers' dollars from the hub as came out after the run's deposits (at most
  // what they held), one span added. A run longer than the hours it is compared with (deposits so close that
  // their spans make one) is not read, nor one with no such time to compare.
  let excess = 0;
  let cap = 0n;
  const days = new Map<number, { least: number; runs: number }>();
  const read: Run[] = [];
  for (const r of runs) {
    const from = Math.max(r.from, period.from);
    const to = Math.min(r.to, period.to);
    if (to - from > THRESHOLDS.returnNearMs) continue;
    let held = 0n;
    let came = 0n;
    for (const d of r.deposits) held += d.amount;
    for (const p of r.payouts) came += p.amount;
    const back = least(held, came);
    const near = base.around(from, to, Number(back));
    if (near.time < spanMs) continue;
    const chance = back > 0n ? Math.min(1, (near.above + spanMs) / near.time) : 1;
    const day = Math.floor(r.from / DAY_MS);
    const seen = days.get(day) ?? { least: 1, runs: 0 };
    days.set(day, { least: Math.min(seen.least, chance), runs: seen.runs + 1 });
    // The excess over the base rate: what came out less what the buyers' rate at those hours puts there.
    excess += Number(came) - (near.dollars / near.time) * (to - from);
    cap += back;
    read.push(r);
  }
  // Repetition counts day by day: a day's chance is that of its likeliest return among as many deposits.
  const chances = [...days.values()].map((d) => 1 - (1 - d.least) ** d.runs);
  const chance = repeated(chances);
  const weight = returnWeight(chance);
  if (weight <= 0 || excess <= 0) return null;
  return { spanMs, chance, read: BigInt(Math.floor(weight * Math.min(excess, Number(cap)))), runs: read };
}

/**
 * The chance that independent runs would be followed as these were (`chances`: each run's own, 1 where nothing
 * followed): of j runs at most the j-th smallest chance, the binomial tail, at the j that makes it least, times
 * the number of runs (the j is chosen after seeing them).
 */
export function repeated(chances: readonly number[]): number {
  if (chances.length === 0) return 1;
  const sorted = [...chances].sort((a, b) => a - b);
  let least = 1;
  sorted.forEach((p, i) => {
    if (p < 1) least = Math.min(least, binomialTail(sorted.length, i + 1, p));
  });
  return Math.min(1, least * sorted.length);
}

const DAY_MS = 86_400_000;

/**
 * The buyers' payouts from the hubs at other times (outside every run's span), as a level function: for a
 * time t, the dollars a span starting at t holds (a sweep over where each payout enters and leaves the span),
 * cut where the runs' spans are. Read at the hours of the day around a run's (`returnNearMs` either side) on
 * every day of the period: a merchant that deposits at the hours its buyers withdraw is compared with those
 * hours, not with the night.
 */
class BaseRate {
  /** Pieces of the time outside the spans where a span starting there holds `sum` > 0 of the dollars, in order. */
  private readonly pieces: { from: number; to: number; sum: number }[] = [];
  private readonly spans: { from: number; to: number }[];
  private readonly times: number[];
  /** Dollars of the payouts before each, in time order. */
  private readonly before: number[] = [0];

  constructor(
    out: readonly HubMove[],
    runs: readonly Run[],
    spanMs: number,
    private readonly period: Period,
  ) {
    this.spans = runs.map((r) => ({ from: Math.max(r.from, period.from), to: Math.min(r.to, period.to) }));
    this.times = out.map((p) => p.at);
    for (const p of out) this.before.push((this.before.at(-1) as number) + Number(p.amount));
    const edges: [number, number][] = [];
    for (const p of out) {
      const amount = Number(p.amount);
      edges.push([Math.max(p.at - spanMs, period.from), amount], [Math.min(p.at, period.to), -amount]);
    }
    edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let sum = 0;
    let k = 0;
    for (let i = 0; i < edges.length; i++) {
      const [at, change] = edges[i] as [number, number];
      sum += change;
      const next = edges[i + 1]?.[0] ?? at;
      if (next <= at || sum <= 0) continue;
      // Cut the spans out of [at, next).
      let from = at;
      while (k < this.spans.length && (this.spans[k] as { to: number }).to <= from) k++;
      for (let j = k; j < this.spans.length && from < next; j++) {
        const span = this.spans[j] as { from: number; to: number };
        if (span.from >= next) break;
        if (span.from > from) this.pieces.push({ from, to: span.from, sum });
        from = Math.max(from, span.to);
      }
      if (from < next) this.pieces.push({ from, to: next, sum });
    }
  }

  /**
   * Around the hours of the day of [from, to] (`returnNearMs` either side) on every day of the period: the time
   * outside the spans, the buyers' dollars paid out in it, and the time from which a span holds at least `x`.
   */
  around(from: number, to: number, x: number): { time: number; dollars: number; above: number } {
    const near = THRESHOLDS.returnNearMs;
    const { from: start, to: end } = this.period;
    let time = 0;
    let dollars = 0;
    let above = 0;
    const first = from - Math.ceil((from - start + near) / DAY_MS) * DAY_MS;
    for (let day = first; day - near < end; day += DAY_MS) {
      const lo = Math.max(day - near, start);
      const hi = Math.min(day + (to - from) + near, end);
      if (hi <= lo) continue;
      time += hi - lo;
      for (const span of this.spans) time -= Math.max(0, Math.min(span.to, hi) - Math.max(span.from, lo));
      dollars +=
        (this.before[lowerBound(this.times, hi)] as number) -
        (this.before[lowerBound(this.times, lo)] as number);
      for (let i = lowerBoundBy(this.pieces, lo); i < this.pieces.length; i++) {
        const piece = this.pieces[i] as { from: number; to: number; sum: number };
        if (piece.from >= hi) break;
        if (piece.sum >= x) above += Math.min(piece.to, hi) - Math.max(piece.from, lo);
      }
    }
    return { time, dollars, above };
  }
}

/** The first index whose time is at or after `t` (times ascending). */
function lowerBound(times: readonly number[], t: number): number {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((times[mid] as number) < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first piece that ends after `t` (pieces in order, disjoint). */
function lowerBoundBy(pieces: readonly { to: number }[], t: number): number {
  let lo = 0;
  let hi = pieces.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((pieces[mid] as { to: number }).to <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The weight of a read from its chance: 0 at `returnWeakChance`, 1 at `returnStrongChance`, by the logarithm. */
export function returnWeight(chance: number): number {
  const t = THRESHOLDS;
  if (chance <= t.returnStrongChance) return 1;
  if (chance >= t.returnWeakChance) return 0;
  return Math.log(t.returnWeakChance / chance) / Math.log(t.returnWeakChance / t.returnStrongChance);
}

/**
 * Shares `reading.read` out over the payouts in the spans: those to fresh wallets first, then the others, each
 * group in proportion to what it was paid where the read does not cover it all (nothing in the timing says
 * which of a span's payouts came back: the soonest is the farm's when the delay is short, a customer's when
 * it is long). Each payout takes its share from the deposits of its run before it, earliest first, of what
 * they have left.
 */
function carry(reading: Reading): Share[] {
  const groups: { run: Run; payout: HubMove }[][] = [[], []];
  for (const run of reading.runs)
    for (const payout of run.payouts)
      (groups[payout.fresh ? 0 : 1] as { run: Run; payout: HubMove }[]).push({ run, payout });
  const left = new Map<HubMove, bigint>();
  let rest = reading.read;
  const shares: Share[] = [];
  for (const group of groups) {
    let total = 0n;
    for (const { payout } of group) total += payout.amount;
    if (rest <= 0n || total === 0n) continue;
    const covered = least(rest, total);
    for (const { run, payout } of group) {
      let want = (payout.amount * covered) / total;
      for (const d of run.deposits) {
        if (want <= 0n || !before(d, payout)) break;
        const has = left.get(d) ?? d.amount;
        const take = least(has, want);
        if (take <= 0n) continue;
        left.set(d, has - take);
        want -= take;
        rest -= take;
        shares.push({ deposit: d, payout, amount: take, spanMs: reading.spanMs, chance: reading.chance });
      }
    }
  }
  return shares;
}

/** The smaller of two amounts (Math.min takes no bigint). */
const least = (a: bigint, b: bigint): bigint => (a < b ? a : b);

/** The deposit came before the payout in chain order. */
const before = (d: HubMove, p: HubMove) => d.block < p.block || (d.block === p.block && d.pos < p.pos);
