/**
 * The import's batch-settlement channels: `channel` records (a channel's config) and `channel_event` records
 * (the escrow's events), stored as the indexer stores them (`channels`, `channel_events`), and turned into the
 * rows the indexer derives from them (src/indexer/channels.ts): a claim is its payer's payment to the
 * receiver, spending the channel's money (`payments.channel`); a deposit is a transfer from the payer to the
 * channel, named by its id; a refund and a finished timed withdrawal are transfers from the channel back to
 * the payer. The provenance walk follows money through a channel by those rows alone, so an imported week
 * with channels reports what the same week indexed reports (test/analytics/export.test.ts holds the two to
 * the same bytes).
 *
 * The indexer derives them in TypeScript as it reads logs; the import works in SQL over the staged file, so
 * the rules are written again here, each beside its counterpart's name: only channels of USDC count, and
 * only amounts from 1 to MAX_USDC_AMOUNT (larger ones are kept as events, as the indexer keeps them).
 */
import { MAX_USDC_AMOUNT } from "../chain/base.ts";
import type { ChainRecord } from "../chain/chains.ts";
import type { Analytics } from "./duckdb.ts";
import { sqlTime } from "./import-rules.ts";

/** The temporary tables `stageChannels` makes, for the import to drop whichever way it ends. */
export const CHANNEL_STAGING = ["import_channels", "import_channel_events"] as const;

/**
 * The file's channel configs and events, typed, beside `import_raw` (whose records the rules have passed).
 * A config or event repeated in the file with the same fields is one row.
 */
export async function stageChannels(analytics: Analytics): Promise<void> {
  await analytics.run(`CREATE OR REPLACE TEMP TABLE import_channels AS
    SELECT min(record) AS record, channel_id, payer, payer_authorizer, receiver, receiver_authorizer, token,
      withdraw_delay, salt, block_number, tx_hash
    FROM (SELECT record, lower(channel) AS channel_id, lower(payer) AS payer,
        lower(payer_authorizer) AS payer_authorizer, lower(receiver) AS receiver,
        lower(receiver_authorizer) AS receiver_authorizer, lower(token) AS token,
        withdraw_delay::BIGINT AS withdraw_delay, lower(salt) AS salt,
        -- A channel created before the data: the indexer reads its config back and stores it so.
        coalesce(block_number::BIGINT, -1) AS block_number, coalesce(lower(tx_hash), '') AS tx_hash
      FROM import_raw WHERE type = 'channel')
    GROUP BY ALL`);
  await analytics.run(`CREATE OR REPLACE TEMP TABLE import_channel_events AS
    SELECT min(record) AS record, tx_hash, log_index, block_number, block_time, event, channel_id, sender,
      receiver, amount
    FROM (SELECT record, lower(tx_hash) AS tx_hash, log_index::INTEGER AS log_index,
        block_number::BIGINT AS block_number, ${sqlTime("block_time")} AS block_time, event,
        coalesce(lower(channel), '') AS channel_id, coalesce(lower(sender), '') AS sender,
        lower(receiver) AS receiver, amount::HUGEINT AS amount
      FROM import_raw WHERE type = 'channel_event')
    GROUP BY ALL`);
}

/** The configs an event may name: the stored ones, and the file's for channels the store does not hold. */
const CONFIGS = `(SELECT channel_id, receiver FROM channels
  UNION ALL SELECT channel_id, receiver FROM import_channels
  WHERE channel_id NOT IN (SELECT channel_id FROM channels))`;

/**
 * The first staged record, in file order, that the rules of one line cannot see: a channel or an event
 * given twice with different fields, an event of a channel with no config (the indexer refuses one too), an
 * event whose receiver is not its channel's. Undefined when there is none.
 */
export async function channelProblem(
  analytics: Analytics,
): Promise<{ record: bigint; reason: string } | undefined> {
  return analytics.one<{ record: bigint; reason: string }>(`
    SELECT list(record ORDER BY record)[2] AS record,
      'channel ' || channel_id || ' appears earlier in the file with another config' AS reason
    FROM import_channels GROUP BY channel_id HAVING count(*) > 1
    UNION ALL
    SELECT list(record ORDER BY record)[2],
      'channel_event ' || tx_hash || ' log ' || log_index || ' appears earlier in the file with different fields'
    FROM import_channel_events GROUP BY tx_hash, log_index HAVING count(*) > 1
    UNION ALL
    SELECT record, 'channel ' || channel_id || ' has no "channel" record, in the file or the analytics database'
    FROM import_channel_events e
    WHERE channel_id <> '' AND channel_id NOT IN (SELECT channel_id FROM ${CONFIGS})
    UNION ALL
    SELECT record, '"receiver" must be channel ' || e.channel_id || '''s receiver, ' || c.receiver
    FROM import_channel_events e JOIN ${CONFIGS} c USING (channel_id)
    WHERE e.receiver IS NOT NULL AND e.receiver <> c.receiver
    ORDER BY record LIMIT 1`);
}

export interface ChannelsMerged {
  channels: number;
  events: number;
  /** The blocks of the claims added as payments, for the report's day groups. */
  paymentBlocks?: { lo: bigint; hi: bigint };
}

/**
 * Stores the staged channels and events, and adds the payments and transfers they make. What the store
 * already holds is kept as it is, as for every on-chain record: a stored config, an event or a row of the same
 * (tx_hash, log_index).
 */
export async function mergeChannels(analytics: Analytics, chain: ChainRecord): Promise<ChannelsMerged> {
  // The store and the file hold one chain (import-chain.ts): its slug, and its USDC for the rows a move makes.
  const slug = chain.slug;
  const usdc = chain.usdc.address;
  const count = async (table: string) =>
    Number((await analytics.one<{ n: bigint }>(`SELECT count(*) AS n FROM ${table}`))?.n ?? 0n);
  // Most files have no channels: nothing to probe the payments for.
  if ((await count("import_channels")) + (await count("import_channel_events")) === 0)
    return { channels: 0, events: 0 };
  const before = { channels: await count("channels"), events: await count("channel_events") };
  await analytics.run(`INSERT OR IGNORE INTO channels
    SELECT '${slug}', channel_id, payer, payer_authorizer, receiver, receiver_authorizer, token, withdraw_delay,
      salt, block_number, tx_hash
    FROM import_channels`);
  // Only the events new to the store make rows: a stored event's rows were made when it was stored.
  await analytics.run(`CREATE OR REPLACE TEMP TABLE import_channel_events AS
    SELECT e.* EXCLUDE (receiver), coalesce(e.receiver, c.receiver, '') AS receiver, c.payer, c.receiver AS payee,
      c.token
    FROM import_channel_events e LEFT JOIN (SELECT * FROM channels WHERE chain = '${slug}') c USING (channel_id)
    WHERE NOT EXISTS (SELECT 1 FROM channel_events s
      WHERE s.chain = '${slug}' AND s.tx_hash = e.tx_hash AND s.log_index = e.log_index)`);
  await analytics.run(`INSERT INTO channel_events
      (chain, tx_hash, log_index, block_number, block_time, event, channel_id, sender, receiver, amount)
    SELECT '${slug}', tx_hash, log_index, block_number, block_time, event, channel_id, sender, receiver, amount
    FROM import_channel_events`);
  // ChannelBook.rows: only USDC channels, and amounts a payment or transfer row can hold.
  const moves = `FROM import_channel_events WHERE token = '${usdc}' AND amount BETWEEN 1 AND ${MAX_USDC_AMOUNT}`;
  // A row is made in its event's block: only rows of the events' blocks can hold its key (zone maps skip the rest).
  const span = await analytics.one<{ lo: bigint | null; hi: bigint | null }>(
    "SELECT min(block_number) AS lo, max(block_number) AS hi FROM import_channel_events",
  );
  const fresh = (table: string) => `AND NOT EXISTS (SELECT 1 FROM ${table} t
    WHERE t.chain = '${slug}' AND t.block_number BETWEEN ${span?.lo ?? 0n} AND ${span?.hi ?? -1n}
      AND t.tx_hash = import_channel_events.tx_hash AND t.log_index = import_channel_events.log_index)`;
  const claims = await analytics.one<{ lo: bigint | null; hi: bigint | null }>(
    `SELECT min(block_number) AS lo, max(block_number) AS hi ${moves} AND event = 'claimed' ${fresh("payments")}`,
  );
  await analytics.run(`INSERT INTO payments (chain, tx_hash, log_index, block_number, block_time, facilitator,
      payer, pay_to, amount, asset, scheme, transfer_method, channel)
    SELECT '${slug}', tx_hash, log_index, block_number, block_time, sender, payer, payee, amount::BIGINT,
      '${usdc}', 'batch-settlement', 'channel', channel_id
    ${moves} AND event = 'claimed' ${fresh("payments")}`);
  await analytics.run(`INSERT INTO transfers
      (chain, tx_hash, log_index, block_number, block_time, from_address, to_address, amount)
    SELECT '${slug}', tx_hash, log_index, block_number, block_time,
      CASE event WHEN 'deposited' THEN payer ELSE channel_id END,
      CASE event WHEN 'deposited' THEN channel_id ELSE payer END, amount::BIGINT
    ${moves} AND event IN ('deposited', 'refunded', 'withdrawFinalized') ${fresh("transfers")}`);
  // A claim's receiver is paid: a merchant the service reports on, as the indexer makes it one.
  await analytics.run(`INSERT INTO merchants (address)
    SELECT DISTINCT payee ${moves} AND event = 'claimed' AND payee NOT IN (SELECT address FROM merchants)`);
  await analytics.run(`INSERT OR IGNORE INTO merchant_chains
    SELECT DISTINCT payee, '${slug}' ${moves} AND event = 'claimed'`);
  return {
    channels: (await count("channels")) - before.channels,
    events: (await count("channel_events")) - before.events,
    ...(claims?.lo != null && claims.hi != null && { paymentBlocks: { lo: claims.lo, hi: claims.hi } }),
  };
}
