/**
 * The import's USDC transfers into and out of x402's batch-settlement escrow and its deposit collectors
 * (`escrowWallets`, src/chain/chains.ts), made what the indexer makes of the same money, whatever else the file
 * holds (docs/import.md, "Channels").
 *
 * The indexer stores none of them (src/indexer/settlements.ts): the escrow's events make each channel a wallet of
 * its own, which the payer deposits into, whose claims pay the receiver and whose refunds come back
 * (src/indexer/channels.ts). Stored as plain transfers, the escrow would be one wallet of many senders instead,
 * a hub the provenance walk does not enter (or a wallet the ring screen walks through), and the money a merchant
 * sends a wallet that pays it back through a channel would come back of unknown origin. So, over the blocks an
 * import wrote:
 *
 * - a transfer of a transaction the escrow's events cover (any event of the escrow in it, in the file or the
 *   store) is dropped: the events' moves stand for it;
 * - a transfer no event covers is read as the move it is, the payer's channels being one wallet (a transfer
 *   does not say which channel a deposit went to), named after the payer (`escrowPool`): a deposit (payer to the
 *   escrow, or to a collector) goes into the payer's channels; a payout to a wallet that channel claims pay
 *   (`settle`) is dropped, the claims having paid it; any other payout (a refund, a timed withdrawal) comes back
 *   out of the payee's channels; the collectors' own transfers on to the escrow are dropped;
 * - a payment keyed by a `Claimed` event is that claim and spends the event's channel; any other claim (a payment
 *   of scheme `batch-settlement`, or `transfer_method` `channel`) spends its payer's channels when the store
 *   holds a deposit into them, else its payer's money as before (the deposit lies before the data);
 * - rows made so by an earlier import give way to the events that cover them, when those come.
 *
 * So the records, the transfers, or both give one store, in either order of import. Here rather than where the
 * screens read transfers: the store then holds one form of the money, the indexer's, for every reader (the
 * screens read the transfers in a dozen statements, the evidence and the export too), and its cost is paid once.
 */
import type { ChainRecord } from "../chain/chains.ts";
import { escrowWallets } from "../chain/chains.ts";
import type { Analytics } from "./duckdb.ts";

/**
 * A payer's channels as one wallet, when the escrow's events do not say which channel: `0x`, 24 `f`s and the
 * payer's 40 hex digits, 66 characters as a channel's id. It sorts after every address, so that it never names
 * the cluster it joins (a cluster is named by its lowest wallet, src/reports/provenance/cluster-links.ts).
 */
const POOL_PREFIX = `0x${"f".repeat(24)}`;

/** SQL: the wallet of `payer`'s channels (`payer` a lower-case address). */
export const escrowPool = (payer: string) => `('${POOL_PREFIX}' || substr(${payer}, 3))`;

/** SQL: `wallet` is a payer's channels (`escrowPool`); a channel's own id is a hash, never 24 `f`s first. */
export const isEscrowPool = (wallet: string) =>
  `(length(${wallet}) = 66 AND starts_with(${wallet}, '${POOL_PREFIX}'))`;

/** SQL: a payment is a channel's claim. */
const IS_CLAIM = `(scheme = 'batch-settlement' OR transfer_method = 'channel')`;

/**
 * Makes the escrow's transfers of blocks `span` what the indexer would make of them (see the module). Returns
 * how many transfer rows it dropped, for the import's count of the file's transfers kept.
 */
export async function settleEscrowTransfers(
  analytics: Analytics,
  chain: ChainRecord,
  span: { lo: bigint; hi: bigint },
): Promise<number> {
  const { escrow, collectors } = escrowWallets(chain.contracts);
  const list = (wallets: readonly string[]) => `(${wallets.map((w) => `'${w}'`).join(", ")})`;
  const plumbing = list([escrow, ...collectors]);
  const inSpan = `chain = '${chain.slug}' AND block_number BETWEEN ${span.lo} AND ${span.hi}`;
  const touches = `(from_address IN ${plumbing} OR to_address IN ${plumbing})`;
  const pooled = `(${isEscrowPool("from_address")} OR ${isEscrowPool("to_address")})`;
  const probe = await analytics.one<{ transfers: boolean; claims: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM transfers WHERE ${inSpan} AND (${touches} OR ${pooled})) AS transfers,
       EXISTS (SELECT 1 FROM payments WHERE ${inSpan} AND ${IS_CLAIM}
         AND (channel IS NULL OR ${isEscrowPool("channel")})) AS claims`,
  );
  // Most imports hold neither: nothing to read again.
  if (!probe?.transfers && !probe?.claims) return 0;
  const count = async () =>
    (await analytics.one<{ n: bigint }>("SELECT count(*) AS n FROM transfers"))?.n ?? 0n;
  const before = await count();
  // The transactions the escrow's events cover: a transfer of one of them is the events' plumbing.
  const covered = `tx_hash IN (SELECT tx_hash FROM channel_events WHERE ${inSpan})`;
  await analytics.run(`DELETE FROM transfers WHERE ${inSpan} AND (${touches} OR ${pooled}) AND ${covered}`);
  // A payment keyed by a Claimed event is that claim (a payment line beside the records): it spends the event's channel.
  await analytics.run(`UPDATE payments p SET channel = e.channel_id FROM channel_events e
    WHERE p.chain = '${chain.slug}' AND p.block_number BETWEEN ${span.lo} AND ${span.hi}
      AND (p.channel IS NULL OR ${isEscrowPool("p.channel")})
      AND e.chain = p.chain AND e.block_number = p.block_number AND e.tx_hash = p.tx_hash
      AND e.log_index = p.log_index AND e.event = 'claimed'`);
  // No event covers the rest. The collectors pass deposits on to the escrow (and send nothing else).
  await analytics.run(`DELETE FROM transfers WHERE ${inSpan}
    AND (from_address IN ${list(collectors)} OR (from_address IN ${plumbing} AND to_address IN ${plumbing}))`);
  // The escrow's payout to a receiver is its claims' money, which the claims paid it already.
  await analytics.run(`DELETE FROM transfers WHERE ${inSpan} AND from_address = '${escrow}'
    AND to_address IN (SELECT pay_to FROM payments WHERE chain = '${chain.slug}' AND ${IS_CLAIM})`);
  await analytics.run(`UPDATE transfers SET from_address = ${escrowPool("to_address")}
    WHERE ${inSpan} AND from_address = '${escrow}'`);
  await analytics.run(`UPDATE transfers SET to_address = ${escrowPool("from_address")}
    WHERE ${inSpan} AND to_address IN ${plumbing}`);
  // Claims spend their payer's channels wherever the store holds a deposit into them, in any block: the
  // claims and the deposits may come in different files.
  await analytics.run(`UPDATE payments SET channel = ${escrowPool("payer")}
    WHERE chain = '${chain.slug}' AND ${IS_CLAIM} AND channel IS NULL AND payer IN (
      SELECT from_address FROM transfers
      WHERE chain = '${chain.slug}' AND ${isEscrowPool("to_address")} AND to_address = ${escrowPool("from_address")})`);
  return Number(before - (await count()));
}
