/**
 * Money through a bridge (docs/screens.md, "Money through a bridge"; methodology 1.9.0, issue 84). A CCTP burn on
 * one chain and its mint on another are one message, named by its source domain and nonce, and both sides' logs
 * name the depositor (`sender`) and the wallet minted to (`recipient`): Circle attests the message, so who sent
 * the money is as sure as a transfer's sender. The store keeps each chain's side as `bridge_messages`
 * (src/analytics/migrations.ts, docs/import.md). Where a chain's transfers hold a bridge's move, the screens read
 * it as the transfer the message makes it:
 *
 * - a **mint** (0x0 to the recipient) is money from the burner, on the chain it burned on: the burn's row where
 *   the store holds it, else the sender the mint's own message names;
 * - a **burn** (the depositor's USDC to the minter) is money to the recipient on the destination chain.
 *
 * A wallet of another chain is named `address@slug` (`address@cctp-N` for a domain the project does not read):
 * the same key holds both, but what it holds on each chain is apart. So a merchant's takings burned to a wallet on
 * Arbitrum and burned back from it to fresh wallets on Base are the merchant's money through that wallet, first in
 * first out, and wallets minted by one burner are funded by it. Of a burner on a chain the store holds, what it
 * received there before the window's end is read too (`rw_bridge_inflow`, with that chain's listed hubs): a farm
 * withdrawn from an exchange on Polygon in a burst and bridged to Base is the same burst on Base.
 *
 * And the other chain's transfers on the ways from this chain's burns to the burners of its mints, through wallets
 * that are no hub there (`bridge-relays.ts`, 1.10.0): a wallet that gets the merchant's money on Arbitrum and pays
 * it to a second wallet there before that one burns it back is followed. What is not read: the other chain's
 * other moves, and a mint whose message the store lacks stays money of unknown origin. Without messages nothing
 * changes: the statements read `transfers` as before.
 */
import type { Analytics } from "../../analytics/duckdb.ts";
import { type AnyChainRecord, chains } from "../../chain/chains.ts";
import { hubsOf } from "../../chain/hubs.ts";
import { sqlChain, sqlSlug, sqlTimestamp } from "../scope.ts";
import { bridgeRelays, RELAY_TABLES } from "./bridge-relays.ts";

export const BRIDGE_TABLES = ["rw_bridge_moves", "rw_bridge_inflow", "rw_bridge_hubs", ...RELAY_TABLES];

const ZERO = "0x0000000000000000000000000000000000000000";
const ZERO_NONCE = `0x${"0".repeat(64)}`;

/** SQL: the chain slug of a CCTP domain expression, or `cctp-N` for one the project does not read. */
function sqlDomainSlug(domain: string): string {
  const known = chains.list.filter((c) => c.cctpDomain !== undefined);
  const cases = known.map((c) => `WHEN ${c.cctpDomain} THEN '${c.slug}'`).join(" ");
  return `(CASE ${domain} ${cases} ELSE 'cctp-' || ${domain}::VARCHAR END)`;
}

/**
 * Builds `rw_bridge_moves` (tx_hash, log_index, from_address, to_address): the chain's transfers a bridge message
 * names the other side of, as the message makes them; `rw_bridge_inflow` (the same columns as `rw_inflow`): what
 * the burners of the chain's mints received on their own chains up to `endTime` (unix ms); and `rw_bridge_hubs`
 * (wallet, label, source): those chains' listed hubs (the repository's and the operator's labels), under the same
 * names. Returns whether any transfer is
 * read through a bridge.
 */
export async function bridgeMoves(
  analytics: Analytics,
  chain: AnyChainRecord,
  end: number,
  endTime: number,
): Promise<boolean> {
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_bridge_moves
       (tx_hash VARCHAR, log_index INTEGER, from_address VARCHAR, to_address VARCHAR)`,
  );
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_bridge_inflow (wallet VARCHAR, sender VARCHAR, amount HUGEINT,
       funds HUGEINT, first_at BIGINT, first_time TIMESTAMP)`,
  );
  await analytics.run(
    "CREATE OR REPLACE TEMP TABLE rw_bridge_hubs (wallet VARCHAR, label VARCHAR, source VARCHAR)",
  );
  // CCTP is EVM's here: Solana's (domain 5) is not read yet.
  if (!("cctpDomain" in chain) || chain.cctpDomain === undefined) return false;
  const any = await analytics.one(
    `SELECT 1 FROM bridge_messages WHERE ${sqlChain(chain)} AND block_number <= $end LIMIT 1`,
    { end },
  );
  if (!any) return false;
  const here = sqlSlug(chain);
  await analytics.run(
    `INSERT INTO rw_bridge_moves
     WITH own AS (
       SELECT * FROM bridge_messages WHERE ${sqlChain(chain)} AND block_number <= $end
     ), burns AS (
       -- Each message's burn, wherever the store holds it: its depositor is the mint's sender. A v2 burn as
       -- its own chain logs it has the zero nonce (Circle's attesters give it one later): it names no message.
       SELECT source_domain, nonce, any_value(sender) AS sender FROM bridge_messages
       WHERE side = 'burn' AND nonce <> '${ZERO_NONCE}'
       GROUP BY ALL
     ), mints AS (
       SELECT m.tx_hash, m.recipient, m.amount,
         coalesce(b.sender, m.sender) || '@' || ${sqlDomainSlug("m.source_domain")} AS burner
       FROM own m LEFT JOIN burns b USING (source_domain, nonce)
       WHERE m.side = 'mint' AND m.destination_domain = ${chain.cctpDomain}
     ), out AS (
       SELECT tx_hash, sender, amount, recipient || '@' || ${sqlDomainSlug("destination_domain")} AS recipient
       FROM own WHERE side = 'burn' AND source_domain = ${chain.cctpDomain}
     )
     -- One transfer each: the mint's from 0x0 to its recipient, the burn's from its depositor, of the amount.
     SELECT t.tx_hash, min(t.log_index), any_value(m.burner), t.to_address
     FROM transfers t JOIN mints m ON m.tx_hash = t.tx_hash AND m.recipient = t.to_address AND m.amount = t.amount
     WHERE t.chain = ${here} AND t.from_address = '${ZERO}' AND t.block_number <= $end
     GROUP BY t.tx_hash, t.to_address, m.recipient, m.amount
     UNION ALL
     SELECT t.tx_hash, min(t.log_index), t.from_address, any_value(o.recipient)
     FROM transfers t JOIN out o ON o.tx_hash = t.tx_hash AND o.sender = t.from_address AND o.amount = t.amount
     WHERE t.chain = ${here} AND t.block_number <= $end
     GROUP BY t.tx_hash, t.from_address, o.amount`,
    { end },
  );
  const moved = await analytics.one("SELECT 1 FROM rw_bridge_moves LIMIT 1");
  if (!moved) return false;
  // The burners' own inflows on the chains the store holds, and those chains' listed hubs, by the same names.
  const others = chains.list.filter((c) => c.slug !== chain.slug);
  await analytics.append(
    "rw_bridge_hubs",
    others.flatMap((c) => hubsOf(c).map((h) => ({ ...h, wallet: `${h.address.toLowerCase()}@${c.slug}` }))),
    (a, h) => {
      a.appendVarchar(h.wallet);
      a.appendVarchar(h.label);
      a.appendVarchar(h.source);
    },
  );
  // The operator's labels win over the repository's, as on the chain itself (hubs.ts).
  await analytics.run(
    `INSERT INTO rw_bridge_hubs SELECT address || '@' || chain, label, source FROM hub_labels WHERE chain <> ${here}
       AND address || '@' || chain NOT IN (SELECT wallet FROM rw_bridge_hubs)`,
  );
  await analytics.run(
    `INSERT INTO rw_bridge_inflow
     WITH burners AS (
       SELECT DISTINCT split_part(from_address, '@', 1) AS wallet, split_part(from_address, '@', 2) AS chain
       FROM rw_bridge_moves WHERE from_address LIKE '%@%'
     )
     SELECT t.to_address || '@' || t.chain, t.from_address || '@' || t.chain, sum(t.amount), sum(t.amount),
       min(t.block_number * 1000000 + t.log_index), min(t.block_time)
     FROM transfers t JOIN burners b ON b.wallet = t.to_address AND b.chain = t.chain
     WHERE t.chain <> ${here} AND t.block_time <= ${sqlTimestamp(endTime)} AND t.amount > 0
       AND t.from_address <> t.to_address AND t.from_address <> '${ZERO}'
     GROUP BY ALL`,
  );
  await bridgeRelays(analytics, chain, endTime);
  return true;
}

/** Whether the window's build reads transfers through bridges (`bridgeMoves` found any). */
export async function bridged(analytics: Analytics): Promise<boolean> {
  return (await analytics.one("SELECT 1 FROM rw_bridge_moves LIMIT 1")) !== undefined;
}

/**
 * SQL: what a statement reads as the chain's transfers, `FROM ${sqlTransfers(...)} WHERE ${sqlChain(chain)}`: the
 * table itself without bridge moves (the statement's plan as before), else its rows with each bridge's move read
 * as the message makes it.
 */
export function sqlTransfers(chain: AnyChainRecord, through: boolean): string {
  if (!through) return "transfers";
  return `(SELECT t.* REPLACE (coalesce(b.from_address, t.from_address) AS from_address,
      coalesce(b.to_address, t.to_address) AS to_address)
    FROM transfers t LEFT JOIN rw_bridge_moves b ON b.tx_hash = t.tx_hash AND b.log_index = t.log_index
    WHERE ${sqlChain(chain, "t.")})`;
}
