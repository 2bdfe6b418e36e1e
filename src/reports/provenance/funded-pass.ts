/**
 * merchant_funded's SQL and its one pass: which of the window's payments were paid with the payee's own
 * money, by FIFO attribution (`provenance-ledger.ts`) over every transfer the data holds up to the window's end.
 *
 * Bounded cost: the pass reads only the money moves of wallets the merchants' money can reach (found by
 * one walk over the moves), in one sorted scan, so it stays linear in the transfers and payments it reads.
 *
 * Leaves, for week/aggregates.ts and the evidence:
 * - `rw_prov_reach` (wallet, tracked): the wallets the merchants' money can reach (by plain transfers and x402
 *   payments), and whether their revenue must be read (all but merchants only their own money reaches);
 * - `rw_after` (payer, pay_to, amount, scheme, day, n): of each group of the window's payments, how many were paid
 *   mostly (half or more) with the payee's own money;
 * - `rw_funding` (payer, pay_to, funded_from, own, paid, path, hops, ranges): per pair with such payments,
 *   the block of the first, the atomic units of the pair's window payments that were the payee's money and
 *   their total, the way of the first (JSON list of transfers, the merchant's first; cut past `MAX_WAY`) and
 *   how many transfers it has, and the block ranges of the flagged payments (JSON list of [first, last]).
 */
import type { Analytics } from "../../analytics/duckdb.ts";
import { SQL_SCHEME } from "../../analytics/payment-days.ts";
import type { AnyChainRecord } from "../../chain/chains.ts";
import { sqlChain } from "../scope.ts";
import { bridged, sqlTransfers } from "./bridges.ts";
import { paymentHashes, paymentRef } from "./payment-refs.ts";
import { type Hop, ProvenanceLedger, type Visible } from "./provenance-ledger.ts";
import { reach } from "./reach.ts";
import { hubReturns, RETURN_TABLES, transferKey } from "./returns.ts";

export const PROVENANCE_TABLES = [
  ...RETURN_TABLES,
  "rw_prov_moves",
  "rw_prov_ids",
  "rw_prov_reached",
  "rw_prov_reach",
  "rw_after",
  "rw_funding",
];

/** A way longer than this is shown cut in the evidence (its first and last transfers); the flag does not depend on it. */
const MAX_WAY = 64;

interface Bounds {
  start: number;
  end: number;
  first: string;
  /** The window's start and end (unix ms): where money read back out of a hub is looked for (`returns.ts`). */
  startTime: number;
  endTime: number;
}

/**
 * Runs the screen over `rw_groups` (the window's payments) and `rw_prov_opaque` (hubs not followed,
 * `clusters.ts`), with the merchants' money read back out of those hubs (`returns.ts`); see the module's
 * comment for what it leaves.
 */
export async function provenance(analytics: Analytics, chain: AnyChainRecord, bounds: Bounds): Promise<void> {
  const opaque = new Set(
    (await analytics.all<{ wallet: string }>("SELECT wallet FROM rw_prov_opaque")).map((r) => r.wallet),
  );
  const returns = await hubReturns(analytics, chain, bounds);
  await reach(analytics, chain, bounds.end);
  // Only the merchants that send money on or that money reaches: a label is only ever added by a sender
  // (tens of thousands of merchants cost more to read than the rest of the pass).
  const merchants = await walletsOf(
    analytics,
    `SELECT wallet FROM rw_merchants
     WHERE wallet IN (SELECT src FROM rw_prov_moves) OR wallet IN (SELECT wallet FROM rw_prov_reach)`,
  );
  const flagged = new Map<
    string,
    { payer: string; pay_to: string; amount: bigint; scheme: string; day: number; n: number }
  >();
  const pairs = new Map<string, PairFacts>();
  const events = await analytics.all<{
    kind: number;
    block: bigint | number;
    pos: bigint | number;
    seq: bigint | number | null;
    src: string;
    dst: string;
    amount: bigint;
    tx: string | null;
    day: number | null;
    spender: string | null;
    scheme: string | null;
  }>(eventsSql(chain, await bridged(analytics)), {
    start: bounds.start,
    end: bounds.end,
    first: bounds.first,
  });
  const ledger = new ProvenanceLedger(merchants, opaque, haircutWallets(events, merchants), returns);
  for (const e of events) {
    const block = Number(e.block);
    const amount = BigInt(e.amount);
    if (e.kind === TRANSFER)
      ledger.transfer({
        from: e.src,
        to: e.dst,
        amount,
        block,
        tx: e.tx as string,
        key: transferKey(e.tx as string, e.pos),
      });
    else if (e.kind === INCOME) ledger.income(e.dst, amount);
    else if (e.kind === BALANCE) ledger.balance(e.dst, amount);
    else {
      const tx = paymentRef(block, e.seq as bigint);
      const from = e.spender ?? e.src;
      const { own, way } = ledger.payment({ payer: e.src, from, payTo: e.dst, amount, block, tx });
      if (block <= bounds.start || e.day === null) continue;
      const key = `${e.src} ${e.dst}`;
      let pair = pairs.get(key);
      if (!pair) {
        pair = {
          payer: e.src,
          payTo: e.dst,
          own: 0n,
          paid: 0n,
          first: null,
          way: null,
          ranges: [],
          inRun: false,
          carry: 0n,
        };
        pairs.set(key, pair);
      }
      pair.paid += amount;
      pair.own += own;
      // A payment is flagged when the payee's money in it, with what the pair's earlier payments carried
      // and were not flagged for, is half of it or more: FIFO makes nearly every payment all or nothing,
      // and where the haircut spreads a little of the payee's money over many payments, the flagged
      // dollars still come to the payee's money spent, to within one payment (no share of a payment small
      // enough to pass each time). A payment with none of the payee's money is never flagged.
      pair.carry += own;
      if (own === 0n || pair.carry * 2n < amount) {
        pair.inRun = false;
        continue;
      }
      pair.carry -= amount;
      pair.first ??= block;
      pair.way ??= way;
      const last = pair.ranges[pair.ranges.length - 1];
      if (last && pair.inRun) last[1] = block;
      else pair.ranges.push([block, block]);
      pair.inRun = true;
      const scheme = e.scheme as string;
      const groupKey = `${key} ${amount} ${scheme} ${e.day}`;
      const group = flagged.get(groupKey);
      if (group) group.n++;
      else flagged.set(groupKey, { payer: e.src, pay_to: e.dst, amount, scheme, day: e.day, n: 1 });
    }
  }
  await analytics.run(
    "CREATE OR REPLACE TEMP TABLE rw_after (payer VARCHAR, pay_to VARCHAR, amount BIGINT, scheme VARCHAR, day INTEGER, n BIGINT)",
  );
  await analytics.append("rw_after", [...flagged.values()], (a, g) => {
    a.appendVarchar(g.payer);
    a.appendVarchar(g.pay_to);
    a.appendBigInt(g.amount);
    a.appendVarchar(g.scheme);
    a.appendInteger(g.day);
    a.appendBigInt(BigInt(g.n));
  });
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_funding (payer VARCHAR, pay_to VARCHAR, funded_from BIGINT, own HUGEINT,
       paid HUGEINT, path VARCHAR, hops INTEGER, ranges VARCHAR)`,
  );
  const funded = [...pairs.values()]
    .filter((p) => p.first !== null)
    .map((p) => ({ ...p, shown: wayFrom(p.way, p.payTo) }));
  const hashes = await paymentHashes(
    analytics,
    chain,
    funded.flatMap((p) => p.shown.shown.map((h) => h.tx)),
  );
  await analytics.append("rw_funding", funded, (a, p) => {
    a.appendVarchar(p.payer);
    a.appendVarchar(p.payTo);
    a.appendBigInt(BigInt(p.first as number));
    a.appendHugeInt(p.own);
    a.appendHugeInt(p.paid);
    const way = p.shown;
    for (const hop of way.shown) hop.tx = hashes.get(hop.tx) ?? hop.tx;
    a.appendVarchar(JSON.stringify(way.shown));
    a.appendInteger(way.total);
    a.appendVarchar(JSON.stringify(p.ranges));
  });
}

/**
 * The wallets attributed by haircut (`provenance-ledger.ts`): every wallet but a merchant that the data
 * saw pay out, after it first received anything, more than it received, and that it holds no balance of
 * (partial data: an exchange whose deposits are mostly elsewhere). What a wallet spent before anything
 * arrived is older money, which FIFO already puts first; a stored balance puts what the data did not see
 * in the queue itself. One pass over the events already read.
 */
function haircutWallets(
  events: readonly {
    kind: number;
    src: string | null;
    dst: string;
    amount: bigint;
    spender: string | null;
  }[],
  merchants: ReadonlySet<string>,
): Map<string, Visible> {
  const seen = new Map<string, Visible>();
  const balanced = new Set<string>();
  for (const e of events) {
    if (e.kind === BALANCE) {
      balanced.add(e.dst);
      continue;
    }
    const amount = BigInt(e.amount);
    if (e.kind !== INCOME) {
      const from = seen.get(e.kind === PAYMENT ? (e.spender ?? (e.src as string)) : (e.src as string));
      if (from) from.paid += amount;
    }
    const to = seen.get(e.dst);
    if (to) to.seen += amount;
    else seen.set(e.dst, { seen: amount, paid: 0n });
  }
  const out = new Map<string, Visible>();
  for (const [wallet, v] of seen)
    if (v.paid > v.seen && !balanced.has(wallet) && !merchants.has(wallet)) out.set(wallet, v);
  return out;
}

async function walletsOf(analytics: Analytics, sql: string): Promise<Set<string>> {
  return new Set((await analytics.all<{ wallet: string }>(sql)).map((r) => r.wallet));
}

interface PairFacts {
  payer: string;
  payTo: string;
  own: bigint;
  paid: bigint;
  first: number | null;
  way: Hop | null;
  /** The blocks of the flagged payments, as runs of the pair's payments: [first, last]. */
  ranges: [number, number][];
  /** Whether the pair's last payment was flagged, so that the next flagged one extends its run. */
  inRun: boolean;
  /** The payee's money in the pair's payments not yet flagged, less what flagged payments held beyond it. */
  carry: bigint;
}

/**
 * The transfers from `merchant` to the payer, the merchant's first: the way back, cut where the merchant
 * sent it, and how many transfers it has. A way of more than `MAX_WAY` keeps its first transfer and its
 * last ones (the page says how many are left out between them).
 */
function wayFrom(way: Hop | null, merchant: string) {
  const back: Hop[] = [];
  for (let hop = way; hop; hop = hop.prev) {
    back.push(hop);
    if (hop.from === merchant) break;
  }
  const hops = back.reverse().map((h) => ({
    from: h.from,
    to: h.to,
    block: h.block,
    amount: Number(h.amount),
    tx: h.tx,
    ...(h.hubReturn && { hub_return: { span_ms: h.hubReturn.spanMs, chance: h.hubReturn.chance } }),
  }));
  const shown =
    hops.length <= MAX_WAY ? hops : [...hops.slice(0, 1), ...hops.slice(hops.length - MAX_WAY + 1)];
  return { shown, total: hops.length };
}

const PAYMENT = 0;
const TRANSFER = 1;
const INCOME = 2;
const BALANCE = 3;

/**
 * Every money move the pass needs, in chain order: the reached wallets' x402 payments (as payer) and
 * transfers (either side; a bridge's as its message makes them, `bridges.ts`), the merchants' transfers out, what reached merchants' wallets from payers not
 * followed (summed per block: their money is of unknown origin, only its amount and time matter), and the
 * reached wallets' balances, each after its block's moves.
 */
const eventsSql = (chain: AnyChainRecord, through: boolean) => `
  WITH r AS (SELECT wallet FROM rw_prov_reach), tracked AS (SELECT wallet FROM rw_prov_reach WHERE tracked),
  -- One scan of the payments for both kinds of event, materialized so that it is read once: most of a scan is
  -- reading nine columns of every row (the matches lie in most vectors), which two semi joins paid twice (the
  -- whole statement at 10M, median of 4: 509 ms with them, 480 with this on the standard week, 585 and 485 on the
  -- funded one). Every payment is still probed against both lists; what the one scan saves is the second read.
  w AS MATERIALIZED (
    SELECT block_number, log_index, rowid AS seq, payer, pay_to, amount, block_time, channel, scheme,
      coalesce(channel, payer) IN (SELECT wallet FROM r) AS own
    FROM payments
    WHERE ${sqlChain(chain)} AND block_number <= $end
      AND (coalesce(channel, payer) IN (SELECT wallet FROM r) OR pay_to IN (SELECT wallet FROM tracked))
  )
  SELECT ${PAYMENT} AS kind, block_number AS block, log_index AS pos, seq, payer AS src, pay_to AS dst, amount, NULL AS tx,
    CASE WHEN block_number > $start THEN (block_time::DATE - $first::DATE)::INTEGER END AS day, channel AS spender,
    ${SQL_SCHEME} AS scheme
  FROM w WHERE own
  UNION ALL
  SELECT ${INCOME}, block_number, -1, NULL, NULL, pay_to, sum(amount), NULL, NULL, NULL, NULL
  FROM w WHERE NOT own
  GROUP BY block_number, pay_to
  UNION ALL
  SELECT ${TRANSFER}, block_number, log_index, NULL, from_address, to_address, amount, tx_hash, NULL, NULL, NULL
  FROM ${sqlTransfers(chain, through)}
  WHERE ${sqlChain(chain)} AND block_number <= $end AND amount > 0 AND from_address <> to_address
    AND (from_address IN (SELECT wallet FROM r) OR to_address IN (SELECT wallet FROM r) OR from_address IN (SELECT wallet FROM rw_merchants))
  ${
    through
      ? `UNION ALL
  -- The other chain's moves between a bridge's burn and its mint back, at their place here (bridge-relays.ts).
  SELECT ${TRANSFER}, block_number, log_index, NULL, from_address, to_address, amount, tx_hash, NULL, NULL, NULL
  FROM rw_bridge_relays WHERE from_address IN (SELECT wallet FROM r)`
      : ""
  }
  UNION ALL
  SELECT ${BALANCE}, block_number, 2147483647, NULL, NULL, wallet, amount, NULL, NULL, NULL, NULL FROM balances
  WHERE ${sqlChain(chain)} AND block_number <= $end AND wallet IN (SELECT wallet FROM r)
  ORDER BY block, pos, kind, seq, tx, src, dst`;
