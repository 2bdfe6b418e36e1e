/**
 * Where the indexer stands, as the analytics database records it: the last indexed block (number, hash, time) and
 * the hashes of the blocks before it that a reorg could still replace. Reads only; `writer.ts` and
 * `reorg.ts` change them, always together with the rows they describe.
 */

import type { Analytics } from "../analytics/duckdb.ts";
import { BASE_RECORD, type ChainRecord } from "../chain/chains.ts";
import { ChannelBook } from "./channels.ts";
import { WalletBook } from "./funding.ts";

/** A block the indexer stands on: everything through it is stored. */
export interface Cursor {
  block: number;
  hash: string;
  /** Unix seconds. */
  time: number;
}

export interface IndexerState {
  /** The first block this database's indexing started at: nothing before it came from the indexer. */
  startBlock: number;
  cursor: Cursor;
}

export async function readState(
  analytics: Analytics,
  chain: ChainRecord = BASE_RECORD,
): Promise<IndexerState | undefined> {
  const row = await analytics.one<{
    start_block: bigint;
    block_number: bigint;
    block_hash: string;
    t: bigint;
  }>(
    `SELECT start_block, block_number, block_hash, epoch(block_time)::BIGINT AS t
     FROM indexer_state WHERE chain = $chain`,
    { chain: chain.slug },
  );
  if (!row) return undefined;
  return {
    startBlock: Number(row.start_block),
    cursor: { block: Number(row.block_number), hash: row.block_hash, time: Number(row.t) },
  };
}

/** The kept hashes of indexed blocks at or below `below`, newest first. */
export async function recentBlocks(
  analytics: Analytics,
  below: number,
  chain: ChainRecord = BASE_RECORD,
): Promise<Cursor[]> {
  const rows = await analytics.all<{ block_number: bigint; block_hash: string; t: bigint }>(
    `SELECT block_number, block_hash, epoch(block_time)::BIGINT AS t FROM indexer_blocks
     WHERE chain = $chain AND block_number <= $below ORDER BY block_number DESC`,
    { chain: chain.slug, below },
  );
  return rows.map((r) => ({ block: Number(r.block_number), hash: r.block_hash, time: Number(r.t) }));
}

/**
 * Where wallets appear in x402, with whether they paid there: as payer or merchant of a stored payment,
 * and as the payer or the channel of a deposit into a batch-settlement channel (a transfer to a channel
 * id, `channels.ts`): a deposit is the buyer's first x402 act, before any claim pays from it.
 */
export const APPEARANCES_SQL = `
  SELECT payer AS wallet, block_number, true AS paid FROM payments WHERE chain = $chain
  UNION ALL SELECT pay_to, block_number, false FROM payments WHERE chain = $chain
  UNION ALL SELECT from_address, block_number, true FROM transfers WHERE chain = $chain AND length(to_address) = 66
  UNION ALL SELECT to_address, block_number, false FROM transfers WHERE chain = $chain AND length(to_address) = 66`;

/** Every wallet of a stored payment (or deposit) with the first block it appears in, and whether it ever paid. */
export async function loadWalletBook(
  analytics: Analytics,
  chain: ChainRecord = BASE_RECORD,
): Promise<WalletBook> {
  const rows = await analytics.all<{ wallet: string; first_block: bigint; paid: boolean }>(
    `SELECT wallet, min(block_number) AS first_block, bool_or(paid) AS paid FROM (${APPEARANCES_SQL}) GROUP BY wallet`,
    { chain: chain.slug },
  );
  return WalletBook.from(rows);
}

/** Every stored batch-settlement channel's config. */
export async function loadChannelBook(
  analytics: Analytics,
  chain: ChainRecord = BASE_RECORD,
): Promise<ChannelBook> {
  const rows = await analytics.all<{
    channel_id: string;
    payer: string;
    payer_authorizer: string;
    receiver: string;
    receiver_authorizer: string;
    token: string;
    withdraw_delay: bigint;
    salt: string;
    block_number: bigint;
    tx_hash: string;
  }>("SELECT * EXCLUDE (chain) FROM channels WHERE chain = $chain", { chain: chain.slug });
  return new ChannelBook(
    chain.usdc.address,
    rows.map((r) => ({
      channelId: r.channel_id,
      payer: r.payer,
      payerAuthorizer: r.payer_authorizer,
      receiver: r.receiver,
      receiverAuthorizer: r.receiver_authorizer,
      token: r.token,
      withdrawDelay: Number(r.withdraw_delay),
      salt: r.salt,
      block: Number(r.block_number),
      tx: r.tx_hash,
    })),
  );
}
