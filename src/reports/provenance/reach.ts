import type { Analytics } from "../../analytics/duckdb.ts";
import type { AnyChainRecord } from "../../chain/chains.ts";
import { sqlChain } from "../scope.ts";
import { bridged, sqlTransfers } from "./bridges.ts";

/**
 * The wallets the merchants' money can reach, in any order of time (the pass keeps time): from the
 * merchants on, through plain transfers and the window's x402 payments, never into a wallet that is not
 * followed. A breadth-first walk over the moves, read once: linear in them, however long the paths (a
 * step per SQL statement would let a chain of many wallets cost a statement each).
 *
 * Only the payments of wallets that can have received money by transfer (or are merchants) are read as
 * moves: a wallet reached at all is reached first by a transfer, or is a merchant paid by one that was.
 * A hub's payout read as a merchant's deposit coming back (`rw_hub_returns`, `returns.ts`) is a move from
 * the depositor to the payee: the one way through a hub the walk takes.
 */
export async function reach(analytics: Analytics, chain: AnyChainRecord, end: number): Promise<void> {
  const through = await bridged(analytics);
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_prov_moves AS
     WITH t AS (
       SELECT DISTINCT from_address AS src, to_address AS dst FROM ${sqlTransfers(chain, through)}
       WHERE ${sqlChain(chain)} AND block_number <= $end AND amount > 0 AND from_address <> to_address
         AND to_address NOT IN (SELECT wallet FROM rw_prov_opaque)
         -- The walk never enters a hub it does not follow, so it never leaves one: an exchange's payouts
         -- would only make every payer it funded look reachable (2.6 s of a 10M build with funding histories).
         AND from_address NOT IN (SELECT wallet FROM rw_prov_opaque)
     )
     SELECT src, dst FROM t
     UNION
     SELECT depositor, wallet FROM rw_hub_returns
     ${through ? "UNION SELECT from_address, to_address FROM rw_bridge_relays" : ""}
     UNION
     SELECT payer, pay_to FROM rw_pair_totals
     WHERE payer <> pay_to AND (payer IN (SELECT dst FROM t) OR payer IN (SELECT wallet FROM rw_merchants)
       OR payer IN (SELECT wallet FROM rw_hub_returns))
     UNION
     -- A batch-settlement claim spends its channel's money (src/indexer/channels.ts).
     SELECT DISTINCT channel, pay_to FROM payments
     WHERE ${sqlChain(chain)} AND block_number <= $end AND channel IS NOT NULL AND payer <> pay_to`,
    { end },
  );
  // The walk runs on numbers: tens of thousands of moves read as addresses cost more to decode into strings
  // (0.75 s of a 10M build with funding histories) than the walk itself.
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_prov_ids AS
     SELECT wallet, (row_number() OVER ())::INTEGER - 1 AS id FROM (SELECT src AS wallet FROM rw_prov_moves UNION SELECT dst FROM rw_prov_moves)`,
  );
  const moves = await analytics.all<{ src: number; dst: number }>(
    `SELECT s.id AS src, d.id AS dst FROM rw_prov_moves m
     JOIN rw_prov_ids s ON s.wallet = m.src JOIN rw_prov_ids d ON d.wallet = m.dst`,
  );
  const out = new Map<number, number[]>();
  for (const { src, dst } of moves) {
    const list = out.get(src);
    if (list) list.push(dst);
    else out.set(src, [dst]);
  }
  // Only a merchant that sends anything can start a way.
  const merchants = await analytics.all<{ id: number }>(
    `SELECT id FROM rw_prov_ids WHERE wallet IN (SELECT wallet FROM rw_merchants)
       AND wallet IN (SELECT src FROM rw_prov_moves)`,
  );
  // Each wallet reached keeps the merchant whose money reached it, or MIXED once two merchants' money
  // has; a wallet changes at most twice, so the walk stays linear.
  const origin = new Map<number, number>();
  const queue: number[] = [];
  const visit = (from: number, label: number) => {
    for (const dst of out.get(from) ?? []) {
      const known = origin.get(dst);
      if (known === label || known === MIXED) continue;
      origin.set(dst, known === undefined ? label : MIXED);
      queue.push(dst);
    }
  };
  const isMerchant = new Set(merchants.map((m) => m.id));
  for (const { id } of merchants) visit(id, id);
  for (let i = 0; i < queue.length; i++) {
    const wallet = queue[i] as number;
    const label = origin.get(wallet) as number;
    // What a merchant sends carries its own label beside any it holds.
    visit(wallet, isMerchant.has(wallet) && label !== wallet ? MIXED : label);
  }
  await analytics.run("CREATE OR REPLACE TEMP TABLE rw_prov_reached (id INTEGER, tracked BOOLEAN)");
  await analytics.append("rw_prov_reached", [...origin], (a, [wallet, label]) => {
    a.appendInteger(wallet);
    // A merchant that only its own money reached sends what it would send untracked: its label alone.
    // Its revenue need not be read then (a busy merchant's is most of the payments).
    a.appendBoolean(!isMerchant.has(wallet) || label !== wallet);
  });
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_prov_reach AS
     SELECT i.wallet, r.tracked FROM rw_prov_reached r JOIN rw_prov_ids i USING (id)`,
  );
}

/** The origin of a wallet two merchants' money reached. */
const MIXED = -1;
